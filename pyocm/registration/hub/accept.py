"""Accepting a cluster as ``clusteradm accept`` does: set ``hubAcceptsClient`` and approve
its agent's join CSRs (after the hub's own subject checks)."""

from __future__ import annotations

import asyncio
import contextlib
import math
from datetime import UTC, datetime
from typing import Any

from pyocm.api import conditions, wellknown
from pyocm.kube import timefmt
from pyocm.kube.status import ApiError
from pyocm.registration.hub.csrapproval import validate
from pyocm.runtime import kinds
from pyocm.runtime.client import Api

Obj = dict[str, Any]
#: The longest an accept waits for the hub to grant the cluster's access before approving.
GRANT_WAIT = 10.0


class AcceptError(RuntimeError):
    """The cluster cannot be accepted yet; the message says why."""


async def accept_cluster(
    api: Api,
    name: str,
    *,
    wait: bool = False,
    timeout: float = 60.0,
    grant_wait: float = GRANT_WAIT,
) -> list[str]:
    """Set ``hubAcceptsClient`` and approve ``name``'s valid pending CSRs; return those approved."""
    deadline = asyncio.get_running_loop().time() + timeout
    first = True
    while True:
        requests = await _join_csrs(api, name)
        pending = [csr for csr in requests if not (csr.get("status") or {}).get("conditions")]
        if pending or len(pending) < len(requests):
            break  # something to approve, or it was approved before
        if first and wait and _accepted(await find_cluster(api, name)):
            # Accepted before, its join CSRs since cleaned up: a restarted agent holds
            # its certificate and will never ask again, so there is nothing to wait for.
            break
        first = False
        if not wait:
            if await find_cluster(api, name) is not None:
                break
            raise AcceptError(
                f"cluster {name} has not asked to join this hub (no ManagedCluster, no pending CSR); "
                "is its agent running? Use --wait to wait for it"
            )
        if asyncio.get_running_loop().time() > deadline:
            raise AcceptError(f"cluster {name} did not ask to join within {timeout:.0f}s")
        await asyncio.sleep(0.2)
    # Accept first, and approve once the hub says the cluster is accepted (its RBAC is in
    # place then): the agent's first requests with its new certificate are not refused,
    # so it does not back off while the hub catches up.
    await _wait_for_cluster(api, name, deadline)
    await api.patch(kinds.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": True}})
    await _wait_for_grant(api, name, until=min(deadline, _now() + grant_wait))
    approved = []
    for csr in pending:
        csr.setdefault("status", {})["conditions"] = [
            {
                "type": "Approved",
                "status": "True",
                "reason": "AutoApprovedByPyocmAccept",
                "message": "Approved by pyocm accept",
                "lastUpdateTime": timefmt.format_time(datetime.now(UTC)),
            }
        ]
        await api.update(kinds.CSR, csr, subresource="approval")
        approved.append(csr["metadata"]["name"])
    return approved


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
            kinds.MANAGED_CLUSTER,
            fields=f"metadata.name={name}",
            timeout_seconds=math.ceil(seconds),
        )
        # aclosing: leaving the loop early ends the stream (and frees its connection) now.
        async with asyncio.timeout(seconds), contextlib.aclosing(events):
            async for event, cluster in events:
                found = (cluster.get("status") or {}).get("conditions")
                if event != "BOOKMARK" and conditions.is_true(
                    found, wellknown.CLUSTER_HUB_ACCEPTED
                ):
                    return
    except (TimeoutError, ApiError):
        return  # not granted in time, or not allowed to watch: approve anyway


async def _join_csrs(api: Api, name: str) -> list[Obj]:
    """The cluster's agent CSRs that pass the hub's subject checks (decided or not)."""
    listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
    return [csr for csr in listed.get("items") or [] if validate(csr) == name]


def _accepted(cluster: Obj | None) -> bool:
    return cluster is not None and bool((cluster.get("spec") or {}).get("hubAcceptsClient"))


async def find_cluster(api: Api, name: str) -> Obj | None:
    try:
        return await api.get(kinds.MANAGED_CLUSTER, name)
    except ApiError as err:
        if err.code == 404:
            return None
        raise


async def _wait_for_cluster(api: Api, name: str, deadline: float) -> None:
    while await find_cluster(api, name) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise AcceptError(f"cluster {name} has a join request but no ManagedCluster yet")
        await asyncio.sleep(0.1)
