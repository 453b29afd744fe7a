"""OCM's kinds as :class:`~pyocm.kube.kinds.Kind` values, taken from the API catalog
(so a version bump there flows here), for the features that address them.
"""

from __future__ import annotations

from pyocm.api import catalog
from pyocm.kube.kinds import Kind


def _ocm(group: str, version: str, kind: str) -> Kind:
    found = catalog.find(group=group, version=version, kind=kind)
    return Kind(found.group, found.version, found.kind, found.plural, found.namespaced)


_CLUSTER = "cluster.open-cluster-management.io"
_ADDON = "addon.open-cluster-management.io"

MANAGED_CLUSTER = _ocm(_CLUSTER, "v1", "ManagedCluster")
CLUSTER_CLAIM = _ocm(_CLUSTER, "v1alpha1", "ClusterClaim")
ADD_ON_PLACEMENT_SCORE = _ocm(_CLUSTER, "v1alpha1", "AddOnPlacementScore")
MANAGED_CLUSTER_SET = _ocm(_CLUSTER, "v1beta2", "ManagedClusterSet")
MANAGED_CLUSTER_SET_BINDING = _ocm(_CLUSTER, "v1beta2", "ManagedClusterSetBinding")
PLACEMENT = _ocm(_CLUSTER, "v1beta1", "Placement")
PLACEMENT_DECISION = _ocm(_CLUSTER, "v1beta1", "PlacementDecision")
MANAGED_CLUSTER_ADDON = _ocm(_ADDON, "v1beta1", "ManagedClusterAddOn")
CLUSTER_MANAGEMENT_ADDON = _ocm(_ADDON, "v1beta1", "ClusterManagementAddOn")
_WORK = "work.open-cluster-management.io"

MANIFEST_WORK = _ocm(_WORK, "v1", "ManifestWork")
APPLIED_MANIFEST_WORK = _ocm(_WORK, "v1", "AppliedManifestWork")
MANIFEST_WORK_REPLICA_SET = _ocm(_WORK, "v1alpha1", "ManifestWorkReplicaSet")
