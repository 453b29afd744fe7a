"""Evicting unmanaged AppliedManifestWorks: upstream's ``UnManagedAppliedManifestWork``
controller (root kind: this agent's AppliedManifestWorks).

A record is unmanaged when its hub work is missing from the cluster namespace (deleted
while the agent was away), or when that work exists but the record's name carries
another hub's hash (the cluster moved hubs, keeping its agent id). Such a record gets
``status.evictionStartTime`` and is deleted once the grace period has passed since
then, which deletes its resources through its finalizer; a work that comes back in the
meantime stops the eviction (the start time is cleared). A grace period of 100 years
or more turns eviction off. Records of other agents (another agent id, by default
another hub's hash) are left alone.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import AppliedManifestWork
from pyocm.base.clock import Clock
from pyocm.kube import timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer
from pyocm.work.agent import appliedwork
from pyocm.work.agent.appliedcache import AppliedWorkCache
from pyocm.work.agent.finalize import Notify
from pyocm.work.agent.options import WorkAgentOptions

log = logging.getLogger(__name__)


class UnmanagedAppliedWorks:
    def __init__(
        self,
        records: AppliedWorkCache,
        works: Informer,
        *,
        options: WorkAgentOptions,
        hub_hash: str,
        clock: Clock,
        deleted: Notify,
    ) -> None:
        """Evicts the records of ``records``'s agent, reading them from that cache
        (which its owner keeps listing) and writing through its client."""
        self.records = records
        self.spoke = records.spoke
        self.works = works
        self.cluster = options.cluster_name
        self.grace = options.appliedmanifestwork_eviction_grace_period
        self.disabled = options.eviction_disabled
        self.hub_hash = hub_hash
        self.agent_id = records.agent_id
        self.clock = clock
        self.deleted = deleted

    async def reconcile(self, name: str) -> Result | None:
        applied = await self.records.get(name)
        if applied is None:
            return None
        spec = applied.get("spec", {})
        if spec.get("agentID") != self.agent_id or applied["metadata"].get("deletionTimestamp"):
            return None
        if self.disabled:
            await self._set_start(applied, None)
            return None
        work = self.works.store.get(f"{self.cluster}/{spec.get('manifestWorkName')}")
        if work is None or appliedwork.work_name_of(self.hub_hash, name) is None:
            return await self._evict(applied)
        await self._set_start(applied, None)
        return None

    async def _evict(self, applied: AppliedManifestWork) -> Result | None:
        name = applied["metadata"]["name"]
        started = applied.get("status", {}).get("evictionStartTime")
        now = self.clock.now()
        if not started:
            await self._set_start(applied, timefmt.format_time(now))
            return Result(requeue_after=self.grace)
        remaining = (
            timefmt.parse_time(started) + timedelta(seconds=self.grace) - now
        ).total_seconds()
        if remaining > 0:
            return Result(requeue_after=remaining)
        try:
            # The record may have been read from the cache: delete that one only.
            await self.spoke.delete(
                ocm.APPLIED_MANIFEST_WORK, name, uid=applied["metadata"].get("uid")
            )
        except ApiError as err:
            if err.code != 404:
                raise
        log.info("AppliedManifestWork %s evicted after eviction grace period", name)
        self.deleted(name)
        return None

    async def _set_start(self, applied: AppliedManifestWork, start: str | None) -> None:
        status = dict(applied.get("status", {}))
        if status.get("evictionStartTime") == start:
            return
        if start is None:
            status.pop("evictionStartTime", None)
        else:
            status["evictionStartTime"] = start
        await appliedwork.write_status(self.spoke, applied, status)
