"""The status controller: upstream's ``AvailableStatusController``, root kind
ManifestWork.

Every ``status_sync_interval`` (jittered by up to 0.9 of it, as upstream) and on every
change of a work, for a work that has the cleanup finalizer and an ``Applied``
condition: read each resource its status lists from the managed cluster, compute the
manifest's ``Available``, status feedback and condition-rule conditions
(:mod:`pyocm.work.agent.status`), aggregate the work's conditions, and patch the hub
work's status only when that changed.

One thing upstream does not do: a resource that was applied (``Applied`` True, not
ReadOnly, not ``Complete``) and is now missing has been deleted behind the agent's back,
so the manifest work controller is asked to apply the work at once instead of at its
next resync. Upstream finds such drift only at that resync (4 to 6 minutes); both end
in the same state. The shortcut never runs ahead of upstream's own pace otherwise: a
finished manifest (``Complete`` True, say a Job its TTL removed) is never applied again,
so its absence is no drift; a work backing off after a failure waits for its backoff;
and a work is asked at most once per ``status_sync_interval``, however often its status
is synced in between (each of its changes syncs it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from pyocm.api import models, work_v1
from pyocm.api.models.work_v1 import ManifestWork, ManifestWorkStatus
from pyocm.base.clock import Clock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Informer
from pyocm.work.agent import hubstatus
from pyocm.work.agent.finalize import WORK_FINALIZER
from pyocm.work.agent.manifestconfig import ManifestConfig, find_manifest_config
from pyocm.work.agent.options import WorkAgentOptions
from pyocm.work.agent.reconcile import ManifestCondition, ResourceMeta
from pyocm.work.agent.requeue import jitter
from pyocm.work.agent.spoke import SpokeClient
from pyocm.work.agent.status.aggregate import manifest_complete, work_conditions
from pyocm.work.agent.status.available import resource_meta_complete
from pyocm.work.agent.status.manifest import manifest_status
from pyocm.work.agent.status.merge import find

Obj = dict[str, object]
APPLIED = "Applied"


class StatusController:
    def __init__(
        self,
        hub: Api,
        spoke: SpokeClient,
        works: Informer,
        *,
        options: WorkAgentOptions,
        clock: Clock,
        reapply: Callable[[str], None],
        backing_off: Callable[[str], bool] = lambda key: False,
    ) -> None:
        """``reapply(key)`` asks the manifest work controller to apply the work now;
        ``backing_off(key)`` says whether that controller is waiting out a failure of
        the work (then it is not asked: its backoff decides when)."""
        self.hub = hub
        self.spoke = spoke
        self.works = works
        self.options = options
        self.clock = clock
        self.reapply = reapply
        self.backing_off = backing_off
        # When each work's missing resources last asked for a re-apply.
        self._reapplied: dict[str, float] = {}
        self.reader = malformed.TypedReader.of(work_v1.MANIFEST_WORK)

    async def reconcile(self, key: str) -> Result | None:
        found = self.works.store.get(key)
        if found is None:
            self._reapplied.pop(key, None)
            return None
        work = models.view(ManifestWork, self.reader.clean(found))
        await self._sync(key, work)
        return Result(requeue_after=jitter(self.options.status_sync_interval, 0.9))

    async def _sync(self, key: str, work: ManifestWork) -> None:
        meta = work["metadata"]
        status: ManifestWorkStatus = copy.deepcopy(work.get("status", {}))
        if WORK_FINALIZER not in (meta.get("finalizers") or []):
            return
        if find(status.get("conditions"), APPLIED) is None:
            return
        generation = int(meta.get("generation") or 0)
        configs = work.get("spec", {}).get("manifestConfigs") or []
        now = self.clock.now()
        manifests: list[ManifestCondition] = []
        drifted = False
        for entry in status.get("resourceStatus", {}).get("manifests") or []:
            resource = entry["resourceMeta"]
            obj, error = await self._read(resource)
            config = find_manifest_config(
                group=resource.get("group", ""),
                resource=resource.get("resource", ""),
                namespace=resource.get("namespace", ""),
                name=resource.get("name", ""),
                configs=configs,
            )
            manifests.append(
                manifest_status(
                    obj,
                    error=error,
                    config=config,
                    max_json_raw_length=self.options.max_json_raw_length,
                    now=now,
                    existing=entry,
                    generation=generation,
                )
            )
            drifted = drifted or (obj is None and _absent(error) and _drift(entry, config))
        status.setdefault("resourceStatus", {})["manifests"] = manifests
        status["conditions"] = work_conditions(
            manifests, generation=generation, existing=status.get("conditions") or [], now=now
        )
        await hubstatus.patch_status(self.hub, work, status)
        if drifted:
            self._ask_reapply(key)

    def _ask_reapply(self, key: str) -> None:
        if self.backing_off(key):
            return
        now = self.clock.monotonic()
        last = self._reapplied.get(key)
        if last is not None and now - last < self.options.status_sync_interval:
            return
        self._reapplied[key] = now
        self.reapply(key)

    async def _read(
        self, resource: ResourceMeta
    ) -> tuple[dict[str, object] | None, Exception | None]:
        """The object ``resource`` names, or why it could not be read."""
        if not resource_meta_complete(resource):
            return None, None
        kind = Kind(
            resource.get("group", ""),
            resource.get("version", ""),
            resource.get("kind", ""),
            resource.get("resource", ""),
            bool(resource.get("namespace")),
        )
        try:
            found = await self.spoke.get(
                kind, resource.get("name", ""), namespace=resource.get("namespace") or None
            )
        except (ApiError, ApiConnectionError) as err:
            return None, err
        return found, None


def _drift(entry: ManifestCondition, config: ManifestConfig | None) -> bool:
    """Whether the manifest's resource, found missing, is one the agent would put back:
    applied, and neither ReadOnly nor finished (a finished one is not applied again)."""
    applied = find(entry.get("conditions"), APPLIED)
    return (
        applied is not None
        and applied.get("status") == "True"
        and not manifest_complete(entry)
        and not _read_only(config)
    )


def _read_only(config: ManifestConfig | None) -> bool:
    """A ReadOnly resource is never created by the agent: its absence is no drift."""
    strategy = config.get("updateStrategy") if config else None
    return strategy is not None and strategy.get("type") == "ReadOnly"


def _absent(error: Exception | None) -> bool:
    return isinstance(error, ApiError) and error.code == 404
