"""Pre-delete hooks: whether the hook work has done its job (addon-framework's
``hookWorkIsCompleted``) and the finalizer that holds the add-on until it has."""

from __future__ import annotations

from pyocm.api import conditions, wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.work_v1 import (
    ManifestWork,
    ManifestWorkSpecManifestConfigResourceIdentifier,
    ManifestWorkStatusResourceStatusManifestStatusFeedbackValueFieldValue,
)

FieldValue = ManifestWorkStatusResourceStatusManifestStatusFeedbackValueFieldValue
REASON_COMPLETED = "HookManifestIsCompleted"
REASON_NOT_COMPLETED = "HookManifestIsNotCompleted"
#: Finalizers of older releases, dropped whenever the finalizers are rewritten.
DEPRECATED_FINALIZERS = frozenset(
    {
        "cluster.open-cluster-management.io/addon-pre-delete",
        "cluster.open-cluster-management.io/hosting-addon-pre-delete",
        "cluster.open-cluster-management.io/hosting-manifests-cleanup",
    }
)
#: What each hook resource reports when it is done.
_DONE = {"jobs": ("JobComplete", "True"), "pods": ("PodPhase", "Succeeded")}


def has_finalizer(mca: ManagedClusterAddOn) -> bool:
    return wellknown.ADDON_PRE_DELETE_FINALIZER in mca["metadata"].get("finalizers", [])


def add_finalizer(mca: ManagedClusterAddOn) -> bool:
    """``addonAddFinalizer``: add the pre-delete finalizer; return whether it was missing.
    Deprecated finalizers go only when the list is rewritten anyway."""
    meta = mca["metadata"]
    found = meta.get("finalizers")
    if found is None:
        meta["finalizers"] = [wellknown.ADDON_PRE_DELETE_FINALIZER]
        return True
    if wellknown.ADDON_PRE_DELETE_FINALIZER in found:
        return False
    kept = [f for f in found if f not in DEPRECATED_FINALIZERS]
    meta["finalizers"] = [*kept, wellknown.ADDON_PRE_DELETE_FINALIZER]
    return True


def remove_finalizer(mca: ManagedClusterAddOn) -> bool:
    """``addonRemoveFinalizer``: remove it (and the deprecated ones); return whether
    anything was removed."""
    meta = mca["metadata"]
    found = meta.get("finalizers") or []
    gone = {wellknown.ADDON_PRE_DELETE_FINALIZER, *DEPRECATED_FINALIZERS}
    kept = [f for f in found if f not in gone]
    if len(kept) == len(found):
        return False
    meta["finalizers"] = kept
    return True


def completed(work: ManifestWork) -> bool:
    """Whether every hook Job completed and every hook Pod succeeded, as the work agent
    reports them (the work Available and the hooks' WellKnownStatus)."""
    if not conditions.is_true(conditions.of(work), wellknown.WORK_AVAILABLE):
        return False
    configs = work.get("spec", {}).get("manifestConfigs") or []
    if not configs:
        return False
    for config in configs:
        resource = config["resourceIdentifier"]
        done = _DONE.get(resource.get("resource", ""))
        if done is None:
            return False
        name, wanted = done
        if _value(work, resource, name).get("string") != wanted:
            return False
    return True


def _value(
    work: ManifestWork, resource: ManifestWorkSpecManifestConfigResourceIdentifier, name: str
) -> FieldValue | dict[str, str]:
    """``FindManifestValue``, with its quirk: a manifest with no feedback met before the
    one wanted ends the search empty-handed."""
    for manifest in work.get("status", {}).get("resourceStatus", {}).get("manifests") or []:
        values = (manifest.get("statusFeedback") or {}).get("values") or []
        if not values:
            return {}
        meta = manifest.get("resourceMeta") or {}
        if all(
            meta.get(key, "") == resource.get(key, "")
            for key in ("group", "resource", "name", "namespace")
        ):
            for value in values:
                if value.get("name") == name:
                    return value["fieldValue"]
    return {}
