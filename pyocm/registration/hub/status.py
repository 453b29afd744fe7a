"""Writing a ManagedCluster's status conditions: one guarded patch, only when something changed."""

from __future__ import annotations

import copy
from typing import Any

from pyocm.api import conditions
from pyocm.runtime import kinds
from pyocm.runtime.client import Api
from pyocm.runtime.clock import Clock

Obj = dict[str, Any]


async def set_cluster_condition(
    api: Api, cluster: Obj, *, clock: Clock, type: str, status: str, reason: str, message: str
) -> Obj:
    """Set one condition on ``cluster`` (as read from a cache) and patch status if it changed.

    The patch carries the resourceVersion it was computed from, so a concurrent writer
    (the agent reports status too) makes it fail with 409 and the reconcile runs again
    on fresh state instead of overwriting.
    """
    current = copy.deepcopy((cluster.get("status") or {}).get("conditions") or [])
    changed = conditions.set_condition(
        current, type=type, status=status, reason=reason, message=message, now=clock.now()
    )
    if not changed:
        return cluster
    patch = {
        "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]},
        "status": {"conditions": current},
    }
    return await api.patch(
        kinds.MANAGED_CLUSTER, cluster["metadata"]["name"], patch, subresource="status"
    )
