"""The RBAC objects a fresh server starts with, as Kubernetes' bootstrap policy defines them.

Only the part of the upstream policy a hub needs: the superuser role, discovery and
self-review access for every caller, health and version for anonymous callers, the
aggregated ``admin``/``edit``/``view`` roles limited to the kinds this server serves, and
kubeadm's anonymous read of ``kube-public/cluster-info`` (which ``clusteradm join`` fetches
before it trusts the hub). Lists are sorted as the upstream rule builder sorts them.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.authorization import aggregation

API_VERSION = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE_ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-{}"
CLUSTER_INFO_NAMESPACE = "kube-public"
CLUSTER_INFO_ROLE = "kubeadm:bootstrap-signer-clusterinfo"

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
HEALTH_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")
#: kube's system:monitoring: health checks in detail, and metrics.
MONITORING_URLS = (
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/*",
)


def rule(
    verbs: tuple[str, ...], group: str, *resources: str, names: tuple[str, ...] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verbs": sorted(verbs),
        "apiGroups": [group],
        "resources": sorted(resources),
    }
    if names:
        out["resourceNames"] = sorted(names)
    return out


def url_rule(verbs: tuple[str, ...], *urls: str) -> dict[str, Any]:
    return {"verbs": sorted(verbs), "nonResourceURLs": sorted(urls)}


def _metadata(
    name: str, *, namespace: str = "", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {**BOOTSTRAP_LABELS, **(labels or {})}
    meta["annotations"] = dict(AUTOUPDATE_ANNOTATIONS)
    return meta


def _cluster_role(
    name: str, rules: list[dict[str, Any]], *, aggregate_to: str = "", aggregates: str = ""
) -> dict[str, Any]:
    """A ClusterRole; ``aggregate_to`` labels it into an aggregated role, ``aggregates`` makes it one."""
    labels = {AGGREGATE_TO.format(aggregate_to): "true"} if aggregate_to else None
    role: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "ClusterRole",
        "metadata": _metadata(name, labels=labels),
    }
    if aggregates:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO.format(aggregates): "true"}}]
        }
    role["rules"] = rules
    return role


def _subject(kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": RBAC_GROUP, "kind": kind, "name": name}


def _binding(
    kind: str, name: str, *, role_kind: str, subjects: list[dict[str, str]], namespace: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": _metadata(name, namespace=namespace),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": name},
        "subjects": subjects,
    }


def _aggregated_cluster_roles() -> list[dict[str, Any]]:
    """``admin`` ⊃ ``edit`` ⊃ ``view`` and their ``system:aggregate-to-*`` parts, served kinds only."""
    return [
        _cluster_role("admin", [], aggregates="admin"),
        _cluster_role("edit", [], aggregate_to="admin", aggregates="edit"),
        _cluster_role("view", [], aggregate_to="edit", aggregates="view"),
        _cluster_role(
            "system:aggregate-to-admin",
            [
                rule(("create",), "authorization.k8s.io", "localsubjectaccessreviews"),
                rule(READ_WRITE, RBAC_GROUP, "roles", "rolebindings"),
            ],
            aggregate_to="admin",
        ),
        _cluster_role(
            "system:aggregate-to-edit",
            [
                rule(READ, "", "secrets"),
                rule(("impersonate",), "", "serviceaccounts"),
                rule(WRITE, "", "configmaps", "events", "secrets", "serviceaccounts"),
                rule(("create",), "", "serviceaccounts/token"),
                rule(READ_WRITE, "coordination.k8s.io", "leases"),
            ],
            aggregate_to="edit",
        ),
        _cluster_role(
            "system:aggregate-to-view",
            [
                rule(READ, "", "configmaps", "serviceaccounts"),
                rule(READ, "", "events", "namespaces/status"),
                # Reading namespaces at namespace scope shows only that namespace: a way to
                # learn which namespaces one has access to.
                rule(READ, "", "namespaces"),
            ],
            aggregate_to="view",
        ),
    ]


def cluster_roles() -> list[dict[str, Any]]:
    """Every bootstrap ClusterRole, aggregated roles already holding their aggregated rules."""
    roles = [
        _cluster_role("cluster-admin", [rule(("*",), "*", "*"), url_rule(("*",), "*")]),
        _cluster_role(
            "system:discovery",
            [
                url_rule(
                    ("get",),
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/openapi",
                    "/openapi/*",
                    *HEALTH_URLS,
                )
            ],
        ),
        _cluster_role(
            "system:basic-user",
            [
                rule(
                    ("create",),
                    "authorization.k8s.io",
                    "selfsubjectaccessreviews",
                    "selfsubjectrulesreviews",
                ),
                rule(("create",), "authentication.k8s.io", "selfsubjectreviews"),
            ],
        ),
        _cluster_role("system:public-info-viewer", [url_rule(("get",), *HEALTH_URLS)]),
        _cluster_role("system:monitoring", [url_rule(("get",), *MONITORING_URLS)]),
        *_aggregated_cluster_roles(),
    ]
    # Seeded complete, so the roles work before the aggregation controller first runs.
    aggregated = aggregation.aggregate(roles)
    for role in roles:
        if role["metadata"]["name"] in aggregated:
            role["rules"] = aggregated[role["metadata"]["name"]]
    return roles


def cluster_role_bindings() -> list[dict[str, Any]]:
    authenticated = _subject("Group", "system:authenticated")
    return [
        _binding(
            "ClusterRoleBinding",
            "cluster-admin",
            role_kind="ClusterRole",
            subjects=[_subject("Group", "system:masters")],
        ),
        _binding(
            "ClusterRoleBinding",
            "system:discovery",
            role_kind="ClusterRole",
            subjects=[authenticated],
        ),
        _binding(
            "ClusterRoleBinding",
            "system:basic-user",
            role_kind="ClusterRole",
            subjects=[authenticated],
        ),
        _binding(
            "ClusterRoleBinding",
            "system:public-info-viewer",
            role_kind="ClusterRole",
            subjects=[authenticated, _subject("Group", "system:unauthenticated")],
        ),
        _binding(
            "ClusterRoleBinding",
            "system:monitoring",
            role_kind="ClusterRole",
            subjects=[_subject("Group", "system:monitoring")],
        ),
    ]


def cluster_info_role() -> dict[str, Any]:
    """kubeadm's Role letting anyone read the ``cluster-info`` ConfigMap, and nothing else."""
    return {
        "apiVersion": API_VERSION,
        "kind": "Role",
        "metadata": _metadata(CLUSTER_INFO_ROLE, namespace=CLUSTER_INFO_NAMESPACE),
        "rules": [rule(("get",), "", "configmaps", names=("cluster-info",))],
    }


def cluster_info_role_binding() -> dict[str, Any]:
    """kubeadm binds anonymous callers; bootstrap-token callers are bound too, since they are
    authenticated (so not anonymous) when ``clusteradm join`` reads it with the token."""
    subjects = [_subject("User", "system:anonymous"), _subject("Group", "system:bootstrappers")]
    return _binding(
        "RoleBinding",
        CLUSTER_INFO_ROLE,
        role_kind="Role",
        subjects=subjects,
        namespace=CLUSTER_INFO_NAMESPACE,
    )


def bootstrap_objects() -> list[dict[str, Any]]:
    """All bootstrap objects, fresh copies on each call: ClusterRoles first, then bindings.

    The kube-public objects need that namespace to exist; the caller creates it first.
    """
    return [
        *cluster_roles(),
        *cluster_role_bindings(),
        cluster_info_role(),
        cluster_info_role_binding(),
    ]
