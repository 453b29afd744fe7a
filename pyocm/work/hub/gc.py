"""Completed ManifestWorks deleted once their ``ttlSecondsAfterFinished`` has passed
(upstream's ManifestWorkGarbageCollectionController).

A work is finished when its ``Complete`` condition is True (condition rules on its
manifests set it, on the agent). The time counts from that condition's
lastTransitionTime; 0 deletes at once. Works made by a ManifestWorkReplicaSet are left
to its controller, as upstream leaves them.
"""

from __future__ import annotations

from pyocm.api import conditions, models
from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.base.clock import Clock
from pyocm.kube import timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer
from pyocm.runtime.manager import Manager
from pyocm.work.hub.replicaset import REPLICA_SET_LABEL, add_replicaset_controller

WORK_COMPLETE = "Complete"


def seconds_left(work: ManifestWork, *, now: float) -> float | None:
    """Seconds until ``work`` is due for deletion (0 or less: due now); None: never."""
    if work["metadata"].get("deletionTimestamp"):
        return None
    if REPLICA_SET_LABEL in (work["metadata"].get("labels") or {}):
        return None
    ttl = work.get("spec", {}).get("deleteOption", {}).get("ttlSecondsAfterFinished")
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        return None
    complete = conditions.find(work.get("status", {}).get("conditions"), WORK_COMPLETE)
    if complete is None or complete.get("status") != "True":
        return None
    if ttl <= 0:
        return 0.0
    since = timefmt.parse_time(str(complete.get("lastTransitionTime", ""))).timestamp()
    return since + ttl - now


class CompletedWorkCollector:
    def __init__(self, api: Api, works: Informer, *, clock: Clock) -> None:
        self.api, self.works, self.clock = api, works, clock

    async def reconcile(self, key: str) -> Result | None:
        stored = self.works.store.get(key)
        if stored is None:
            return None
        work = models.view(ManifestWork, stored)
        try:
            left = seconds_left(work, now=self.clock.now().timestamp())
        except ValueError:  # a lastTransitionTime that is not a time: not ours to judge
            return None
        if left is None:
            return None
        if left > 0:
            return Result(requeue_after=left)
        meta = work["metadata"]
        try:
            await self.api.delete(
                ocm.MANIFEST_WORK,
                meta["name"],
                namespace=meta.get("namespace"),
                uid=meta.get("uid"),
            )
        except ApiError as err:
            if err.code not in (404, 409):  # gone already, or a namesake since
                raise
        return None


def add_work_controllers(manager: Manager, *, replica_sets: bool = False) -> None:
    """The hub's work controllers; the ManifestWorkReplicaSet controller only with
    ``replica_sets`` (the hub gate ``ManifestWorkReplicaSet``, off by default upstream)."""
    works = manager.informer(ocm.MANIFEST_WORK)
    collector = CompletedWorkCollector(manager.api, works, clock=manager.clock)
    manager.controller("manifestwork-garbage-collection", collector.reconcile).watch(works)
    if replica_sets:
        add_replicaset_controller(manager)
