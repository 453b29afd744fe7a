"""The hub's CSR approvers: a chain where each approver decides the CSRs that are its own.

Today's cluster-agent rules (csrapproval.py) are one approver; an add-on plugs in its
own (upstream addon-framework's registration approves an add-on agent's CSRs, e.g. for
its ``KubeClientSignerConfigurations``). Each approver in turn either passes a CSR on
(None: not mine) or ends the chain with a :class:`Verdict`, so no later approver can
approve what an earlier one declined.

A test add-on's approver, for example::

    class HelloApprover:
        async def review(self, csr: dict[str, Any]) -> Verdict | None:
            if labels(csr).get(ADDON_NAME_LABEL) != "hello":
                return None
            return approve("AddonCSRAutoApproved", "Auto approving addon agent certificate.")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

#: The condition upstream's approvers write, whoever's rules approved.
APPROVE_REASON = "AutoApprovedByHubCSRApprovingController"


@dataclass(frozen=True)
class Verdict:
    """An approver's decision: approve (with the event's reason and the condition's
    message) or decline (the approver logs why, if it should)."""

    approved: bool
    event_reason: str = ""
    message: str = ""


#: Decline: the CSR is this approver's, and it is not approved (now).
DECLINE = Verdict(approved=False)


def approve(event_reason: str, message: str) -> Verdict:
    return Verdict(approved=True, event_reason=event_reason, message=message)


class CsrApprover(Protocol):
    async def review(self, csr: dict[str, Any]) -> Verdict | None:
        """A pending CSR's verdict, or None when the CSR is not this approver's.

        ``csr`` is the CertificateSigningRequest as cached, not read through a schema:
        an approver reads its fields defensively (``pyocm.api.shapes``)."""
        ...
