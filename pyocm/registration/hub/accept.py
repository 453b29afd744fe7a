"""Accepting a cluster as ``clusteradm accept`` does: set ``hubAcceptsClient`` and approve
its agent's join CSRs (after the hub's own subject checks).

As clusteradm, only CSRs a bootstrap identity requested are approved (requesters.py):
another cluster's agent can create a CSR labelled and named for this cluster, and must
not get its certificate that way. Pending CSRs for different agent names are not
approved at all: two agents are then asking for one cluster's name.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.certificates_v1 import CertificateSigningRequest
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.registration.hub.csrapproval import checked_subject
from pyocm.registration.hub.requesters import join_refusal
from pyocm.runtime.client import Api

#: The longest an accept waits for the hub to grant the cluster's access before approving.
GRANT_WAIT = 10.0


class AcceptError(RuntimeError):
    """The cluster cannot be accepted yet; the message says why."""


@dataclass
class _Requests:
    """A cluster's valid join CSRs, sorted by what accepting does with them."""

    #: Pending, from a bootstrap identity: (CSR, the agent name it asks for).
    approvable: list[tuple[CertificateSigningRequest, str]] = field(default_factory=list)
    #: Pending, from anyone else: why each is not approved.
    refusals: list[str] = field(default_factory=list)
    decided: int = 0

    def rivals(self) -> str | None:
        """The refusal when the approvable CSRs ask for different agent names."""
        if len({common_name for _, common_name in self.approvable}) < 2:
            return None
        listed = ", ".join(
            f"{csr['metadata']['name']} (CN {common_name}, requested by "
            f"{csr['spec'].get('username')})"
            for csr, common_name in self.approvable
        )
        return (
            f"pending CSRs of different agents ask for this cluster: {listed}; none approved, "
            "as another agent may be using this cluster's name. Deny the ones you do not "
            "trust (kubectl certificate deny <name>) and accept again"
        )


async def accept_cluster(
    api: Api,
    name: str,
    *,
    wait: bool = False,
    timeout: float = 60.0,
    grant_wait: float = GRANT_WAIT,
    on_refusal: Callable[[str], None] | None = None,
    on_request: Callable[[list[str]], None] | None = None,
) -> list[str]:
    """Set ``hubAcceptsClient`` and approve ``name``'s valid pending CSRs; return those approved.

    ``on_refusal`` hears why each pending CSR that is not a join was left alone;
    ``on_request`` hears the names of the CSRs to approve once they are found (the end of
    a ``wait``; what follows can still take up to ``grant_wait``)."""
    deadline = asyncio.get_running_loop().time() + timeout
    requests = await _wait_for_requests(api, name, wait=wait, timeout=timeout, deadline=deadline)
    if on_request is not None:
        on_request([csr["metadata"]["name"] for csr, _ in requests.approvable])
    if (rivals := requests.rivals()) is not None:
        raise AcceptError(f"cluster {name}: {rivals}")
    for refusal in requests.refusals:
        if on_refusal is not None:
            on_refusal(f"cluster {name}: {refusal}")
    # Accept first, and approve once the hub says the cluster is accepted (its RBAC is in
    # place then): the agent's first requests with its new certificate are not refused,
    # so it does not back off while the hub catches up.
    await _wait_for_cluster(api, name, deadline)
    await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": True}})
    await _wait_for_grant(api, name, until=min(deadline, _now() + grant_wait))
    approved = []
    for csr, _ in requests.approvable:
        csr.setdefault("status", {})["conditions"] = [
            {
                "type": "Approved",
                "status": "True",
                "reason": "AutoApprovedByPyocmAccept",
                "message": "Approved by pyocm accept",
                "lastUpdateTime": timefmt.format_time(datetime.now(UTC)),
            }
        ]
        await api.update(kinds.CSR, models.wire(csr), subresource="approval")
        approved.append(csr["metadata"]["name"])
    return approved


async def _wait_for_requests(
    api: Api, name: str, *, wait: bool, timeout: float, deadline: float
) -> _Requests:
    """The cluster's join CSRs once there is something to accept (with ``wait``, until
    ``deadline``); AcceptError when there is not."""
    first = True
    while True:
        requests = await _join_csrs(api, name)
        if requests.approvable or requests.decided:
            return requests  # something to approve, or it was approved before
        if first and wait and _accepted(await find_cluster(api, name)):
            # Accepted before, its join CSRs since cleaned up: a restarted agent holds
            # its certificate and will never ask again, so there is nothing to wait for.
            return requests
        first = False
        refused = "; ".join(requests.refusals)
        if not wait:
            if refused:
                raise AcceptError(f"cluster {name}: nothing approved: {refused}")
            if await find_cluster(api, name) is not None:
                return requests
            raise AcceptError(
                f"cluster {name} has not asked to join this hub (no ManagedCluster, no pending CSR); "
                "is its agent running? Use --wait to wait for it"
            )
        if asyncio.get_running_loop().time() > deadline:
            raise AcceptError(
                f"cluster {name} did not ask to join within {timeout:.0f}s"
                + (f"; nothing approved: {refused}" if refused else "")
            )
        await asyncio.sleep(0.2)


def _now() -> float:
    return asyncio.get_running_loop().time()


async def _wait_for_grant(api: Api, name: str, *, until: float) -> None:
    """Until the hub reports HubAcceptedManagedCluster True, or ``until`` (a hub whose
    controllers run elsewhere, or not at all, never holds the approval back for long).

    Watched, as ``kubectl wait`` does, rather than polled: one request, however long the
    hub takes (polling cost a burst of joins several reads per cluster)."""
    seconds = until - _now()
    if seconds <= 0:
        return
    try:
        events = api.watch(
            ocm.MANAGED_CLUSTER,
            fields=f"metadata.name={name}",
            timeout_seconds=math.ceil(seconds),
        )
        # aclosing: leaving the loop early ends the stream (and frees its connection) now.
        async with asyncio.timeout(seconds), contextlib.aclosing(events):
            async for event, cluster in events:
                # conditions.of: a status of the wrong type reads as no conditions.
                found = conditions.of(cluster)
                if event != "BOOKMARK" and conditions.is_true(
                    found, wellknown.CLUSTER_HUB_ACCEPTED
                ):
                    return
    except (TimeoutError, ApiError):
        return  # not granted in time, or not allowed to watch: approve anyway


async def _join_csrs(api: Api, name: str) -> _Requests:
    """The cluster's agent CSRs that pass the hub's subject checks, sorted."""
    listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
    requests = _Requests()
    for item in listed.get("items") or []:
        csr = models.view(CertificateSigningRequest, item)
        checked = checked_subject(item)
        if checked is None or checked[0] != name:
            continue
        if csr.get("status", {}).get("conditions"):
            requests.decided += 1
        elif (refusal := join_refusal(item)) is not None:
            requests.refusals.append(refusal)
        else:
            requests.approvable.append((csr, checked[1]))
    return requests


def _accepted(cluster: ManagedCluster | None) -> bool:
    return cluster is not None and cluster.get("spec", {}).get("hubAcceptsClient", False)


async def find_cluster(api: Api, name: str) -> ManagedCluster | None:
    try:
        return models.view(ManagedCluster, await api.get(ocm.MANAGED_CLUSTER, name))
    except ApiError as err:
        if err.code == 404:
            return None
        raise


async def _wait_for_cluster(api: Api, name: str, deadline: float) -> None:
    while await find_cluster(api, name) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise AcceptError(f"cluster {name} has a join request but no ManagedCluster yet")
        await asyncio.sleep(0.1)
