"""The work agent: one cluster's ManifestWorks applied to it, reported back, cleaned up.

Upstream's controllers (pkg/work/spoke/spokeagent.go), each level-based over one root
kind, run by one :class:`~pyocm.runtime.manager.Manager` whose only informer is the
hub's ManifestWorks in the cluster namespace (the agent's hub role grants no more):

============================  ====================  =====================================
controller                    root kind             does
============================  ====================  =====================================
ManifestWorkAddFinalizer      ManifestWork          adds ``manifest-work-cleanup``
ManifestWorkController        ManifestWork          applies, records, deletes what left
ManifestWorkFinalizer         ManifestWork          deletes the record, then the finalizer
AppliedManifestWorkFinalizer  AppliedManifestWork   deletes owned resources (Foreground)
UnManagedAppliedManifestWork  AppliedManifestWork   evicts records of vanished works
AvailableStatusController     ManifestWork          status, feedback, conditions
============================  ====================  =====================================

The managed cluster is reached only through a :class:`~pyocm.work.agent.spoke.SpokeClient`
(the fleet simulator passes its memory), which has no watch: where upstream's
controllers hear of AppliedManifestWorks from an informer, this agent lists them every
``status_sync_interval`` into a cache (:mod:`~pyocm.work.agent.appliedcache`, also
refreshed by the agent's own reads and writes of them) that the AppliedManifestWork
controllers read, and the controllers tell each other in process of the records they
delete. Drift on the managed cluster is found by resync, as upstream finds it:
every work is applied again ``resync_interval`` after its last success, and its
resources are read for status every ``status_sync_interval``.
"""

from __future__ import annotations

import logging

from pyocm.api import kinds as ocm
from pyocm.base.clock import Clock, RealClock
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager
from pyocm.work.agent import appliedwork
from pyocm.work.agent.appliedcache import AppliedWorkCache
from pyocm.work.agent.eviction import UnmanagedAppliedWorks
from pyocm.work.agent.finalize import (
    WORK_FINALIZER,
    AddFinalizer,
    AppliedWorkFinalizer,
    WorkFinalizer,
)
from pyocm.work.agent.options import WorkAgentOptions, hub_hash
from pyocm.work.agent.reconcile import ManifestWorkController
from pyocm.work.agent.spoke import SpokeClient
from pyocm.work.agent.statussync import StatusController

log = logging.getLogger(__name__)
__all__ = ["WorkAgent", "WorkAgentOptions"]


class WorkAgent:
    """Run with :meth:`run` until cancelled; ``hub`` is a client with the cluster's hub
    credential, ``spoke`` the managed cluster."""

    def __init__(
        self,
        hub: Api,
        spoke: SpokeClient,
        *,
        options: WorkAgentOptions,
        clock: Clock | None = None,
    ) -> None:
        options.check_cluster()
        self.hub = hub
        self.options = options
        self.clock = clock or RealClock()
        self.hub_hash = options.hub_hash or hub_hash(hub.server)
        self.agent_id = options.agent_id or self.hub_hash
        self.records = AppliedWorkCache(spoke, agent_id=self.agent_id)
        # Every controller reads and writes the managed cluster through the cache's
        # client, so what it learns of AppliedManifestWorks keeps the cache current.
        self.spoke = self.records.spoke
        self.manager = Manager(hub, clock=self.clock)
        self._build()

    def _build(self) -> None:
        options, manager, cluster = self.options, self.manager, self.options.cluster_name
        works = manager.informer(ocm.MANIFEST_WORK, namespace=cluster)

        self.add_finalizer = AddFinalizer(self.hub, works)
        manager.controller(
            "ManifestWorkAddFinalizerController", self.add_finalizer.reconcile
        ).watch(works)

        self.manifests = ManifestWorkController(
            self.hub,
            self.spoke,
            works,
            options=options,
            hub_hash=self.hub_hash,
            agent_id=self.agent_id,
            clock=self.clock,
        )
        applying = manager.controller(
            "ManifestWorkController", self.manifests.reconcile, workers=options.workers
        )
        applying.watch(works, predicate=_spec_or_finalizer_changed)

        def work_gone(applied_name: str) -> None:
            work = appliedwork.work_name_of(self.hub_hash, applied_name)
            if work is not None:
                finalizing.enqueue(f"{cluster}/{work}")

        def record_deleted(applied_name: str) -> None:
            finalizing_applied.enqueue(applied_name)

        self.work_finalizer = WorkFinalizer(
            self.hub,
            self.spoke,
            works,
            hub_hash=self.hub_hash,
            clock=self.clock,
            deleted=record_deleted,
        )
        finalizing = manager.controller(
            "ManifestWorkFinalizer", self.work_finalizer.reconcile, workers=options.workers
        )
        finalizing.watch(works)

        self.applied_finalizer = AppliedWorkFinalizer(
            self.records, hub_hash=self.hub_hash, gone=work_gone
        )
        finalizing_applied = manager.controller(
            "AppliedManifestWorkFinalizer",
            self.applied_finalizer.reconcile,
            workers=options.workers,
        )

        self.eviction = UnmanagedAppliedWorks(
            self.records,
            works,
            options=options,
            hub_hash=self.hub_hash,
            clock=self.clock,
            deleted=record_deleted,
        )
        evicting = manager.controller("UnManagedAppliedManifestWork", self.eviction.reconcile)
        # A work's change (its deletion above all) is news for its record.
        evicting.watch(
            works,
            lambda work: [appliedwork.applied_work_name(self.hub_hash, work["metadata"]["name"])],
        )

        self.status = StatusController(
            self.hub,
            self.spoke,
            works,
            options=options,
            clock=self.clock,
            reapply=lambda key: applying.enqueue(key),
            backing_off=self.manifests.backing_off,
        )
        manager.controller(
            "AvailableStatusController", self.status.reconcile, workers=options.workers
        ).watch(works)

        async def list_records() -> None:
            """Stands in for upstream's AppliedManifestWork informer (see the module)."""
            while True:
                for name in await self._record_names():
                    finalizing_applied.enqueue(name)
                    evicting.enqueue(name)
                await self.clock.sleep(options.status_sync_interval)

        manager.add("AppliedManifestWorkLister", list_records)

    async def _record_names(self) -> list[str]:
        """This agent's records, listed anew into the cache."""
        try:
            return await self.records.relist()
        except (ApiError, ApiConnectionError) as err:
            log.warning("listing AppliedManifestWorks: %s", err)
            return []

    async def run(self) -> None:
        """Run every controller until cancelled."""
        log.info(
            "work agent for cluster %s: hub hash %s, agent id %s",
            self.options.cluster_name,
            self.hub_hash,
            self.agent_id,
        )
        await self.manager.run()


def _spec_or_finalizer_changed(change: Change) -> bool:
    """Upstream's event filter of the manifest work controller: a work with the
    finalizer that is new, just got the finalizer, or changed its spec or labels (its
    own status writes do not wake it). Unlike upstream's, a deleted work wakes it too,
    to forget the work (its backoff and records), which does nothing else."""
    new = change.new
    if new is None:
        return True
    meta = new.get("metadata") or {}
    if WORK_FINALIZER not in (meta.get("finalizers") or []):
        return False
    old = change.old
    if old is None:
        return True
    old_meta = old.get("metadata") or {}
    return (
        WORK_FINALIZER not in (old_meta.get("finalizers") or [])
        or old.get("spec") != new.get("spec")
        or old_meta.get("labels") != meta.get("labels")
    )
