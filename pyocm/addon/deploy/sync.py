"""The add-on deploy controller (addon-framework's ``agentdeploy``, default install
mode): for each ManagedClusterAddOn of an add-on implemented here, the ManifestWorks
that deploy its agent, the pre-delete hook work, and the add-on's ``ManifestApplied``,
``HookManifestCompleted`` and (for work-based probers) ``Available`` conditions and
health check mode.

One reconcile per add-on, level-based: it reads the add-on, its cluster and its works
from the caches, renders the add-on's manifests once, brings the works to what they
should be, and ends in one write: the finalizers when they change (as upstream, the
status waits for the next pass then), else one status patch.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.addon import agent
from pyocm.addon.deploy import health, hooks, probes, works
from pyocm.addon.deploy.workbuilder import BuildError
from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.base.clock import Clock
from pyocm.kube.patches import create_merge_patch
from pyocm.kube.status import ApiError
from pyocm.runtime.cache import split_key
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer
from pyocm.work.hub import applier

Obj = dict[str, Any]
log = logging.getLogger(__name__)

REASON_APPLIED = "AddonManifestApplied"
REASON_APPLY_FAILED = "AddonManifestAppliedFailed"
REASON_WORK_APPLY_FAILED = "ManifestWorkApplyFailed"
#: Work informer index: ``<cluster>/<addon>`` of each deploy work (upstream's
#: ``ManifestWorkByAddon``: labelled with the add-on, not hosted, not a hook).
WORKS_BY_ADDON = "manifestWorkByAddon"


def work_addon(work: Obj) -> list[str]:
    """``IndexManifestWorkByAddon``."""
    labels = work["metadata"].get("labels") or {}
    name = labels.get(wellknown.ADDON_NAME_LABEL)
    if not name or labels.get(wellknown.ADDON_NAMESPACE_LABEL):
        return []
    if work["metadata"]["name"].startswith(works.pre_delete_work_name(name)):
        return []
    return [f"{work['metadata'].get('namespace', '')}/{name}"]


@dataclass(frozen=True)
class Informers:
    mcas: Informer
    clusters: Informer
    works: Informer


class DeployError(Exception):
    """More than one thing failed in one pass (each is in the message)."""


class DeployController:
    def __init__(
        self,
        api: Api,
        informers: Informers,
        *,
        addons: Mapping[str, agent.AgentAddon],
        clock: Clock,
    ) -> None:
        self._api = api
        self._informers = informers
        self._addons = addons
        self._clock = clock

    async def reconcile(self, key: str) -> None:
        namespace, name = split_key(key)
        addon = self._addons.get(name)
        if addon is None or namespace is None:
            return
        found: ManagedClusterAddOn | None = self._informers.mcas.store.get(key)  # type: ignore[assignment]
        # Agents are deployed once the add-on's registration has been applied.
        if found is None or _condition(found, wellknown.ADDON_REGISTRATION_APPLIED) is None:
            return
        cluster: ManagedCluster | None = self._informers.clusters.store.get(namespace)  # type: ignore[assignment]
        if cluster is None:
            return
        options = addon.options()
        if not options.accepts(found):
            return
        mca: ManagedClusterAddOn = copy.deepcopy(found)
        sync = _Sync(self, options, mca, cluster)
        await sync.run(addon)
        await self._write(found, mca)
        sync.raise_errors()

    def deploy_works(self, namespace: str, name: str) -> list[ManifestWork]:
        store = self._informers.works.store
        return store.by_index(WORKS_BY_ADDON, f"{namespace}/{name}")  # type: ignore[return-value]

    def cached_work(self, work: ManifestWork) -> ManifestWork | None:
        meta = work["metadata"]
        found = self._informers.works.store.get(f"{meta['namespace']}/{meta['name']}")
        return found  # type: ignore[return-value]

    async def apply_work(self, work: ManifestWork) -> ManifestWork:
        """Create or update ``work`` unless it already is as wanted; the work as it now is."""
        found = self.cached_work(work)
        works.with_server_defaults(work)
        written = await applier.apply(self._api, work, found)
        return written if written is not None else found  # type: ignore[return-value]

    async def delete_work(self, work: ManifestWork) -> None:
        meta = work["metadata"]
        try:
            await self._api.delete(ocm.MANIFEST_WORK, meta["name"], namespace=meta["namespace"])
        except ApiError as err:
            if err.code != 404:
                raise

    def set(self, mca: ManagedClusterAddOn, type: str, status: str, reason: str, msg: str) -> None:
        found = mca.setdefault("status", {}).setdefault("conditions", [])
        conditions.set_condition(
            found,  # type: ignore[arg-type]
            type=type,
            status=status,
            reason=reason,
            message=msg,
            now=self._clock.now(),
        )

    async def _write(self, old: ManagedClusterAddOn, new: ManagedClusterAddOn) -> None:
        """Finalizers first when they changed (the status is written next pass), else
        the status as one merge patch; both guarded by the add-on's resourceVersion."""
        meta = old["metadata"]
        guard = {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}
        namespace = meta.get("namespace")
        if new["metadata"].get("finalizers") != meta.get("finalizers"):
            finalizers = new["metadata"].get("finalizers") or []
            patch: Obj = {"metadata": {**guard, "finalizers": finalizers}}
            await self._api.patch(
                ocm.MANAGED_CLUSTER_ADDON, meta["name"], patch, namespace=namespace
            )
            return
        before, after = old.get("status", {}), new.get("status", {})
        if before == after:
            return
        patch = {"metadata": guard, "status": create_merge_patch(before, after)}
        await self._api.patch(
            ocm.MANAGED_CLUSTER_ADDON,
            meta["name"],
            patch,
            namespace=namespace,
            subresource="status",
        )


class _Sync:
    """One pass over one add-on: deploy, hook, health, in upstream's order, each seeing
    the conditions the one before set."""

    def __init__(
        self,
        controller: DeployController,
        options: agent.AgentAddonOptions,
        mca: ManagedClusterAddOn,
        cluster: ManagedCluster,
    ) -> None:
        self.c = controller
        self.options = options
        self.mca = mca
        self.cluster = cluster
        self.errors: list[Exception] = []
        self.objects: list[Obj] | None = None
        self.render_error: Exception | None = None

    async def run(self, addon: agent.AgentAddon) -> None:
        configured = not self.options.config_check or conditions.is_true(
            conditions.of(self.mca), wellknown.ADDON_CONFIGURED
        )
        probing = self.options.health in (
            agent.HealthProberType.DEPLOYMENT_AVAILABILITY,
            agent.HealthProberType.WORKLOAD_AVAILABILITY,
        )
        if configured or probing:
            await self._render(addon)
        if configured:
            if self.render_error is not None:
                self._failed(f"failed to get manifest from agent interface: {self.render_error}")
                self.errors.append(self.render_error)
            else:
                await self._deploy()
                await self._hook()
        else:
            # Until the add-on is configured upstream builds no hook work, so no finalizer.
            hooks.remove_finalizer(self.mca)
        self._health()

    async def _render(self, addon: agent.AgentAddon) -> None:
        try:
            self.objects = list(await addon.manifests(self.cluster, self.mca))
        except Exception as err:  # the add-on's callback: whatever it raises is its error
            self.render_error = err

    def _failed(self, message: str) -> None:
        self.c.set(
            self.mca, wellknown.ADDON_MANIFEST_APPLIED, "False", REASON_WORK_APPLY_FAILED, message
        )

    def _deploying(self) -> bool:
        """Deploy works are kept while the add-on and its cluster live, and while a
        pre-delete hook holds the add-on (its works may change during the uninstall)."""
        if hooks.has_finalizer(self.mca):
            return True
        return not _deleting(self.mca) and not _deleting(self.cluster)

    async def _deploy(self) -> None:
        if not self._deploying():
            return
        assert self.objects is not None
        meta = self.mca["metadata"]
        existing = self.c.deploy_works(meta["namespace"], meta["name"])
        configs = probes.manifest_configs(self.options, self.objects)
        try:
            built = works.build_deploy_works(
                self.mca, self.objects, manifest_configs=configs, existing=existing
            )
        except BuildError as err:
            self._failed(f"failed to build manifestwork: {err}")
            self.errors.append(err)
            return
        if built is None or not built.apply:
            self.c.set(
                self.mca,
                wellknown.ADDON_MANIFEST_APPLIED,
                "True",
                REASON_APPLIED,
                "no manifest need to apply",
            )
        for work in built.delete if built is not None else []:
            await self._guarded(self.c.delete_work(work))
        for work in built.apply if built is not None else []:
            await self._apply(work)

    async def _guarded(self, step: Awaitable[None]) -> None:
        try:
            await step
        except ApiError as err:
            if err.code == 409:
                raise  # stale cache: the controller looks again at once
            self.errors.append(err)

    async def _apply(self, work: ManifestWork) -> ManifestWork | None:
        """``applyWork``: apply, then tell ``ManifestApplied`` from the work's Applied."""
        try:
            current = await self.c.apply_work(work)
        except ApiError as err:
            if err.code == 409:
                raise
            self._failed(f"failed to apply manifestWork: {err}")
            self.errors.append(err)
            return None
        applied = conditions.find(conditions.of(current), wellknown.WORK_APPLIED)
        if applied is None:
            # The work agent has not reported yet: a False from before is stale.
            mine = _condition(self.mca, wellknown.ADDON_MANIFEST_APPLIED)
            if mine is not None and mine.get("status") == "False":
                conditions.remove_condition(_conditions(self.mca), wellknown.ADDON_MANIFEST_APPLIED)
        elif applied.get("status") == "True":
            message = "manifests of addon are applied successfully"
            self.c.set(self.mca, wellknown.ADDON_MANIFEST_APPLIED, "True", REASON_APPLIED, message)
        else:
            message = "failed to apply the manifests of addon"
            status = ("False", REASON_APPLY_FAILED, message)
            self.c.set(self.mca, wellknown.ADDON_MANIFEST_APPLIED, *status)
        return current

    async def _hook(self) -> None:
        """``defaultHookSyncer``: the finalizer while the add-on has hooks; on deletion,
        the hook work, and the finalizer off once it completed."""
        assert self.objects is not None
        work = works.build_hook_work(self.mca, self.objects)
        if work is None:
            hooks.remove_finalizer(self.mca)
            return
        if hooks.add_finalizer(self.mca) or not _deleting(self.mca):
            return
        current = await self._apply(work)
        if current is None:
            return
        name = work["metadata"]["name"]
        kind = wellknown.ADDON_HOOK_MANIFEST_COMPLETED
        if hooks.completed(current):
            message = f"hook manifestWork {name} is completed."
            self.c.set(self.mca, kind, "True", hooks.REASON_COMPLETED, message)
            hooks.remove_finalizer(self.mca)
            return
        message = f"hook manifestWork {name} is not completed."
        self.c.set(self.mca, kind, "False", hooks.REASON_NOT_COMPLETED, message)

    def _health(self) -> None:
        mode = health.mode_for(self.options.health)
        if mode is None:
            return
        self.mca.setdefault("status", {}).setdefault("healthCheck", {})["mode"] = mode
        meta = self.mca["metadata"]
        try:
            verdict = health.available(
                self.options,
                mca=self.mca,
                cluster=self.cluster,
                works=self.c.deploy_works(meta["namespace"], meta["name"]),
                deploy_prefix=works.deploy_work_prefix(meta["name"]),
                fields=self._probe_fields(),
            )
        except _RenderFailed as err:
            self.errors.append(err.cause)
            return
        if verdict is not None:
            status = (verdict.status, verdict.reason, verdict.message)
            self.c.set(self.mca, wellknown.ADDON_AVAILABLE, *status)

    def _probe_fields(
        self,
    ) -> Callable[[], tuple[list[agent.ProbeField], agent.HealthChecker | None]]:
        def fields() -> tuple[list[agent.ProbeField], agent.HealthChecker | None]:
            if self.render_error is not None:
                raise _RenderFailed(self.render_error)
            return probes.probe_fields(self.options, self.objects or [])

        return fields

    def raise_errors(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise DeployError("; ".join(str(err) for err in self.errors))


class _RenderFailed(Exception):
    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _conditions(obj: ManagedClusterAddOn) -> list[Obj]:
    return obj.setdefault("status", {}).setdefault("conditions", [])  # type: ignore[return-value]


def _condition(obj: Any, type: str) -> Obj | None:
    return conditions.find(conditions.of(obj), type)


def _deleting(obj: Mapping[str, Any]) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))
