"""Decisions, their reasons, and the rules review, on an OCM-shaped policy."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.authorizer import (
    Decision,
    aggregate_errors,
    authorize,
    rules_review,
    rules_review_status,
)
from pyocm.apiserver.authorization.index import RbacIndex

Obj = dict[str, Any]
CLUSTER = "cluster.open-cluster-management.io"
REGISTER = "register.open-cluster-management.io"
AGENT = UserInfo(
    name="system:open-cluster-management:c1:agent1",
    groups=(
        "system:open-cluster-management:c1",
        "system:open-cluster-management:managed-clusters",
        "system:authenticated",
    ),
)


def group(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def cluster_role(name: str, *rules: Obj) -> tuple[str, Obj]:
    return "ClusterRole", {"metadata": {"name": name}, "rules": list(rules)}


def ref(kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}


def ocm_index() -> RbacIndex:
    """The accepted-cluster RBAC the OCM hub creates for cluster ``c1``."""
    index = RbacIndex()
    objects = [
        cluster_role(
            "open-cluster-management:managedcluster:c1",
            {
                "verbs": ["create", "get", "list", "watch"],
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests"],
            },
            {
                "verbs": ["renew"],
                "apiGroups": [REGISTER],
                "resources": ["managedclusters/clientcertificates"],
            },
            {
                "verbs": ["get", "list", "update", "watch"],
                "apiGroups": [CLUSTER],
                "resources": ["managedclusters"],
                "resourceNames": ["c1"],
            },
            {
                "verbs": ["patch", "update"],
                "apiGroups": [CLUSTER],
                "resources": ["managedclusters/status"],
                "resourceNames": ["c1"],
            },
        ),
        cluster_role(
            "open-cluster-management:managedcluster:registration",
            {
                "verbs": ["get", "list", "watch", "update"],
                "apiGroups": ["coordination.k8s.io"],
                "resources": ["leases"],
            },
        ),
        cluster_role(
            "system:discovery",
            {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*"]},
        ),
        (
            "ClusterRoleBinding",
            {
                "metadata": {"name": "open-cluster-management:managedcluster:c1"},
                "roleRef": ref("ClusterRole", "open-cluster-management:managedcluster:c1"),
                "subjects": [
                    group("system:open-cluster-management:c1"),
                    group("open-cluster-management:c1"),
                ],
            },
        ),
        (
            "RoleBinding",
            {
                "metadata": {
                    "name": "open-cluster-management:managedcluster:c1:registration",
                    "namespace": "c1",
                },
                "roleRef": ref(
                    "ClusterRole", "open-cluster-management:managedcluster:registration"
                ),
                "subjects": [
                    group("system:open-cluster-management:c1"),
                    group("open-cluster-management:c1"),
                ],
            },
        ),
        (
            "ClusterRoleBinding",
            {
                "metadata": {"name": "system:discovery"},
                "roleRef": ref("ClusterRole", "system:discovery"),
                "subjects": [group("system:authenticated")],
            },
        ),
    ]
    for kind, obj in objects:
        index.upsert(kind, obj)
    return index


def res(
    verb: str, group: str, resource: str, *, sub: str = "", ns: str = "", name: str = ""
) -> Attributes:
    return Attributes(
        user=AGENT,
        verb=verb,
        api_group=group,
        resource=resource,
        subresource=sub,
        namespace=ns,
        name=name,
    )


CLUSTER_GRANT = (
    'RBAC: allowed by ClusterRoleBinding "open-cluster-management:managedcluster:c1" of ClusterRole'
    ' "open-cluster-management:managedcluster:c1" to Group "system:open-cluster-management:c1"'
)
LEASE_GRANT = (
    'RBAC: allowed by RoleBinding "open-cluster-management:managedcluster:c1:registration/c1" of ClusterRole'
    ' "open-cluster-management:managedcluster:registration" to Group "system:open-cluster-management:c1"'
)


@pytest.mark.parametrize(
    ("attrs", "decision"),
    [
        pytest.param(
            res("get", CLUSTER, "managedclusters", name="c1"),
            Decision(True, CLUSTER_GRANT),
            id="own-cluster",
        ),
        pytest.param(
            res("get", CLUSTER, "managedclusters", name="c2"),
            Decision(False, ""),
            id="other-cluster",
        ),
        pytest.param(
            res("list", CLUSTER, "managedclusters"),
            Decision(False, ""),
            id="list-without-pinned-name",
        ),
        pytest.param(
            res("list", CLUSTER, "managedclusters", name="c1"),
            Decision(True, CLUSTER_GRANT),
            id="list-pinned-name",
        ),
        pytest.param(
            res("delete", CLUSTER, "managedclusters", name="c1"),
            Decision(False, ""),
            id="verb-not-granted",
        ),
        pytest.param(
            res("patch", CLUSTER, "managedclusters", sub="status", name="c1"),
            Decision(True, CLUSTER_GRANT),
            id="own-status",
        ),
        pytest.param(
            res("patch", CLUSTER, "managedclusters", sub="status", name="c2"),
            Decision(False, ""),
            id="other-status",
        ),
        pytest.param(
            res("renew", REGISTER, "managedclusters", sub="clientcertificates"),
            Decision(True, CLUSTER_GRANT),
            id="renew",
        ),
        pytest.param(
            res("create", "certificates.k8s.io", "certificatesigningrequests"),
            Decision(True, CLUSTER_GRANT),
            id="csr",
        ),
        pytest.param(
            res("update", "coordination.k8s.io", "leases", ns="c1", name="managed-cluster-lease"),
            Decision(True, LEASE_GRANT),
            id="lease-in-own-namespace",
        ),
        pytest.param(
            res("update", "coordination.k8s.io", "leases", ns="c2", name="managed-cluster-lease"),
            Decision(False, ""),
            id="lease-in-other-namespace",
        ),
        pytest.param(
            res("get", "coordination.k8s.io", "leases", name="x"),
            Decision(False, ""),
            id="lease-at-cluster-scope",
        ),
        pytest.param(
            Attributes.for_path(
                user=AGENT, verb="get", path="/apis/cluster.open-cluster-management.io/v1"
            ),
            Decision(
                True,
                'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery"'
                ' to Group "system:authenticated"',
            ),
            id="discovery-path",
        ),
        pytest.param(
            Attributes.for_path(user=AGENT, verb="get", path="/metrics"),
            Decision(False, ""),
            id="other-path",
        ),
    ],
)
def test_ocm_agent_decisions(attrs: Attributes, decision: Decision) -> None:
    assert authorize(ocm_index(), attrs) == decision


def test_masters_are_allowed_without_any_binding() -> None:
    admin = UserInfo(name="admin", groups=("system:masters",))
    attrs = Attributes(user=admin, verb="delete", resource="namespaces", name="kube-system")
    assert authorize(RbacIndex(), attrs) == Decision(allowed=True, reason="")


def test_a_user_with_nothing_is_denied_with_an_empty_reason() -> None:
    attrs = Attributes(
        user=UserInfo(name="nobody"), verb="get", resource="configmaps", namespace="default"
    )
    assert authorize(ocm_index(), attrs) == Decision(allowed=False, reason="")


def test_missing_roles_are_the_denial_reason() -> None:
    index = RbacIndex()
    user = UserInfo(name="u", groups=("g",))
    for name, role in (("a", "gone"), ("b", "gone"), ("c", "also-gone")):
        index.upsert(
            "ClusterRoleBinding",
            {
                "metadata": {"name": name},
                "roleRef": ref("ClusterRole", role),
                "subjects": [group("g")],
            },
        )
    decision = authorize(index, Attributes(user=user, verb="get", resource="pods"))
    assert decision == Decision(
        allowed=False,
        reason='RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found,'
        ' clusterrole.rbac.authorization.k8s.io "also-gone" not found]',
    )
    index.delete("ClusterRoleBinding", name="c")
    decision = authorize(index, Attributes(user=user, verb="get", resource="pods"))
    assert decision.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'


def test_missing_role_does_not_hide_a_grant() -> None:
    index = ocm_index()
    index.upsert(
        "ClusterRoleBinding",
        {
            "metadata": {"name": "broken"},
            "roleRef": ref("ClusterRole", "gone"),
            "subjects": [group("system:authenticated")],
        },
    )
    assert authorize(index, res("get", CLUSTER, "managedclusters", name="c1")).allowed


def test_role_binding_never_grants_non_resource_urls() -> None:
    index = RbacIndex()
    index.upsert(
        "ClusterRole",
        {"metadata": {"name": "health"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["*"]}]},
    )
    index.upsert(
        "RoleBinding",
        {
            "metadata": {"name": "rb", "namespace": "ns"},
            "roleRef": ref("ClusterRole", "health"),
            "subjects": [group("g")],
        },
    )
    user = UserInfo(name="u", groups=("g",))
    assert authorize(
        index, Attributes.for_path(user=user, verb="get", path="/healthz")
    ) == Decision(False, "")


def test_service_account_reason_names_account_and_namespace() -> None:
    index = RbacIndex()
    index.upsert(
        "Role",
        {
            "metadata": {"name": "r", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}],
        },
    )
    index.upsert(
        "RoleBinding",
        {
            "metadata": {"name": "rb", "namespace": "ns"},
            "roleRef": ref("Role", "r"),
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        },
    )
    user = UserInfo(name="system:serviceaccount:ns:sa", groups=("system:serviceaccounts",))
    decision = authorize(
        index, Attributes(user=user, verb="get", resource="secrets", namespace="ns", name="s")
    )
    assert decision == Decision(
        True, 'RBAC: allowed by RoleBinding "rb/ns" of Role "r" to ServiceAccount "sa/ns"'
    )


def test_aggregate_errors() -> None:
    assert aggregate_errors([]) == ""
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"


def test_rules_review_lists_what_applies_in_the_namespace() -> None:
    resource_rules, non_resource_rules = rules_review(ocm_index(), AGENT, namespace="c1")
    assert resource_rules == [
        {
            "verbs": ["create", "get", "list", "watch"],
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests"],
        },
        {
            "verbs": ["renew"],
            "apiGroups": [REGISTER],
            "resources": ["managedclusters/clientcertificates"],
        },
        {
            "verbs": ["get", "list", "update", "watch"],
            "apiGroups": [CLUSTER],
            "resources": ["managedclusters"],
            "resourceNames": ["c1"],
        },
        {
            "verbs": ["patch", "update"],
            "apiGroups": [CLUSTER],
            "resources": ["managedclusters/status"],
            "resourceNames": ["c1"],
        },
        {
            "verbs": ["get", "list", "watch", "update"],
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
        },
    ]
    assert non_resource_rules == [
        {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*"]}
    ]
    other_namespace, _ = rules_review(ocm_index(), AGENT, namespace="c2")
    assert len(other_namespace) == 4


def test_rules_review_status_reports_unresolvable_roles() -> None:
    index = RbacIndex()
    mixed = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "nonResourceURLs": ["/x"]}
    index.upsert("ClusterRole", {"metadata": {"name": "mixed"}, "rules": [mixed, mixed]})
    for name, role in (("ok", "mixed"), ("broken", "gone")):
        index.upsert(
            "ClusterRoleBinding",
            {
                "metadata": {"name": name},
                "roleRef": ref("ClusterRole", role),
                "subjects": [group("g")],
            },
        )
    status = rules_review_status(index, UserInfo(name="u", groups=("g",)), namespace="default")
    assert status == {
        "resourceRules": [
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
        ],
        "nonResourceRules": [
            {"verbs": ["get"], "nonResourceURLs": ["/x"]},
            {"verbs": ["get"], "nonResourceURLs": ["/x"]},
        ],
        "incomplete": False,
        "evaluationError": 'clusterrole.rbac.authorization.k8s.io "gone" not found',
    }
    clean = rules_review_status(RbacIndex(), UserInfo(name="u"), namespace="default")
    assert clean == {"resourceRules": [], "nonResourceRules": [], "incomplete": False}
