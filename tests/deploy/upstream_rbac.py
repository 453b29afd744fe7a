"""Upstream OCM's RBAC for the identities deploy/ grants, as data: the rules of the roles
upstream binds to each of its controllers, webhooks and agents, carried over from the
manifests its operators render (paths in open-cluster-management-io/ocm, rendered with
upstream's defaults: cluster manager ``cluster-manager``, klusterlet ``klusterlet`` in
Default/Singleton mode, agent namespace ``open-cluster-management-agent``).

pyocm runs upstream's four hub controllers in one process and its two agents in one, so
each pyocm identity is held to the union of the upstream identities it stands for
(``CONTROLLER``, ``WEBHOOK``, ``AGENT`` below). tests/deploy/test_rbac_bounds.py checks
the rendered manifests against these."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Rule = dict[str, Any]
CORE = ""
AGENT_NAMESPACE = "open-cluster-management-agent"


def rule(
    groups: Sequence[str],
    resources: Sequence[str],
    verbs: Sequence[str],
    names: Sequence[str] = (),
) -> Rule:
    """A PolicyRule as the API holds it, so upstream's and the manifests' rules expand alike."""
    found: Rule = {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
    if names:
        found["resourceNames"] = list(names)
    return found


@dataclass(frozen=True)
class Role:
    """One upstream role and how upstream binds it: ``namespace`` None for a ClusterRole
    bound by a ClusterRoleBinding, else the namespace of the RoleBinding."""

    source: str
    rules: tuple[Rule, ...]
    namespace: str | None = None


@dataclass(frozen=True)
class BuiltIn:
    """A ClusterRole upstream binds but does not ship (Kubernetes' own), by name."""

    source: str
    name: str
    namespace: str | None = None


CRUD = ["get", "list", "watch", "create", "update", "patch", "delete"]
READ = ["get", "list", "watch"]
EVENTS = ["create", "patch", "update"]
CERTS = "certificates.k8s.io"
CLUSTER = "cluster.open-cluster-management.io"
WORK = "work.open-cluster-management.io"
ADDON = "addon.open-cluster-management.io"
REGISTER = "register.open-cluster-management.io"
RBAC = "rbac.authorization.k8s.io"
LEASES = "coordination.k8s.io"
AUTHZ = "authorization.k8s.io"

# Without the blocks behind ClusterImporterEnabled, ClusterProfileEnabled and GRPCAuthEnabled:
# the ClusterManager enables none of them by default, and pyocm has none of those features.
REGISTRATION_CONTROLLER = Role(
    "manifests/cluster-manager/hub/registration/clusterrole.yaml",
    (
        rule([CERTS], ["certificatesigningrequests"], ["create", "get", "list", "watch"]),
        rule(
            [CERTS],
            ["certificatesigningrequests/status", "certificatesigningrequests/approval"],
            ["update"],
        ),
        rule(
            [CORE],
            ["namespaces", "serviceaccounts", "configmaps"],
            ["get", "list", "watch", "create", "delete", "update"],
        ),
        rule([CORE], ["serviceaccounts/token"], ["create"], ["agent-registration-bootstrap"]),
        rule([CORE], ["pods"], ["get"]),
        rule([CORE, "events.k8s.io"], ["events"], EVENTS),
        rule(["apps"], ["replicasets"], ["get"]),
        rule([AUTHZ], ["subjectaccessreviews"], ["create"]),
        rule([RBAC], ["clusterrolebindings", "rolebindings"], CRUD),
        rule([RBAC], ["clusterroles", "roles"], CRUD),
        rule([LEASES], ["leases"], ["get", "list", "watch", "create", "delete", "update", "patch"]),
        rule([CLUSTER], ["managedclusters"], ["get", "list", "watch", "update", "patch"]),
        rule([CLUSTER], ["managedclusters/status"], ["update", "patch"]),
        rule(
            [WORK],
            ["manifestworks"],
            [*READ, "create", "update", "delete", "deletecollection", "patch", "execute-as"],
        ),
        rule([WORK], ["manifestworks/status"], ["patch", "update"]),
        rule(
            [WORK],
            ["manifestworkreplicasets"],
            [*READ, "update", "delete", "deletecollection", "patch"],
        ),
        rule([WORK], ["manifestworkreplicasets/status"], ["update", "patch"]),
        rule([WORK], ["manifestworkreplicasets/finalizers"], ["update"]),
        rule([CERTS], ["signers"], ["approve"], ["kubernetes.io/kube-apiserver-client"]),
        rule([CLUSTER], ["managedclustersets"], CRUD),
        rule([CLUSTER], ["managedclustersets/status"], ["update", "patch"]),
        rule([CLUSTER], ["managedclustersetbindings"], READ),
        rule([CLUSTER], ["managedclustersetbindings/status"], ["update", "patch"]),
        rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
        rule([ADDON], ["managedclusteraddons"], [*READ, "delete"]),
        rule([ADDON], ["managedclusteraddons/status"], ["patch", "update"]),
        rule([REGISTER], ["managedclusters/clientcertificates"], ["renew"]),
        rule([REGISTER], ["managedclusters/accept"], ["update"]),
    ),
)

PLACEMENT_CONTROLLER = Role(
    "manifests/cluster-manager/hub/placement/clusterrole.yaml",
    (
        rule([CORE], ["configmaps"], ["get", "list", "watch", "create", "delete", "update"]),
        rule([CORE], ["pods"], ["get"]),
        rule(["apps"], ["replicasets"], ["get"]),
        rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
        rule([AUTHZ], ["subjectaccessreviews"], ["create"]),
        rule([CORE, "events.k8s.io"], ["events"], EVENTS),
        rule([LEASES], ["leases"], ["create", "get", "list", "update", "watch", "patch"]),
        rule(
            [CLUSTER], ["managedclusters", "managedclustersets", "managedclustersetbindings"], READ
        ),
        rule([CLUSTER], ["addonplacementscores"], READ),
        rule([CLUSTER], ["placements"], READ),
        rule([CLUSTER], ["placementdecisions"], CRUD),
        rule([CLUSTER], ["placements/status", "placementdecisions/status"], ["update", "patch"]),
        rule([CLUSTER], ["placements/finalizers"], ["update"]),
        rule(["config.openshift.io"], ["infrastructures"], ["get"]),
    ),
)

WORK_CONTROLLER = Role(
    "manifests/cluster-manager/hub/work/clusterrole.yaml",
    (
        rule([CORE], ["configmaps"], READ),
        rule([CORE], ["pods"], ["get"]),
        rule([AUTHZ], ["subjectaccessreviews"], ["create"]),
        rule([LEASES], ["leases"], ["create", "get", "list", "update", "watch", "patch"]),
        rule([CORE, "events.k8s.io"], ["events"], EVENTS),
        rule(
            [WORK],
            ["manifestworks"],
            [*READ, "create", "update", "delete", "deletecollection", "patch", "execute-as"],
        ),
        rule([WORK], ["manifestworkreplicasets"], [*READ, "update", "patch"]),
        rule([WORK], ["manifestworkreplicasets/status"], ["patch", "update"]),
        rule([WORK], ["manifestworkreplicasets/finalizers"], ["update"]),
        rule([CLUSTER], ["placements", "placementdecisions"], READ),
        rule(["config.openshift.io"], ["infrastructures"], ["get"]),
        rule(["apps"], ["replicasets"], ["get"]),
    ),
)

ADDON_MANAGER_CONTROLLER = Role(
    "manifests/cluster-manager/hub/addon-manager/clusterrole.yaml",
    (
        rule(
            [CORE],
            ["configmaps", "events"],
            [*READ, "create", "update", "delete", "deletecollection", "patch"],
        ),
        rule([CORE], ["pods"], ["get"]),
        rule(["apps"], ["replicasets"], ["get"]),
        rule([LEASES], ["leases"], ["get", "list", "watch", "create", "update", "patch"]),
        rule([AUTHZ], ["subjectaccessreviews"], ["get", "create"]),
        rule([CLUSTER], ["managedclusters", "placements", "placementdecisions"], READ),
        rule([ADDON], ["managedclusteraddons/finalizers"], ["update"]),
        rule([ADDON], ["clustermanagementaddons/finalizers"], ["update"]),
        rule([ADDON], ["clustermanagementaddons/status"], ["update", "patch"]),
        rule([ADDON], ["clustermanagementaddons"], ["patch", *READ]),
        rule([ADDON], ["managedclusteraddons"], [*READ, "create", "update", "delete"]),
        rule([ADDON], ["managedclusteraddons/status"], ["update", "patch"]),
        rule([ADDON], ["addontemplates", "addondeploymentconfigs"], READ),
        rule([WORK], ["manifestworks"], [*READ, "create", "update", "delete", "patch"]),
        rule([CERTS], ["certificatesigningrequests"], ["create", "get", "list", "watch"]),
        rule(
            [CERTS],
            ["certificatesigningrequests/approval", "certificatesigningrequests/status"],
            ["update"],
        ),
        rule([CERTS], ["signers"], ["approve", "sign"]),
        rule([RBAC], ["rolebindings", "roles"], [*READ, "create", "update", "delete"]),
        rule([CORE], ["serviceaccounts"], [*READ, "create", "update", "delete"]),
        rule([CORE], ["serviceaccounts/token"], ["create"]),
        rule([CORE], ["serviceaccounts/token"], ["subscribe"]),
    ),
)

# Bound to addon-manager-controller-sa by
# manifests/cluster-manager/hub/addon-manager/work-executor-admin-clusterrolebinding.yaml.
WORK_EXECUTOR_ADMIN = Role(
    "manifests/cluster-manager/hub/work/executor-admin-clusterrole.yaml",
    (
        rule(
            [WORK], ["manifestworks"], ["execute-as"], ["system:serviceaccount::klusterlet-work-sa"]
        ),
    ),
)

# Not carried over: manifests/cluster-manager/hub/addon-manager/token-role.yaml, which the add-on
# manager makes in each cluster namespace for an add-on's agents (bound to the cluster's
# groups by token-rolebinding.yaml), not for itself.
#: pyocm's cluster-manager-controller-sa: upstream's registration, placement, work and add-on
#: manager controllers' ServiceAccounts together.
CONTROLLER: tuple[Role | BuiltIn, ...] = (
    REGISTRATION_CONTROLLER,
    PLACEMENT_CONTROLLER,
    WORK_CONTROLLER,
    ADDON_MANAGER_CONTROLLER,
    WORK_EXECUTOR_ADMIN,
)

_WEBHOOK_COMMON = (
    rule([CORE], ["configmaps"], READ),
    rule([AUTHZ], ["subjectaccessreviews"], ["create"]),
    rule(["flowcontrol.apiserver.k8s.io"], ["prioritylevelconfigurations", "flowschemas"], READ),
)

#: pyocm's cluster-manager-webhook-sa: upstream's registration and work webhooks together.
WEBHOOK: tuple[Role | BuiltIn, ...] = (
    Role(
        "manifests/cluster-manager/hub/registration/webhook-clusterrole.yaml",
        (*_WEBHOOK_COMMON, rule([CORE], ["namespaces"], ["get"])),
    ),
    Role("manifests/cluster-manager/hub/work/webhook-clusterrole.yaml", _WEBHOOK_COMMON),
)

_ADDON_MANAGEMENT = (
    rule([CORE], ["secrets"], CRUD),
    rule([LEASES], ["leases"], ["create", "get", "list", "update", "watch", "patch"]),
)

#: pyocm's klusterlet-work-sa: upstream's registration and work agents together (Singleton
#: mode runs both as one ServiceAccount with both agents' bindings).
AGENT: tuple[Role | BuiltIn, ...] = (
    Role(
        "manifests/klusterlet/managed/klusterlet-registration-clusterrole.yaml",
        (
            rule([CORE], ["nodes"], READ),
            rule([CORE], ["namespaces"], ["create", "get", "list", "update", "watch", "patch"]),
            rule([CLUSTER], ["clusterclaims"], READ),
            rule(["about.k8s.io"], ["clusterproperties"], READ),
        ),
    ),
    Role(
        "manifests/klusterlet/managed/klusterlet-registration-clusterrole-addon-management.yaml",
        _ADDON_MANAGEMENT,
    ),
    Role(
        "manifests/klusterlet/management/klusterlet-registration-clusterrole-addon-management.yaml",
        _ADDON_MANAGEMENT,
    ),
    Role(
        "manifests/klusterlet/managed/klusterlet-work-clusterrole.yaml",
        (
            rule([WORK], ["appliedmanifestworks"], CRUD),
            rule([WORK], ["appliedmanifestworks/status"], ["patch", "update"]),
            rule([WORK], ["appliedmanifestworks/finalizers"], ["update"]),
            rule([AUTHZ], ["subjectaccessreviews"], ["create"]),
            rule([CORE], ["serviceaccounts"], ["impersonate"]),
        ),
    ),
    # Bound through open-cluster-management:klusterlet-work:aggregate, which upstream's operator
    # makes in code (createAggregationRule in
    # pkg/operator/operators/klusterlet/controllers/klusterletcontroller/klusterlet_managed_reconcile.go)
    # selecting ClusterRoles labelled open-cluster-management.io/aggregate-to-work=true: this one.
    Role(
        "manifests/klusterlet/managed/klusterlet-work-clusterrole-execution.yaml",
        (
            rule(
                ["apiextensions.k8s.io"],
                ["customresourcedefinitions"],
                [*READ, "create", "delete", "update"],
            ),
            rule([CORE], ["namespaces"], ["create", "update", "patch", "delete"]),
            rule([RBAC], ["clusterrolebindings", "rolebindings"], CRUD),
            rule([RBAC], ["clusterroles", "roles"], [*CRUD, "escalate", "bind"]),
            rule(["monitoring.coreos.com"], ["servicemonitors"], CRUD),
            rule(["oauth.openshift.io"], ["oauthclients"], CRUD),
            rule(["scheduling.k8s.io"], ["priorityclasses"], CRUD),
            rule(
                ["admissionregistration.k8s.io"],
                ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
                [*READ, "create", "update", "patch"],
            ),
        ),
    ),
    BuiltIn(
        "manifests/klusterlet/managed/klusterlet-work-clusterrolebinding-execution-admin.yaml",
        "admin",
    ),
    Role(
        "manifests/klusterlet/management/klusterlet-registration-role.yaml",
        (
            rule([CORE], ["configmaps"], CRUD),
            rule([CORE], ["pods"], ["get"]),
            rule(["apps"], ["replicasets"], ["get"]),
            rule([LEASES], ["leases"], ["create", "get", "list", "update", "watch", "patch"]),
            rule([CORE], ["secrets"], CRUD),
            rule([CORE, "events.k8s.io"], ["events"], EVENTS),
        ),
        namespace=AGENT_NAMESPACE,
    ),
    Role(
        "manifests/klusterlet/management/klusterlet-work-role.yaml",
        (
            rule([CORE], ["configmaps"], CRUD),
            rule([LEASES], ["leases"], ["create", "get", "list", "update", "watch", "patch"]),
            rule([CORE, "events.k8s.io"], ["events"], EVENTS),
            rule([CORE], ["pods"], ["get"]),
            rule(["apps"], ["replicasets"], ["get"]),
        ),
        namespace=AGENT_NAMESPACE,
    ),
    # Bound in kube-system by klusterlet-{registration,work}-rolebinding-extension-apiserver.yaml.
    Role(
        "manifests/klusterlet/management/klusterlet-role-extension-apiserver.yaml",
        (rule([CORE], ["configmaps"], READ, ["extension-apiserver-authentication"]),),
        namespace="kube-system",
    ),
)
