"""Taints that follow availability, so placement stops choosing clusters that cannot act.

Available missing or Unknown → ``unreachable``; False → ``unavailable``; True → neither.
Taints are written without ``timeAdded``: the hub's admission stamps it.
"""

from __future__ import annotations

import copy

from pyocm.api import cluster_v1, conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster, ManagedClusterSpecTaint
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer

_OURS = (wellknown.TAINT_UNAVAILABLE, wellknown.TAINT_UNREACHABLE)


def wanted_taint(cluster: ManagedCluster) -> str | None:
    available = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
    status = available.get("status") if available else None
    if status == "True":
        return None
    return wellknown.TAINT_UNAVAILABLE if status == "False" else wellknown.TAINT_UNREACHABLE


class TaintController:
    def __init__(self, api: Api, clusters: Informer, *, recorder: Recorder) -> None:
        self.api = api
        self.clusters = clusters
        self.recorder = recorder
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER, recorder=recorder)

    async def reconcile(self, name: str) -> None:
        # Read through its schema: a spec or taints of the wrong type read as absent.
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return
        spec = cluster.get("spec", {})
        current = spec.get("taints", [])
        wanted = wanted_taint(cluster)
        taints = [t for t in current if t.get("key") not in _OURS or _is(t, wanted)]
        if wanted is not None and not any(_is(t, wanted) for t in taints):
            taints.append({"key": wanted, "effect": wellknown.TAINT_NO_SELECT})
        if taints == current:
            return
        updated = copy.deepcopy(cluster)
        updated["spec"] = {**copy.deepcopy(spec), "taints": taints}
        await self.api.update(ocm.MANAGED_CLUSTER, models.wire(updated))
        await self.recorder.event(
            models.wire(cluster),
            reason="ManagedClusterConditionAvailableUpdated",
            note=f"Update the original taints to the [{_describe(taints)}]",
        )


def _describe(taints: list[ManagedClusterSpecTaint]) -> str:
    """Taints as kubectl writes them: ``key=value:effect``, comma-separated."""
    return ", ".join(
        f"{t.get('key')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect')}"
        for t in taints
    )


def _is(taint: ManagedClusterSpecTaint, key: str | None) -> bool:
    return (
        key is not None
        and taint.get("key") == key
        and taint.get("effect") == wellknown.TAINT_NO_SELECT
        and not taint.get("value")
    )
