"""Deleting a work: upstream's finalizer controllers (pkg/work/spoke/controllers/
finalizercontroller), one root kind each.

1. :class:`AddFinalizer` (ManifestWork): puts ``manifest-work-cleanup`` on every live
   work of the cluster, so none is removed before its resources are.
2. :class:`WorkFinalizer` (ManifestWork): a work being deleted gets the ``Deleting``
   condition and its AppliedManifestWork is deleted; once that is gone, the work's
   finalizer is removed.
3. :class:`AppliedWorkFinalizer` (AppliedManifestWork, this agent's): a record being
   deleted has its owned resources deleted (see :mod:`pyocm.work.agent.cleanup`),
   keeps those still going in ``appliedResources``, and loses its finalizer only when
   none is left: Foreground deletion. What a delete option orphaned carries no owner
   reference of it, and stays.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any, cast

from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import AppliedManifestWork, ManifestWork, ManifestWorkStatus
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer
from pyocm.work.agent import appliedwork, hubstatus
from pyocm.work.agent.appliedcache import AppliedWorkCache
from pyocm.work.agent.cleanup import delete_applied_resources
from pyocm.work.agent.requeue import FINALIZE_BACKOFF, Failures
from pyocm.work.agent.spoke import SpokeClient

log = logging.getLogger(__name__)
WORK_FINALIZER = wellknown.MANIFEST_WORK_CLEANUP_FINALIZER
#: Upstream's ``WorkDeleting`` condition, set on a work while its resources go.
WORK_DELETING = "Deleting"
#: A key of the AppliedManifestWork controllers, told when one was deleted here.
Notify = Callable[[str], None]


def _cached(works: Informer, key: str) -> ManifestWork | None:
    found = works.store.get(key)
    return None if found is None else models.view(ManifestWork, found)


class AddFinalizer:
    """Upstream's ``ManifestWorkAddFinalizerController``."""

    def __init__(self, hub: Api, works: Informer) -> None:
        self.hub = hub
        self.works = works

    async def reconcile(self, key: str) -> Result | None:
        work = _cached(self.works, key)
        if work is None or work["metadata"].get("deletionTimestamp"):
            return None
        finalizers = list(work["metadata"].get("finalizers") or [])
        if WORK_FINALIZER not in finalizers:
            await hubstatus.set_finalizers(self.hub, work, [*finalizers, WORK_FINALIZER])
        return None


class WorkFinalizer:
    """Upstream's ``ManifestWorkFinalizeController``.

    With no informer on the managed cluster, it asks for the AppliedManifestWork
    directly, and looks again with backoff while it exists; ``deleted`` tells the
    AppliedManifestWork finalizer at once that a record is being deleted."""

    def __init__(
        self,
        hub: Api,
        spoke: SpokeClient,
        works: Informer,
        *,
        hub_hash: str,
        clock: Clock,
        deleted: Notify,
    ) -> None:
        self.hub = hub
        self.spoke = spoke
        self.works = works
        self.hub_hash = hub_hash
        self.clock = clock
        self.deleted = deleted
        self.failures = Failures(FINALIZE_BACKOFF)

    async def reconcile(self, key: str) -> Result | None:
        work = _cached(self.works, key)
        if work is None or not work["metadata"].get("deletionTimestamp"):
            self.failures.forget(key)
            return None
        name = appliedwork.applied_work_name(self.hub_hash, str(work["metadata"]["name"]))
        applied = await self._applied(name)
        if applied is not None and not applied["metadata"].get("deletionTimestamp"):
            await self._mark_deleting(work)
            await self._delete(name)
            applied = await self._applied(name)
        if applied is not None:
            return Result(requeue_after=self.failures.when(key))
        self.failures.forget(key)
        finalizers = list(work["metadata"].get("finalizers") or [])
        if WORK_FINALIZER in finalizers:
            await hubstatus.set_finalizers(
                self.hub, work, [f for f in finalizers if f != WORK_FINALIZER]
            )
        return None

    async def _applied(self, name: str) -> AppliedManifestWork | None:
        try:
            found = await self.spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        return models.view(AppliedManifestWork, found)

    async def _mark_deleting(self, work: ManifestWork) -> None:
        status: ManifestWorkStatus = copy.deepcopy(work.get("status", {}))
        found = status.setdefault("conditions", [])
        conditions.set_condition(
            cast(list[dict[str, Any]], found),
            type=WORK_DELETING,
            status="True",
            reason="WorkDeleting",
            message="ManifestWork is being deleted",
            now=self.clock.now(),
            observed_generation=work["metadata"].get("generation"),
        )
        await hubstatus.patch_status(self.hub, work, status)

    async def _delete(self, name: str) -> None:
        try:
            await self.spoke.delete(ocm.APPLIED_MANIFEST_WORK, name)
        except ApiError as err:
            if err.code != 404:
                raise
        self.deleted(name)


class AppliedWorkFinalizer:
    """Upstream's ``AppliedManifestWorkFinalizeController`` for this agent's records.

    ``gone`` hears the work name of each record whose finalizer it removed, so the
    work's own finalizer goes at once. It finalizes the records of ``records``'s agent,
    reading them from that cache (which its owner keeps listing) and writing through
    its client."""

    def __init__(self, records: AppliedWorkCache, *, hub_hash: str, gone: Notify) -> None:
        self.records = records
        self.spoke = records.spoke
        self.agent_id = records.agent_id
        self.hub_hash = hub_hash
        self.gone = gone
        self.failures = Failures(FINALIZE_BACKOFF)

    async def reconcile(self, name: str) -> Result | None:
        applied = await self.records.get(name)
        meta = applied["metadata"] if applied is not None else {}
        if (
            applied is None
            or applied.get("spec", {}).get("agentID") != self.agent_id
            or not meta.get("deletionTimestamp")
            or appliedwork.FINALIZER not in (meta.get("finalizers") or [])
        ):
            self.failures.forget(name)  # nothing (more) to finalize
            return None
        work_name = applied["spec"]["manifestWorkName"]
        deletion = await delete_applied_resources(
            self.spoke,
            list(applied.get("status", {}).get("appliedResources") or []),
            owner=appliedwork.owner_of(applied),
            reason=f"manifestwork {work_name} is terminating",
        )
        status = {**applied.get("status", {}), "appliedResources": deletion.pending}
        if not deletion.pending:
            status.pop("appliedResources")
        updated = await appliedwork.write_status(self.spoke, applied, status)
        if deletion.errors:
            raise CleanupError(name, deletion.errors)
        if deletion.pending or updated is not None:
            # Upstream waits for the update event of its informer; this agent has none
            # on the managed cluster, so it looks again after the backoff.
            return Result(requeue_after=self.failures.when(name))
        self.failures.forget(name)
        await appliedwork.remove_finalizer(self.spoke, applied)
        log.info("resources of manifestwork %s are cleaned up", work_name)
        self.gone(name)
        return None


class CleanupError(RuntimeError):
    """Resources of an AppliedManifestWork that could not be deleted (retried)."""

    def __init__(self, name: str, errors: list[str]) -> None:
        super().__init__(f"cleaning up AppliedManifestWork {name}: {'; '.join(errors)}")
