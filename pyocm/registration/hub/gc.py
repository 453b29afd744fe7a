"""Clean a removed cluster's namespace: add-ons first, then ManifestWorks, lowest priority first.

Every live cluster carries the ``resource-cleanup`` finalizer. Once it is being
deleted, each kind of ``--gc-resource-list`` is emptied in order, and within a kind only
the objects with the lowest ``open-cluster-management.io/cleanup-priority`` (0 to 100,
0 when missing or invalid) are deleted per round. The ``Deleting`` condition tells how
far cleanup is; the finalizer goes when nothing is left.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.api import cluster_v1, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.meta_v1 import ObjectMeta
from pyocm.base.clock import Clock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer
from pyocm.runtime.status import add_finalizer, remove_finalizer, set_condition

Obj = dict[str, Any]  # an object of any of the kinds cleaned up
DEFAULT_RESOURCES: tuple[Kind, ...] = (ocm.MANAGED_CLUSTER_ADDON, ocm.MANIFEST_WORK)
RETRY = 5.0


def cleanup_priority(obj: Mapping[str, Any]) -> int:
    meta: ObjectMeta = obj.get("metadata", {})
    text = meta.get("annotations", {}).get(wellknown.CLEANUP_PRIORITY_ANNOTATION)
    try:
        value = int(str(text))
    except ValueError:
        return 0
    return value if 0 <= value <= 100 else 0


class GcController:
    def __init__(
        self,
        api: Api,
        clusters: Informer,
        *,
        clock: Clock,
        recorder: Recorder,
        resources: tuple[Kind, ...] = DEFAULT_RESOURCES,
    ) -> None:
        self.api = api
        self.clusters = clusters
        self.clock = clock
        self.recorder = recorder
        self.resources = resources
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER, recorder=recorder)

    async def reconcile(self, name: str) -> Result | None:
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None:
            return None
        if not cluster["metadata"].get("deletionTimestamp"):
            await add_finalizer(
                self.api,
                ocm.MANAGED_CLUSTER,
                models.wire(cluster),
                wellknown.RESOURCE_CLEANUP_FINALIZER,
            )
            return None
        if wellknown.RESOURCE_CLEANUP_FINALIZER not in cluster["metadata"].get("finalizers", []):
            return None
        for kind in self.resources:
            items = await self._items(kind, name)
            if items:
                await self._delete_lowest(cluster, kind, items)
                return Result(requeue_after=RETRY)
        cluster = await self._deleting(
            cluster, "True", wellknown.REASON_NO_RESOURCE, "No cleaned resource in cluster ns."
        )
        await self.recorder.event(
            models.wire(cluster),
            reason="ResourceCleanupCompleted",
            note=f"All resources are cleaned up in cluster ns {name}",
        )
        await remove_finalizer(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            wellknown.RESOURCE_CLEANUP_FINALIZER,
        )
        return None

    async def _deleting(
        self, cluster: ManagedCluster, status: str, reason: str, message: str
    ) -> ManagedCluster:
        updated = await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            clock=self.clock,
            type=wellknown.CLUSTER_DELETING,
            status=status,
            reason=reason,
            message=message,
        )
        return models.view(ManagedCluster, updated)

    async def _items(self, kind: Kind, namespace: str) -> list[Obj]:
        try:
            return list((await self.api.list_all(kind, namespace=namespace)).get("items") or [])
        except ApiError as err:
            if err.code == 404:  # kind not served here
                return []
            raise

    async def _delete_lowest(self, cluster: ManagedCluster, kind: Kind, items: list[Obj]) -> None:
        pending = sum(1 for item in items if item["metadata"].get("finalizers"))
        cluster = await self._deleting(
            cluster,
            "False",
            wellknown.REASON_RESOURCE_REMAINING,
            f"The resource {kind.plural} is remaning, the remaining count is {len(items)}, "
            f"the finalizer pending count is {pending}",
        )
        lowest = min(cleanup_priority(item) for item in items)
        for item in items:
            if cleanup_priority(item) == lowest and not item["metadata"].get("deletionTimestamp"):
                try:
                    await self.api.delete(
                        kind, item["metadata"]["name"], namespace=item["metadata"]["namespace"]
                    )
                except ApiError as err:
                    if err.code != 404:
                        await self._deleting(
                            cluster, "False", wellknown.REASON_DELETING_ERROR, err.message
                        )
                        raise
