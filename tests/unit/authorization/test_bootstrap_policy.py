"""The default policy, checked by what it lets callers do once loaded into an index."""

from __future__ import annotations

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.aggregation import aggregate_changes
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.authorizer import authorize, rules_review
from pyocm.apiserver.authorization.bootstrap_policy import bootstrap_objects, cluster_roles
from pyocm.apiserver.authorization.index import RbacIndex

ANONYMOUS = UserInfo(name="system:anonymous", groups=("system:unauthenticated",))
BOOTSTRAP = UserInfo(
    name="system:bootstrap:ocmhub",
    groups=("system:bootstrappers", "system:bootstrappers:managedcluster", "system:authenticated"),
)
ALICE = UserInfo(name="alice", groups=("system:authenticated",))


def loaded() -> RbacIndex:
    index = RbacIndex()
    for obj in bootstrap_objects():
        index.upsert(obj["kind"], obj)
    return index


def test_objects_are_complete_and_marked_as_defaults() -> None:
    objects = bootstrap_objects()
    names = [
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects
    ]
    assert names == [
        ("ClusterRole", "", "cluster-admin"),
        ("ClusterRole", "", "system:discovery"),
        ("ClusterRole", "", "system:basic-user"),
        ("ClusterRole", "", "system:public-info-viewer"),
        ("ClusterRole", "", "system:monitoring"),
        ("ClusterRole", "", "admin"),
        ("ClusterRole", "", "edit"),
        ("ClusterRole", "", "view"),
        ("ClusterRole", "", "system:aggregate-to-admin"),
        ("ClusterRole", "", "system:aggregate-to-edit"),
        ("ClusterRole", "", "system:aggregate-to-view"),
        ("ClusterRoleBinding", "", "cluster-admin"),
        ("ClusterRoleBinding", "", "system:discovery"),
        ("ClusterRoleBinding", "", "system:basic-user"),
        ("ClusterRoleBinding", "", "system:public-info-viewer"),
        ("ClusterRoleBinding", "", "system:monitoring"),
        ("Role", "kube-public", "kubeadm:bootstrap-signer-clusterinfo"),
        ("RoleBinding", "kube-public", "kubeadm:bootstrap-signer-clusterinfo"),
    ]
    for obj in objects:
        assert obj["apiVersion"] == "rbac.authorization.k8s.io/v1"
        assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert obj["metadata"]["annotations"] == {
            "rbac.authorization.kubernetes.io/autoupdate": "true"
        }


def test_exact_upstream_shapes() -> None:
    by_name = {o["metadata"]["name"]: o for o in cluster_roles()}
    assert by_name["cluster-admin"]["rules"] == [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
    ]
    assert by_name["system:public-info-viewer"]["rules"] == [
        {
            "verbs": ["get"],
            "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
        }
    ]
    assert by_name["system:discovery"]["rules"][0]["nonResourceURLs"] == [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
    ]
    assert (
        by_name["edit"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"]
        == "true"
    )
    assert by_name["view"]["aggregationRule"] == {
        "clusterRoleSelectors": [
            {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}
        ]
    }


def test_aggregated_roles_are_seeded_already_converged() -> None:
    assert aggregate_changes(cluster_roles()) == {}


def test_each_call_returns_fresh_objects() -> None:
    first = bootstrap_objects()
    first[0]["rules"].clear()
    first[0]["metadata"]["labels"]["x"] = "y"
    second = bootstrap_objects()
    assert second[0]["rules"]
    assert "x" not in second[0]["metadata"]["labels"]


def path(user: UserInfo, url: str) -> Attributes:
    return Attributes.for_path(user=user, verb="get", path=url)


def cm(user: UserInfo, verb: str, namespace: str, name: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource="configmaps", namespace=namespace, name=name)


@pytest.mark.parametrize(
    ("attrs", "allowed"),
    [
        pytest.param(path(ANONYMOUS, "/healthz"), True, id="anonymous-healthz"),
        pytest.param(path(ANONYMOUS, "/version"), True, id="anonymous-version"),
        pytest.param(path(ANONYMOUS, "/apis"), False, id="anonymous-no-discovery"),
        pytest.param(
            cm(ANONYMOUS, "get", "kube-public", "cluster-info"), True, id="anonymous-cluster-info"
        ),
        pytest.param(
            cm(ANONYMOUS, "get", "kube-public", "other"), False, id="anonymous-other-configmap"
        ),
        pytest.param(cm(ANONYMOUS, "list", "kube-public"), False, id="anonymous-list"),
        pytest.param(
            cm(ANONYMOUS, "get", "default", "cluster-info"), False, id="anonymous-other-namespace"
        ),
        pytest.param(
            cm(BOOTSTRAP, "get", "kube-public", "cluster-info"),
            True,
            id="bootstrap-token-cluster-info",
        ),
        pytest.param(
            cm(ALICE, "get", "kube-public", "cluster-info"), False, id="plain-user-not-cluster-info"
        ),
        pytest.param(
            path(ALICE, "/apis/cluster.open-cluster-management.io/v1"),
            True,
            id="authenticated-discovery",
        ),
        pytest.param(path(ALICE, "/openapi/v3"), True, id="authenticated-openapi"),
        pytest.param(path(ALICE, "/metrics"), False, id="authenticated-no-metrics"),
        pytest.param(
            Attributes(
                user=ALICE,
                verb="create",
                api_group="authorization.k8s.io",
                resource="selfsubjectaccessreviews",
            ),
            True,
            id="authenticated-ssar",
        ),
        pytest.param(
            Attributes(
                user=ALICE,
                verb="create",
                api_group="authentication.k8s.io",
                resource="selfsubjectreviews",
            ),
            True,
            id="authenticated-whoami",
        ),
        pytest.param(
            Attributes(
                user=ALICE,
                verb="create",
                api_group="authorization.k8s.io",
                resource="subjectaccessreviews",
            ),
            False,
            id="authenticated-no-sar",
        ),
        pytest.param(
            Attributes(user=ALICE, verb="list", resource="namespaces"),
            False,
            id="authenticated-no-namespaces",
        ),
    ],
)
def test_default_access(attrs: Attributes, allowed: bool) -> None:
    assert authorize(loaded(), attrs).allowed is allowed


def test_masters_hold_cluster_admin_through_its_binding() -> None:
    admin = UserInfo(name="kube-admin", groups=("system:masters", "system:authenticated"))
    resource_rules, non_resource_rules = rules_review(loaded(), admin, namespace="default")
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in resource_rules
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in non_resource_rules


@pytest.mark.parametrize(
    ("role", "verb", "group", "resource", "allowed"),
    [
        pytest.param("view", "get", "", "configmaps", True, id="view-configmaps"),
        pytest.param("view", "get", "", "namespaces", True, id="view-namespace"),
        pytest.param("view", "get", "", "secrets", False, id="view-no-secrets"),
        pytest.param("view", "update", "", "configmaps", False, id="view-read-only"),
        pytest.param("edit", "get", "", "secrets", True, id="edit-secrets"),
        pytest.param("edit", "update", "coordination.k8s.io", "leases", True, id="edit-leases"),
        pytest.param("edit", "create", "", "serviceaccounts/token", True, id="edit-tokens"),
        pytest.param(
            "edit", "create", "rbac.authorization.k8s.io", "roles", False, id="edit-no-roles"
        ),
        pytest.param(
            "admin",
            "create",
            "rbac.authorization.k8s.io",
            "rolebindings",
            True,
            id="admin-rolebindings",
        ),
        pytest.param("admin", "watch", "", "events", True, id="admin-includes-view"),
        pytest.param(
            "admin", "delete", "", "namespaces", False, id="admin-cannot-delete-namespace"
        ),
    ],
)
def test_aggregated_roles_grant_in_their_namespace(
    role: str, verb: str, group: str, resource: str, allowed: bool
) -> None:
    index = loaded()
    index.upsert(
        "RoleBinding",
        {
            "metadata": {"name": "team", "namespace": "team-ns"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
            ],
        },
    )
    base, _, sub = resource.partition("/")
    attrs = Attributes(
        user=ALICE,
        verb=verb,
        api_group=group,
        resource=base,
        subresource=sub,
        namespace="team-ns",
        name="x",
    )
    assert authorize(index, attrs).allowed is allowed
    elsewhere = Attributes(
        user=ALICE,
        verb=verb,
        api_group=group,
        resource=base,
        subresource=sub,
        namespace="other",
        name="x",
    )
    assert not authorize(index, elsewhere).allowed
