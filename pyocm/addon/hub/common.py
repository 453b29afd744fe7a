"""What the hub's add-on controllers share: which ClusterManagementAddOns the add-on
manager manages, the owner reference to one, the indexes and queue-key mappers of
upstream's ``pkg/addon/index``, and the status patch upstream's patcher sends."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.api.models import meta_v1
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn
from pyocm.kube.kinds import Kind
from pyocm.runtime.cache import key_of
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Mapper
from pyocm.runtime.informer import Informer

Obj = dict[str, Any]

MANUAL = "Manual"
PLACEMENTS = "Placements"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"

#: MCA informer index: the add-on's name (``ManagedClusterAddonByName``).
MCA_BY_NAME = "managedClusterAddonByName"
#: CMA informer index: ``<namespace>/<placement>`` of each install strategy placement of a
#: Placements CMA (``ClusterManagementAddonByPlacement``).
CMA_BY_PLACEMENT = "clusterManagementAddonByPlacement"


def managed_by_addon_manager(obj: Mapping[str, Any]) -> bool:
    """``ManagedByAddonManager``: the lifecycle annotation is absent or ``addon-manager``."""
    annotations = obj.get("metadata", {}).get("annotations") or {}
    value = annotations.get(wellknown.ADDON_LIFECYCLE_ANNOTATION)
    return value is None or value == wellknown.ADDON_LIFECYCLE_ADDON_MANAGER


def placements_strategy(cma: ClusterManagementAddOn) -> bool:
    """Whether the install strategy is Placements (upstream treats "" as Manual)."""
    kind = cma.get("spec", {}).get("installStrategy", {}).get("type", "")
    return kind not in ("", MANUAL)


def owner_reference(cma: Mapping[str, Any]) -> meta_v1.OwnerReference:
    """``metav1.NewControllerRef`` to the CMA, as ``addon.open-cluster-management.io/v1beta1``."""
    meta = cma["metadata"]
    return {
        "apiVersion": ocm.CLUSTER_MANAGEMENT_ADDON.api_version,
        "kind": ocm.CLUSTER_MANAGEMENT_ADDON.kind,
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def addon_annotations(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """The annotations whose key starts with the add-on group (upstream's prefix test:
    ``addon.open-cluster-management.io`` with no slash, as there)."""
    return {k: v for k, v in (annotations or {}).items() if k.startswith(wellknown.ADDON_GROUP)}


def mca_by_name(obj: Obj) -> list[str]:
    return [obj["metadata"]["name"]]


def cma_by_placement(obj: Obj) -> list[str]:
    if not placements_strategy(obj):  # type: ignore[arg-type]
        return []
    placements = obj.get("spec", {}).get("installStrategy", {}).get("placements") or []
    return [f"{p.get('namespace', '')}/{p.get('name', '')}" for p in placements]


def index_mcas(informer: Informer) -> Informer:
    return informer.add_index(MCA_BY_NAME, mca_by_name)


def index_cmas(informer: Informer) -> Informer:
    return informer.add_index(CMA_BY_PLACEMENT, cma_by_placement)


def cmas_by_placement(cmas: Informer) -> Mapper:
    """Mapper: a Placement to the CMAs installing through it."""

    def keys(obj: Obj) -> list[str]:
        return cmas.store.index_keys(CMA_BY_PLACEMENT, key_of(obj))

    return keys


def cmas_by_decision(cmas: Informer) -> Mapper:
    """Mapper: a PlacementDecision to the CMAs installing through its placement."""

    def keys(obj: Obj) -> list[str]:
        placement = (obj["metadata"].get("labels") or {}).get(PLACEMENT_LABEL)
        if not placement:
            return []
        found = f"{obj['metadata'].get('namespace', '')}/{placement}"
        return cmas.store.index_keys(CMA_BY_PLACEMENT, found)

    return keys


def mca_name(obj: Obj) -> list[str]:
    """Mapper: an MCA to the key of its CMA (the same name)."""
    return [obj["metadata"]["name"]]


def mcas_of_cma(mcas: Informer) -> Mapper:
    """Mapper: a CMA to the keys of every MCA of it (``ManagedClusterAddonByNameQueueKey``)."""

    def keys(obj: Obj) -> list[str]:
        return mcas.store.index_keys(MCA_BY_NAME, obj["metadata"]["name"])

    return keys


async def patch_status(
    api: Api, kind: Kind, old: Mapping[str, Any], status: Mapping[str, Any]
) -> bool:
    """Write ``status`` when it differs from ``old``'s, as upstream's ``PatchStatus``:
    a merge patch of the status subresource, guarded by uid and resourceVersion so a
    status computed from a stale object is refused (a Conflict the controller retries).
    Returns whether anything was written."""
    if old.get("status", {}) == status:
        return False
    meta = old["metadata"]
    patch: Obj = {
        "metadata": {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")},
        "status": _merge_patch(old.get("status", {}), status),
    }
    await api.patch(
        kind, meta["name"], patch, namespace=meta.get("namespace"), subresource="status"
    )
    return True


def _merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> Obj:
    """The JSON merge patch turning ``old`` into ``new`` (lists replaced whole)."""
    patch: Obj = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            if value != before:
                patch[key] = _merge_patch(before, value)
        elif value != before:
            patch[key] = copy.deepcopy(value)
    return patch


def managed_addon(
    mcas: Informer, cmas: Informer, key: str
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The cached MCA ``key`` and its ClusterManagementAddOn, when both exist and the
    add-on manager manages the add-on (what per-MCA controllers act on)."""
    mca = mcas.store.get(key)
    if mca is None:
        return None
    cma = cmas.store.get(mca["metadata"]["name"])
    if cma is None or not managed_by_addon_manager(cma):
        return None
    return mca, cma
