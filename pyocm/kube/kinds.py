"""Kinds by group, version, kind, plural and scope: enough to build REST paths
without discovery, and the built-in Kubernetes kinds pyocm addresses.

OCM's kinds are in :mod:`pyocm.api.kinds`; anything else the server serves, CRDs
included, comes from :class:`~pyocm.runtime.restmapper.RESTMapper`.
"""

from __future__ import annotations

from dataclasses import dataclass


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
VALIDATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    False,
)
MUTATING_WEBHOOK_CONFIGURATION = Kind(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingWebhookConfiguration",
    "mutatingwebhookconfigurations",
    False,
)
SELF_SUBJECT_ACCESS_REVIEW = Kind(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False
)

# Workload and service kinds: served by every pyocm API server (so an embedded managed
# cluster can hold what a ManifestWork or an add-on agent deploys), and given simulated
# status there, since no kubelet runs.
POD = Kind("", "v1", "Pod", "pods", True)
SERVICE = Kind("", "v1", "Service", "services", True)
ENDPOINTS = Kind("", "v1", "Endpoints", "endpoints", True)
PERSISTENT_VOLUME_CLAIM = Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True)
DEPLOYMENT = Kind("apps", "v1", "Deployment", "deployments", True)
REPLICA_SET = Kind("apps", "v1", "ReplicaSet", "replicasets", True)
STATEFUL_SET = Kind("apps", "v1", "StatefulSet", "statefulsets", True)
DAEMON_SET = Kind("apps", "v1", "DaemonSet", "daemonsets", True)
CONTROLLER_REVISION = Kind("apps", "v1", "ControllerRevision", "controllerrevisions", True)
JOB = Kind("batch", "v1", "Job", "jobs", True)
CRON_JOB = Kind("batch", "v1", "CronJob", "cronjobs", True)
POD_DISRUPTION_BUDGET = Kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True)
NETWORK_POLICY = Kind("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True)
INGRESS = Kind("networking.k8s.io", "v1", "Ingress", "ingresses", True)
