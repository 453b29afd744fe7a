"""Every kind pyocm defines, in the order their CRDs are installed.

Versions of one resource appear in CRD version order (the add-on kinds list ``v1alpha1``
before ``v1beta1``, as upstream does). Lookups raise ``KeyError`` for unknown kinds so a
typo in a controller fails loudly at start-up.
"""

from __future__ import annotations

from pyocm.api import (
    addon_v1alpha1,
    addon_v1beta1,
    cluster_v1,
    cluster_v1alpha1,
    cluster_v1beta1,
    cluster_v1beta2,
    descriptor,
    work_v1,
    work_v1alpha1,
)

DESCRIPTORS: tuple[descriptor.ResourceDescriptor, ...] = (
    cluster_v1.MANAGED_CLUSTER,
    cluster_v1alpha1.CLUSTER_CLAIM,
    cluster_v1alpha1.ADDON_PLACEMENT_SCORE,
    cluster_v1beta1.PLACEMENT,
    cluster_v1beta1.PLACEMENT_DECISION,
    cluster_v1beta2.MANAGED_CLUSTER_SET,
    cluster_v1beta2.MANAGED_CLUSTER_SET_BINDING,
    addon_v1alpha1.CLUSTER_MANAGEMENT_ADDON,
    addon_v1beta1.CLUSTER_MANAGEMENT_ADDON,
    addon_v1alpha1.MANAGED_CLUSTER_ADDON,
    addon_v1beta1.MANAGED_CLUSTER_ADDON,
    addon_v1alpha1.ADDON_DEPLOYMENT_CONFIG,
    addon_v1beta1.ADDON_DEPLOYMENT_CONFIG,
    addon_v1alpha1.ADDON_TEMPLATE,
    work_v1.MANIFEST_WORK,
    work_v1.APPLIED_MANIFEST_WORK,
    work_v1alpha1.MANIFEST_WORK_REPLICA_SET,
)


def find(*, group: str, version: str, kind: str) -> descriptor.ResourceDescriptor:
    """The descriptor of ``kind`` in ``group/version``."""
    for candidate in DESCRIPTORS:
        if (candidate.group, candidate.version, candidate.kind) == (group, version, kind):
            return candidate
    raise KeyError(f"{group}/{version}, Kind={kind}")


def versions_of(*, group: str, plural: str) -> tuple[descriptor.ResourceDescriptor, ...]:
    """All versions of one resource, in CRD version order."""
    found = tuple(d for d in DESCRIPTORS if (d.group, d.plural) == (group, plural))
    if not found:
        raise KeyError(f"{plural}.{group}")
    return found


def storage_version(*, group: str, plural: str) -> descriptor.ResourceDescriptor:
    """The version objects of the resource are persisted in."""
    return next(d for d in versions_of(group=group, plural=plural) if d.storage)


def crd_names() -> tuple[str, ...]:
    """Names of the CRDs, one per resource, in install order without duplicates."""
    return tuple(dict.fromkeys(d.crd_name for d in DESCRIPTORS))
