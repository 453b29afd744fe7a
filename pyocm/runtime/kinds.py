"""The kinds the runtime and features address, as group/version/kind/plural/scope.

The OCM kinds come from the API catalog, so a version bump there flows here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyocm.api import catalog


@dataclass(frozen=True)
class Kind:
    """One served kind: enough to build its REST paths without discovery."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _ocm(group: str, version: str, kind: str) -> Kind:
    found = catalog.find(group=group, version=version, kind=kind)
    return Kind(found.group, found.version, found.kind, found.plural, found.namespaced)


_CLUSTER = "cluster.open-cluster-management.io"
_ADDON = "addon.open-cluster-management.io"

NAMESPACE = Kind("", "v1", "Namespace", "namespaces", False)
SECRET = Kind("", "v1", "Secret", "secrets", True)
CONFIGMAP = Kind("", "v1", "ConfigMap", "configmaps", True)
SERVICE_ACCOUNT = Kind("", "v1", "ServiceAccount", "serviceaccounts", True)
NODE = Kind("", "v1", "Node", "nodes", False)
CORE_EVENT = Kind("", "v1", "Event", "events", True)
EVENT = Kind("events.k8s.io", "v1", "Event", "events", True)
LEASE = Kind("coordination.k8s.io", "v1", "Lease", "leases", True)
CSR = Kind(
    "certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", False
)
CLUSTER_ROLE = Kind("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False)
CLUSTER_ROLE_BINDING = Kind(
    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False
)
ROLE = Kind("rbac.authorization.k8s.io", "v1", "Role", "roles", True)
ROLE_BINDING = Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True)
CRD = Kind(
    "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False
)
SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False
)
SELF_SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False
)

MANAGED_CLUSTER = _ocm(_CLUSTER, "v1", "ManagedCluster")
CLUSTER_CLAIM = _ocm(_CLUSTER, "v1alpha1", "ClusterClaim")
MANAGED_CLUSTER_SET = _ocm(_CLUSTER, "v1beta2", "ManagedClusterSet")
MANAGED_CLUSTER_SET_BINDING = _ocm(_CLUSTER, "v1beta2", "ManagedClusterSetBinding")
PLACEMENT = _ocm(_CLUSTER, "v1beta1", "Placement")
PLACEMENT_DECISION = _ocm(_CLUSTER, "v1beta1", "PlacementDecision")
MANAGED_CLUSTER_ADDON = _ocm(_ADDON, "v1beta1", "ManagedClusterAddOn")
CLUSTER_MANAGEMENT_ADDON = _ocm(_ADDON, "v1beta1", "ClusterManagementAddOn")
MANIFEST_WORK = _ocm("work.open-cluster-management.io", "v1", "ManifestWork")
