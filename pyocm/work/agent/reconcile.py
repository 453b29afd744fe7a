"""The manifest work controller: upstream's ``ManifestWorkController`` (its
manifestwork and appliedmanifestwork reconcilers), root kind ManifestWork.

For a live work that has the cleanup finalizer and is not Complete, one reconcile:

1. makes sure the AppliedManifestWork ``<hubHash>-<work>`` exists (its spec current);
2. applies every manifest (:mod:`pyocm.work.agent.apply`) in upstream's kind order,
   CRDs and Namespaces first (:func:`~pyocm.work.agent.manifestconfig.apply_order`), so
   a CRD's instances in the same work find their kind once it is served; each with its
   ``manifestConfigs`` entry and owned by the AppliedManifestWork, or carrying the
   "remove my owner" form when the delete option orphans it. A manifest that fails
   fails alone: the others are applied all the same. Manifests answered with a stale
   resourceVersion conflict are applied again at once, as upstream retries them;
3. records each manifest's ``Applied`` condition and the work's, with the work's
   generation, in one merge patch of the hub work's status;
4. records what was applied in the AppliedManifestWork's ``appliedResources`` and
   deletes what left the work (:mod:`pyocm.work.agent.cleanup`), keeping those still
   going recorded until they are gone.

It looks again after ``resync_interval`` (jittered by up to half), which is what puts
back resources changed or deleted on the managed cluster; failures retry sooner, with
per-work exponential backoff that a new generation of the work starts over; an
executor that was refused is asked again after upstream's minute.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.api import models, wellknown, work_v1
from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.api.models.work_v1 import (
    AppliedManifestWork,
    ManifestWork,
    ManifestWorkStatus,
    ManifestWorkStatusResourceStatusManifest,
    ManifestWorkStatusResourceStatusManifestResourceMeta,
)
from pyocm.base.backoff import DEFAULT_BACKOFF
from pyocm.base.clock import Clock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer
from pyocm.work.agent import appliedwork, hubstatus
from pyocm.work.agent.appliedwork import AppliedResource
from pyocm.work.agent.apply import ResourceCache, apply_manifest, resolve
from pyocm.work.agent.apply.errors import (
    ApplyError,
    ExecutorDenied,
    IgnoreFieldError,
    ServerSideApplyConflict,
)
from pyocm.work.agent.cleanup import delete_applied_resources
from pyocm.work.agent.finalize import WORK_FINALIZER
from pyocm.work.agent.manifestconfig import apply_order, find_manifest_config
from pyocm.work.agent.options import WorkAgentOptions
from pyocm.work.agent.requeue import APPLY_BACKOFF, Failures, jitter
from pyocm.work.agent.spoke import SpokeClient
from pyocm.work.agent.status.aggregate import (
    applied_manifest_condition,
    applied_work_condition,
    manifest_complete,
    work_complete,
)
from pyocm.work.agent.status.manifest import resource_meta
from pyocm.work.agent.status.merge import (
    NewManifestCondition,
    find,
    merge_manifest_conditions,
    set_condition,
)

log = logging.getLogger(__name__)
Obj = dict[str, Any]
ResourceMeta = ManifestWorkStatusResourceStatusManifestResourceMeta
ManifestCondition = ManifestWorkStatusResourceStatusManifest


@dataclass
class Outcome:
    """Upstream's ``applyResult``: one manifest, what it became or why it did not."""

    index: int
    meta: ResourceMeta
    kind: Kind | None = None
    obj: Obj | None = None
    error: Exception | None = None


class ManifestWorkController:
    def __init__(
        self,
        hub: Api,
        spoke: SpokeClient,
        works: Informer,
        *,
        options: WorkAgentOptions,
        hub_hash: str,
        agent_id: str,
        clock: Clock,
    ) -> None:
        self.hub = hub
        self.spoke = spoke
        self.works = works
        self.options = options
        self.hub_hash = hub_hash
        self.agent_id = agent_id
        self.clock = clock
        self.reader = malformed.TypedReader.of(work_v1.MANIFEST_WORK)
        self.failures = Failures(APPLY_BACKOFF)
        self.cleanups = Failures(APPLY_BACKOFF)
        self._generations: dict[str, int] = {}
        # Each work's Update-strategy record of what it applied (see apply.cache).
        self._applied: dict[str, ResourceCache] = {}

    async def reconcile(self, key: str) -> Result | None:
        work = self._work(key)
        if work is None:
            self._forget(key)
            return None
        meta = work["metadata"]
        if (
            meta.get("deletionTimestamp")
            or WORK_FINALIZER not in (meta.get("finalizers") or [])
            # A finished work (ttlSecondsAfterFinished) gets no more updates.
            or work_complete(work.get("status", {}).get("conditions"))
        ):
            # Not applied (now or, finished or going, ever again): nothing to remember.
            self._forget(key)
            return None
        self._new_generation(key, int(meta.get("generation") or 0))
        applied = await appliedwork.ensure(
            self.spoke,
            appliedwork.desired(
                hub_hash=self.hub_hash,
                agent_id=self.agent_id,
                work_name=str(meta["name"]),
                labels=meta.get("labels", {}),
            ),
        )
        cache = self._applied.setdefault(key, ResourceCache())
        outcomes = await self._apply_all(work, appliedwork.owner_of(applied), cache)
        cache.prune()  # what left the work is no longer applied
        status = self._status(work, outcomes)
        record = await self._record(work, status, applied, outcomes)
        await hubstatus.patch_status(self.hub, work, status)
        if record is not None:
            await appliedwork.write_status(self.spoke, applied, record.status)
        return self._next(key, outcomes, record)

    def backing_off(self, key: str) -> bool:
        """Whether the work's last apply failed, so it is looked at again after its
        backoff (which a new generation restarts)."""
        return self.failures.count(key) > 0

    # Reading.

    def _work(self, key: str) -> ManifestWork | None:
        found = self.works.store.get(key)
        return None if found is None else models.view(ManifestWork, self.reader.clean(found))

    def _new_generation(self, key: str, generation: int) -> None:
        """Upstream forgets a work's backoff when its spec changes: so does this."""
        if self._generations.get(key) != generation:
            self._generations[key] = generation
            self.failures.forget(key)
            self.cleanups.forget(key)

    def _forget(self, key: str) -> None:
        self._generations.pop(key, None)
        self._applied.pop(key, None)
        self.failures.forget(key)
        self.cleanups.forget(key)

    # Applying.

    async def _apply_all(
        self, work: ManifestWork, owner: OwnerReference, cache: ResourceCache
    ) -> list[Outcome]:
        manifests = list(work.get("spec", {}).get("workload", {}).get("manifests") or [])
        outcomes: list[Outcome | None] = [None] * len(manifests)
        pauses = DEFAULT_BACKOFF.delays()
        while True:
            for index in apply_order(manifests):
                if outcomes[index] is None or _stale(outcomes[index]):
                    outcomes[index] = await self._apply_one(
                        index, manifests[index], work, owner, cache
                    )
            if not any(_stale(outcome) for outcome in outcomes):
                break
            pause = next(pauses, None)
            if pause is None:
                break
            await self.clock.sleep(pause)
        return [outcome for outcome in outcomes if outcome is not None]

    async def _apply_one(
        self,
        index: int,
        manifest: Any,
        work: ManifestWork,
        owner: OwnerReference,
        cache: ResourceCache,
    ) -> Outcome:
        readable = manifest if isinstance(manifest, dict) else None
        try:
            kind = await resolve(self.spoke, manifest)
        except (ApplyError, ApiError) as err:
            return Outcome(index, resource_meta(index, readable, None), error=err)
        meta = resource_meta(index, readable, kind)
        outcome = Outcome(index, meta, kind=kind)
        manifests = work.get("status", {}).get("resourceStatus", {}).get("manifests") or []
        if manifest_complete(_find_manifest(meta, manifests)):
            outcome.obj = manifest  # a finished resource is not applied again
            return outcome
        spec = work.get("spec", {})
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        owned = appliedwork.owned_by_the_work(
            group=kind.group,
            resource=kind.plural,
            namespace=namespace,
            name=name,
            delete_option=spec.get("deleteOption"),
        )
        config = find_manifest_config(
            group=kind.group,
            resource=kind.plural,
            namespace=namespace,
            name=name,
            configs=spec.get("manifestConfigs") or [],
        )
        try:
            applied = await apply_manifest(
                self.spoke,
                manifest,
                kind=kind,
                strategy=config.get("updateStrategy") if config else None,
                owner=owner if owned else appliedwork.removal_of(owner),
                executor=spec.get("executor"),
                cache=cache,
            )
        except (ApiError, ApplyError) as err:
            outcome.error = err
            return outcome
        outcome.obj = applied.obj
        return outcome

    # The work's status.

    def _status(self, work: ManifestWork, outcomes: Sequence[Outcome]) -> ManifestWorkStatus:
        generation = int(work["metadata"].get("generation") or 0)
        status: ManifestWorkStatus = copy.deepcopy(work.get("status", {}))
        fresh: list[NewManifestCondition] = [
            {
                "resourceMeta": outcome.meta,
                "conditions": [
                    applied_manifest_condition(
                        outcome.error,
                        generation=generation,
                        ignore_fields_error=isinstance(outcome.error, IgnoreFieldError),
                    )
                ],
            }
            for outcome in outcomes
        ]
        now = self.clock.now()
        existing = status.get("resourceStatus", {}).get("manifests") or []
        manifests = merge_manifest_conditions(existing, fresh, now=now)
        status["resourceStatus"] = {"manifests": manifests}
        applied = applied_work_condition(fresh, generation=generation)
        if applied is not None:
            status["conditions"] = set_condition(status.get("conditions") or [], applied, now=now)
        return status

    # The AppliedManifestWork's record.

    async def _record(
        self,
        work: ManifestWork,
        status: ManifestWorkStatus,
        applied: AppliedManifestWork,
        outcomes: Sequence[Outcome],
    ) -> _Record | None:
        """What the AppliedManifestWork should record, having deleted what left the
        work; None when it must not change (being deleted, or the work never applied:
        a cluster moving to a new hub of the same hash keeps its resources until the
        new hub's works are applied once)."""
        if applied["metadata"].get("deletionTimestamp"):
            return None
        if find(status.get("conditions"), wellknown.WORK_APPLIED) is None:
            return None
        current: list[AppliedResource] = []
        errors: list[str] = []
        for outcome in outcomes:
            try:
                uid = await self._uid(outcome)
            except ApiError as err:
                if err.code == 404:
                    continue
                errors.append(
                    f"failed to get resource with key {_key(outcome.meta)}: {err.message}"
                )
                continue
            except UnknownResource as err:
                errors.append(f"failed to get resource with key {_key(outcome.meta)}: {err}")
                continue
            current.append(_applied_resource(outcome.meta, uid))
        if errors:
            # Upstream's getUIDFromResult errors: the record is left as it is, so nothing
            # the work maintains is taken for a resource that left it (and deleted).
            return _Record(status=dict(applied.get("status", {})), pending=[], errors=errors)
        recorded = list(applied.get("status", {}).get("appliedResources") or [])
        left = appliedwork.find_untracked(recorded, current)
        deletion = await delete_applied_resources(
            self.spoke,
            left,
            owner=appliedwork.owner_of(applied),
            reason=f"it is no longer maintained by manifestwork {work['metadata']['name']}",
        )
        if deletion.errors:
            return _Record(
                status=dict(applied.get("status", {})), pending=[], errors=deletion.errors
            )
        resources = sorted([*current, *deletion.pending], key=appliedwork.sort_key)
        record_status: dict[str, Any] = dict(applied.get("status", {}))
        if resources:
            record_status["appliedResources"] = resources
        else:
            record_status.pop("appliedResources", None)
        return _Record(status=record_status, pending=deletion.pending, errors=[])

    async def _uid(self, outcome: Outcome) -> str:
        """The applied object's uid: from the apply's answer, else read; the read's
        :class:`ApiError`, or :class:`UnknownResource` when the manifest's resource is
        not known (its kind did not resolve, or it has no name) and so cannot be read."""
        if outcome.error is None and outcome.obj is not None:
            uid = (outcome.obj.get("metadata") or {}).get("uid")
            if uid:
                return str(uid)
        meta = outcome.meta
        if not (meta.get("resource") and meta.get("version") and meta.get("name")):
            raise UnknownResource(f"resource with key {_key(meta)} not found")
        kind = outcome.kind or Kind(
            meta.get("group", ""),
            meta.get("version", ""),
            meta.get("kind", ""),
            meta.get("resource", ""),
            bool(meta.get("namespace")),
        )
        found = await self.spoke.get(
            kind, meta.get("name", ""), namespace=meta.get("namespace") or None
        )
        return str((found.get("metadata") or {}).get("uid") or "")

    # What next.

    def _next(self, key: str, outcomes: Sequence[Outcome], record: _Record | None) -> Result:
        """Upstream's requeue: after a failure with backoff (an SSA conflict is no
        failure: only a spec change resolves it), an executor refusal after its wait,
        resources still being deleted after the cleanup backoff, else the resync."""
        failed = [
            o.error
            for o in outcomes
            if o.error is not None
            and not isinstance(o.error, (ServerSideApplyConflict, ExecutorDenied))
        ]
        if record is not None and record.errors:
            failed.extend(RuntimeError(message) for message in record.errors)
        if failed:
            log.info("work %s: %d manifest(s) failed, the first: %s", key, len(failed), failed[0])
            return Result(requeue_after=self.failures.when(key))
        self.failures.forget(key)
        after = jitter(self.options.resync_interval, 0.5)
        for outcome in outcomes:
            if isinstance(outcome.error, ExecutorDenied):
                after = min(after, outcome.error.requeue_after)
        if record is not None and record.pending:
            return Result(requeue_after=min(after, self.cleanups.when(key)))
        self.cleanups.forget(key)
        return Result(requeue_after=after)


class UnknownResource(Exception):
    """A manifest whose resource cannot be looked up (upstream's ``resource with key
    <namespace>/<name> not found``): its kind did not resolve, or it names no object."""


@dataclass
class _Record:
    status: dict[str, Any]
    pending: list[AppliedResource]
    errors: list[str]


def _stale(outcome: Outcome | None) -> bool:
    """A write that lost to a concurrent one (409 on a resourceVersion): apply again."""
    return (
        outcome is not None
        and isinstance(outcome.error, ApiError)
        and outcome.error.code == 409
        and outcome.error.reason == "Conflict"
    )


def _find_manifest(
    meta: ResourceMeta, manifests: Sequence[ManifestCondition]
) -> ManifestCondition | None:
    """Upstream's ``FindManifestCondition``: the entry with ``meta`` but for its ordinal."""
    wanted = _without_ordinal(meta)
    for entry in manifests:
        if _without_ordinal(entry.get("resourceMeta") or {"ordinal": 0}) == wanted:
            return entry
    return None


def _without_ordinal(meta: ResourceMeta) -> tuple[str, ...]:
    return tuple(
        str(meta.get(field, "") or "")  # type: ignore[misc]
        for field in ("group", "version", "kind", "resource", "name", "namespace")
    )


def _key(meta: ResourceMeta) -> str:
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _applied_resource(meta: ResourceMeta, uid: str) -> AppliedResource:
    resource: AppliedResource = {
        "group": meta.get("group", ""),
        "version": meta.get("version", ""),
        "resource": meta.get("resource", ""),
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": uid,
    }
    return resource
