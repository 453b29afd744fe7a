"""Accept, deny and remove ManagedClusters (upstream's managedcluster controller).

Accepted (``spec.hubAcceptsClient: true``): the cluster namespace, the cleanup
finalizer, the per-cluster RBAC of :mod:`.rbac`, and ``HubAcceptedManagedCluster``
True. Denied after having been accepted: access cut back to reading its own
ManagedCluster, the RoleBindings removed (the work one waits until no ManifestWork is
left), then the condition False. Deleted: all per-cluster RBAC removed, then the
finalizer. The cluster namespace is never deleted here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pyocm.api import cluster_v1, conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.rbac_v1 import RoleBinding
from pyocm.base.clock import Clock
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.registration.hub import rbac
from pyocm.runtime import malformed
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.ensure import delete_if_present, ensure
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer
from pyocm.runtime.status import add_finalizer, remove_finalizer, set_condition

log = logging.getLogger(__name__)
WORK_WAIT = 5.0


class ManagedClusterController:
    def __init__(
        self,
        api: Api,
        clusters: Informer,
        *,
        clock: Clock,
        recorder: Recorder,
        labels: Mapping[str, str] = {},
        auto_accept: bool = False,
        caches: Mapping[str, Store] = {},
    ) -> None:
        self.api = api
        self.clusters = clusters
        #: Informer stores by kind name (Namespace, ClusterRole, ...), read before writing.
        self.caches = dict(caches)
        self.clock = clock
        self.recorder = recorder
        self.labels = dict(labels)
        self.auto_accept = auto_accept
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER, recorder=recorder)

    async def reconcile(self, name: str) -> Result | None:
        # Ill-typed fields read as absent: a hubAcceptsClient of "true" accepts nothing.
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None:
            await self._remove_access(name)
            return None
        if cluster["metadata"].get("deletionTimestamp"):
            return await self._finalize(cluster)
        if self.auto_accept and wellknown.AUTO_ACCEPTED_ANNOTATION not in cluster["metadata"].get(
            "annotations", {}
        ):
            await self._auto_accept(cluster)
            return None  # the patch brings the cluster back through the informer
        if cluster.get("spec", {}).get("hubAcceptsClient", False):
            await self._accept(cluster)
            return None
        return await self._deny(cluster)

    async def _auto_accept(self, cluster: ManagedCluster) -> None:
        """Gate ManagedClusterAutoApproval: accept once; the annotation makes a later deny stick."""
        stamp = timefmt.format_time(self.clock.now())
        patch: ManagedCluster = {
            "metadata": {
                "resourceVersion": cluster["metadata"]["resourceVersion"],
                "annotations": {wellknown.AUTO_ACCEPTED_ANNOTATION: stamp},
            }
        }
        if not cluster.get("spec", {}).get("hubAcceptsClient", False):
            patch["spec"] = {"hubAcceptsClient": True}
        await self.api.patch(ocm.MANAGED_CLUSTER, cluster["metadata"]["name"], models.wire(patch))

    async def _accept(self, cluster: ManagedCluster) -> None:
        name = cluster["metadata"]["name"]
        try:
            await self._apply(
                kinds.NAMESPACE, {"metadata": {"name": name, "labels": self._labels(name)}}
            )
            finalized = await add_finalizer(
                self.api,
                ocm.MANAGED_CLUSTER,
                models.wire(cluster),
                wellknown.API_RESOURCE_CLEANUP_FINALIZER,
            )
            cluster = models.view(ManagedCluster, finalized)
            await self._apply_cluster_role(name, accepted=True)
            await self._apply(kinds.ROLE_BINDING, self._registration_binding(name))
            await self._apply(kinds.ROLE_BINDING, self._work_binding(name))
        except ApiError as err:
            if err.code == 409:
                raise
            await self._accepted(cluster, "False", "Error", err.message)
            raise
        was_accepted = conditions.is_true(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED)
        await self._accepted(
            cluster, "True", wellknown.REASON_HUB_ADMIN_ACCEPTED, "Accepted by hub cluster admin"
        )
        if not was_accepted:
            await self.recorder.event(
                models.wire(cluster),
                reason="ManagedClusterAccepted",
                note=f"managed cluster {name} is accepted by hub",
            )

    async def _deny(self, cluster: ManagedCluster) -> Result | None:
        name = cluster["metadata"]["name"]
        if not conditions.is_true(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED):
            return None  # never accepted (or already denied): nothing was granted
        await self.recorder.event(
            models.wire(cluster),
            reason="ManagedClusterDenied",
            note=f"managed cluster {name} is denied by hub",
        )
        await self._apply_cluster_role(name, accepted=False)
        await self._remove_bindings(name)
        if await self._works_remain(name):
            return Result(requeue_after=WORK_WAIT)
        await self._release_work_binding(name)
        await self._accepted(
            cluster, "False", wellknown.REASON_HUB_ADMIN_DENIED, "Denied by hub cluster admin"
        )
        return None

    async def _finalize(self, cluster: ManagedCluster) -> Result | None:
        name = cluster["metadata"]["name"]
        await self._remove_access(name)
        if await self._works_remain(name):
            return Result(requeue_after=WORK_WAIT)
        await self._release_work_binding(name)
        await remove_finalizer(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            wellknown.API_RESOURCE_CLEANUP_FINALIZER,
        )
        return None

    async def _accepted(
        self, cluster: ManagedCluster, status: str, reason: str, message: str
    ) -> None:
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            clock=self.clock,
            type=wellknown.CLUSTER_HUB_ACCEPTED,
            status=status,
            reason=reason,
            message=message,
        )

    async def _apply_cluster_role(self, name: str, *, accepted: bool) -> None:
        """The per-cluster ClusterRole (full rights, or read-only on itself) and its binding."""
        await self._apply(
            kinds.CLUSTER_ROLE, rbac.cluster_role(name, accepted=accepted, labels=self.labels)
        )
        await self._apply(
            kinds.CLUSTER_ROLE_BINDING, rbac.cluster_role_binding(name, labels=self.labels)
        )

    async def _apply(self, kind: kinds.Kind, desired: Mapping[str, Any]) -> None:
        await ensure(self.api, kind, models.wire(desired), cache=self.caches.get(kind.kind))

    async def _remove_bindings(self, name: str) -> None:
        for binding in (rbac.registration_binding_name(name), rbac.work_binding_name(name)):
            await delete_if_present(self.api, kinds.ROLE_BINDING, binding, namespace=name)

    async def _remove_access(self, name: str) -> None:
        await delete_if_present(self.api, kinds.CLUSTER_ROLE, rbac.cluster_role_name(name))
        await delete_if_present(self.api, kinds.CLUSTER_ROLE_BINDING, rbac.cluster_role_name(name))
        await self._remove_bindings(name)

    async def _works_remain(self, name: str) -> bool:
        try:
            works = await self.api.list(ocm.MANIFEST_WORK, namespace=name, limit=1)
        except ApiError as err:
            if err.code == 404:  # no ManifestWork API on this hub
                return False
            raise
        return bool(works.get("items"))

    async def _release_work_binding(self, name: str) -> None:
        """Strip the work RoleBinding's finalizer so its pending deletion completes."""
        try:
            binding = await self.api.get(
                kinds.ROLE_BINDING, rbac.work_binding_name(name), namespace=name
            )
        except ApiError as err:
            if err.code == 404:
                return
            raise
        await remove_finalizer(
            self.api, kinds.ROLE_BINDING, binding, wellknown.MANIFEST_WORK_CLEANUP_FINALIZER
        )

    def _labels(self, name: str) -> dict[str, str]:
        return {wellknown.CLUSTER_NAME_LABEL: name, **self.labels}

    def _registration_binding(self, name: str) -> RoleBinding:
        return rbac.role_binding(
            name,
            name=rbac.registration_binding_name(name),
            role=rbac.REGISTRATION_ROLE,
            labels=self.labels,
        )

    def _work_binding(self, name: str) -> RoleBinding:
        return rbac.role_binding(
            name,
            name=rbac.work_binding_name(name),
            role=rbac.WORK_ROLE,
            labels=self.labels,
            finalizers=[wellknown.MANIFEST_WORK_CLEANUP_FINALIZER],
        )
