"""Who asked for a cluster-agent certificate, and whether that requester may get it.

A CSR's ``spec.username`` and ``spec.groups`` are set by the API server from the
credential that created it, so they cannot be forged. Two kinds of requester are
legitimate, as upstream decides:

* a **join** comes from a bootstrap identity: a bootstrap token (``system:bootstrap:<id>``)
  or the bootstrap service account, in a bootstrap group (clusteradm accept's rule);
* a **renewal** comes from the cluster's own agent asking for its own name: the
  requester is the CSR's CN (upstream's renewal approver) and is in that cluster's group.

A cluster's own identity therefore never gets a certificate for another cluster, nor
for another agent name: every other combination is refused, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.api import shapes
from pyocm.registration.hub import rbac

BOOTSTRAP_USER_PREFIX = "system:bootstrap:"
#: Upstream's bootstrap service account, and its name before 2025 (earlier pyocm hubs').
BOOTSTRAP_SERVICE_ACCOUNTS = frozenset(
    f"system:serviceaccount:{rbac.BOOTSTRAP_NAMESPACE}:{name}"
    for name in (rbac.BOOTSTRAP_SERVICE_ACCOUNT, rbac.LEGACY_BOOTSTRAP_SERVICE_ACCOUNT)
)
BOOTSTRAP_GROUPS = frozenset(
    {rbac.BOOTSTRAP_GROUP, f"system:serviceaccounts:{rbac.BOOTSTRAP_NAMESPACE}"}
)
BOOTSTRAP_HINT = (
    f"a join is requested with the bootstrap credential ({BOOTSTRAP_USER_PREFIX}<token id> "
    f"in group {rbac.BOOTSTRAP_GROUP}, or the bootstrap service account)"
)


@dataclass(frozen=True)
class Requester:
    username: str
    groups: frozenset[str]

    @classmethod
    def of(cls, csr: Mapping[str, Any]) -> Requester:
        """The requester of a CSR as cached or listed (not read through a schema)."""
        spec = shapes.mapping(csr.get("spec"))
        return cls(str(spec.get("username") or ""), frozenset(spec.get("groups") or ()))

    @property
    def bootstrap(self) -> bool:
        """A bootstrap token or service account, in a bootstrap group (clusteradm's test)."""
        named = (
            self.username.startswith(BOOTSTRAP_USER_PREFIX)
            or self.username in BOOTSTRAP_SERVICE_ACCOUNTS
        )
        return named and not self.groups.isdisjoint(BOOTSTRAP_GROUPS)

    @property
    def cluster_agent(self) -> bool:
        """Whether the requester holds some cluster agent's identity (the managed-clusters
        group shares the prefix)."""
        return self.username.startswith(rbac.SUBJECT_PREFIX) or any(
            group.startswith(rbac.SUBJECT_PREFIX) for group in self.groups
        )


def join_refusal(csr: Mapping[str, Any]) -> str | None:
    """Why ``csr`` must not be approved as a join, or None when it may."""
    requester = Requester.of(csr)
    if requester.bootstrap:
        return None
    return (
        f"CSR {csr['metadata']['name']} was requested by {requester.username or '<nobody>'}, "
        f"not a bootstrap identity: {BOOTSTRAP_HINT}; a cluster's own identity only renews "
        "its own certificate"
    )


def renewal_refusal(requester: Requester, *, cluster: str, common_name: str) -> str | None:
    """Why a CSR by ``requester`` for ``common_name`` of ``cluster`` is no renewal, or None."""
    if requester.username != common_name:
        return (
            f"requested by {requester.username}, not by the agent it names ({common_name}): "
            "an agent renews only its own certificate"
        )
    if f"{rbac.SUBJECT_PREFIX}{cluster}" not in requester.groups:
        return (
            f"requested by {requester.username}, who is not in cluster {cluster}'s group "
            f"{rbac.SUBJECT_PREFIX}{cluster}"
        )
    return None
