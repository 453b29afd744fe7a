"""The RBAC objects registration keeps on the hub, named and shaped as upstream OCM's.

Per accepted cluster ``<c>``: a ClusterRole and ClusterRoleBinding
``open-cluster-management:managedcluster:<c>`` and two RoleBindings in namespace ``<c>``
to the common ``registration`` and ``work`` roles. Their subjects are the groups the
agent's client certificate carries, so access follows acceptance, not a user name.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyocm.api import wellknown
from pyocm.api.models.meta_v1 import ObjectMeta
from pyocm.api.models.rbac_v1 import (
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    RoleBinding,
    Subject,
)

RBAC = "rbac.authorization.k8s.io"
PREFIX = "open-cluster-management:managedcluster"
REGISTRATION_ROLE = f"{PREFIX}:registration"
WORK_ROLE = f"{PREFIX}:work"
BOOTSTRAP_ROLE = "open-cluster-management:bootstrap"
BOOTSTRAP_GROUP = "system:bootstrappers:managedcluster"
BOOTSTRAP_NAMESPACE = "open-cluster-management"
#: Upstream's bootstrap ServiceAccount (the cluster-manager chart's, which ``clusteradm
#: get token`` asks a token of): ``agent-registration-bootstrap`` since 2025.
BOOTSTRAP_SERVICE_ACCOUNT = "agent-registration-bootstrap"
#: The name before that rename, which earlier pyocm hubs created.
LEGACY_BOOTSTRAP_SERVICE_ACCOUNT = "cluster-bootstrap"
#: The chart's two bindings of the bootstrap role: tokens' group, and the ServiceAccount.
BOOTSTRAP_GROUP_BINDING = f"{BOOTSTRAP_ROLE}:managedcluster"
BOOTSTRAP_SA_BINDING = f"{BOOTSTRAP_ROLE}:agent-registration"
#: The single binding earlier pyocm hubs stored (group and legacy ServiceAccount).
LEGACY_BOOTSTRAP_BINDING = BOOTSTRAP_ROLE
SUBJECT_PREFIX = "system:open-cluster-management:"
MANAGED_CLUSTERS_GROUP = "system:open-cluster-management:managed-clusters"


def cluster_role_name(cluster: str) -> str:
    return f"{PREFIX}:{cluster}"


def registration_binding_name(cluster: str) -> str:
    return f"{PREFIX}:{cluster}:registration"


def work_binding_name(cluster: str) -> str:
    return f"{PREFIX}:{cluster}:work"


def cluster_groups(cluster: str) -> list[str]:
    """The groups bound for cluster ``<c>``: its certificate's O, and the legacy name."""
    return [f"{SUBJECT_PREFIX}{cluster}", f"open-cluster-management:{cluster}"]


def _rule(
    group: str, resources: list[str], verbs: list[str], names: list[str] | None = None
) -> PolicyRule:
    rule: PolicyRule = {"apiGroups": [group], "resources": resources, "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return rule


def _labels(cluster: str, extra: Mapping[str, str]) -> dict[str, str]:
    return {wellknown.CLUSTER_NAME_LABEL: cluster, **extra}


def cluster_role(cluster: str, *, accepted: bool, labels: Mapping[str, str] = {}) -> ClusterRole:
    group = wellknown.CLUSTER_GROUP
    if accepted:
        rules = [
            _rule(
                "certificates.k8s.io",
                ["certificatesigningrequests"],
                ["create", "get", "list", "watch"],
            ),
            _rule(wellknown.REGISTER_GROUP, ["managedclusters/clientcertificates"], ["renew"]),
            _rule(group, ["managedclusters"], ["get", "list", "update", "watch"], [cluster]),
            _rule(group, ["managedclusters/status"], ["patch", "update"], [cluster]),
        ]
    else:
        rules = [_rule(group, ["managedclusters"], ["get", "list", "watch"], [cluster])]
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": cluster_role_name(cluster), "labels": _labels(cluster, labels)},
        "rules": rules,
    }


def _subjects(cluster: str) -> list[Subject]:
    return [{"apiGroup": RBAC, "kind": "Group", "name": name} for name in cluster_groups(cluster)]


def cluster_role_binding(cluster: str, *, labels: Mapping[str, str] = {}) -> ClusterRoleBinding:
    name = cluster_role_name(cluster)
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": _labels(cluster, labels)},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
        "subjects": _subjects(cluster),
    }


def role_binding(
    cluster: str,
    *,
    name: str,
    role: str,
    labels: Mapping[str, str] = {},
    finalizers: list[str] | None = None,
) -> RoleBinding:
    metadata: ObjectMeta = {"name": name, "namespace": cluster, "labels": _labels(cluster, labels)}
    if finalizers:
        metadata["finalizers"] = finalizers
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": metadata,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": _subjects(cluster),
    }


def common_roles(*, labels: Mapping[str, str] = {}) -> list[ClusterRole]:
    """The two roles every accepted cluster's RoleBindings point at."""
    addon, work = wellknown.ADDON_GROUP, wellknown.WORK_GROUP
    common = {wellknown.CLUSTER_NAME_LABEL: "", **labels}
    registration_rules = [
        _rule("coordination.k8s.io", ["leases"], ["get", "list", "watch", "update"]),
        _rule(addon, ["managedclusteraddons"], ["get", "list", "watch"]),
        _rule(addon, ["managedclusteraddons/status"], ["patch", "update"]),
        _rule("events.k8s.io", ["events"], ["create"]),
    ]
    work_rules: list[PolicyRule] = [
        {
            "apiGroups": ["", "events.k8s.io"],
            "resources": ["events"],
            "verbs": ["create", "patch", "update"],
        },
        _rule(work, ["manifestworks"], ["get", "list", "watch", "update", "patch"]),
        _rule(work, ["manifestworks/status"], ["patch", "update"]),
    ]
    return [
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": dict(common)},
            "rules": rules,
        }
        for name, rules in ((REGISTRATION_ROLE, registration_rules), (WORK_ROLE, work_rules))
    ]


def bootstrap_objects() -> tuple[ClusterRole, ClusterRoleBinding, ClusterRoleBinding]:
    """What a bootstrap credential may do: ask for a certificate and create its cluster, nothing more.

    The rules are upstream's (the cluster-manager chart's and ``clusteradm init``'s
    ``open-cluster-management:bootstrap``), so upstream's Go agent finds what it uses:
    read, list and watch CSRs and ManagedClusters, create them. Nothing updates: every
    joining cluster shares the token, so ``update`` would let any of them rewrite every
    cluster (an agent updates its own cluster with its own certificate, once accepted).

    Two rules are narrower than upstream's, which no upstream client needs wider:
    ConfigMaps are readable only by the names ``clusteradm join`` reads with the token
    (``kube-public/cluster-info``, ``open-cluster-management-hub/ca-bundle-configmap``),
    not every ConfigMap on the hub; and joining sets is limited to ``default``, where
    admission puts every unlabelled new cluster.

    The bindings are the chart's: bootstrap tokens' group ``system:bootstrappers:managedcluster``
    and the ServiceAccount ``agent-registration-bootstrap``, each by its own binding.
    The hub applies these on every start, which also narrows the wider role that
    earlier pyocm hubs stored.
    """
    read_create = ["create", "get", "list", "watch"]
    rules = [
        _rule("", ["configmaps"], ["get"], ["cluster-info", "ca-bundle-configmap"]),
        _rule("certificates.k8s.io", ["certificatesigningrequests"], read_create),
        _rule(wellknown.CLUSTER_GROUP, ["managedclusters"], read_create),
        _rule(wellknown.CLUSTER_GROUP, ["managedclustersets/join"], ["create"], ["default"]),
    ]
    return (
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": BOOTSTRAP_ROLE},
            "rules": rules,
        },
        _bootstrap_binding(
            BOOTSTRAP_GROUP_BINDING, {"apiGroup": RBAC, "kind": "Group", "name": BOOTSTRAP_GROUP}
        ),
        _bootstrap_binding(
            BOOTSTRAP_SA_BINDING,
            {
                "kind": "ServiceAccount",
                "name": BOOTSTRAP_SERVICE_ACCOUNT,
                "namespace": BOOTSTRAP_NAMESPACE,
            },
        ),
    )


def _bootstrap_binding(name: str, subject: Subject) -> ClusterRoleBinding:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": BOOTSTRAP_ROLE},
        "subjects": [subject],
    }
