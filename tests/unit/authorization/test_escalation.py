"""The RBAC write guard: escalate, bind, or hold what you grant."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.escalation import (
    AGGREGATION_DENIED,
    can_bind,
    can_escalate,
    check_binding_write,
    check_role_write,
    compact_rules,
    compact_string,
    confirm_no_escalation,
    only_gc_fields_changed,
)
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.apiserver.authorization.rules import PolicyRule
from pyocm.kube.status import ApiError

Obj = dict[str, Any]
BOB = UserInfo(name="bob", groups=("system:authenticated",))
RBAC = "rbac.authorization.k8s.io"
GET_CM = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}
DELETE_CM = {"verbs": ["delete"], "apiGroups": [""], "resources": ["configmaps"]}


def ref(kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": RBAC, "kind": kind, "name": name}


def grant(index: RbacIndex, *rules: Obj, namespace: str = "", name: str = "bob-grants") -> None:
    """Give bob ``rules``: in ``namespace`` through a RoleBinding, or cluster-wide."""
    index.upsert("ClusterRole", {"metadata": {"name": name}, "rules": list(rules)})
    subjects = [{"apiGroup": RBAC, "kind": "User", "name": "bob"}]
    if namespace:
        meta = {"name": name, "namespace": namespace}
        index.upsert(
            "RoleBinding",
            {"metadata": meta, "roleRef": ref("ClusterRole", name), "subjects": subjects},
        )
    else:
        index.upsert(
            "ClusterRoleBinding",
            {"metadata": {"name": name}, "roleRef": ref("ClusterRole", name), "subjects": subjects},
        )


def role(name: str, *rules: Obj, namespace: str = "ns", **extra: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}, "rules": list(rules), **extra}


def forbidden(call: Any, **kwargs: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call(**kwargs)
    assert caught.value.code == 403
    assert caught.value.reason == "Forbidden"
    return caught.value


def test_user_cannot_create_a_role_granting_more_than_they_hold() -> None:
    index = RbacIndex()
    grant(index, GET_CM, namespace="ns")
    error = forbidden(
        check_role_write,
        index=index,
        user=BOB,
        kind="Role",
        namespace="ns",
        new=role("r", GET_CM, DELETE_CM),
    )
    assert error.message == (
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting'
        ' to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}'
    )
    assert error.details == {"name": "r", "group": RBAC, "kind": "roles"}


def test_user_can_create_a_role_within_what_they_hold() -> None:
    index = RbacIndex()
    grant(index, GET_CM, namespace="ns")
    check_role_write(index, user=BOB, kind="Role", namespace="ns", new=role("r", GET_CM))


def test_holding_it_in_another_namespace_does_not_count() -> None:
    index = RbacIndex()
    grant(index, GET_CM, namespace="other")
    forbidden(
        check_role_write, index=index, user=BOB, kind="Role", namespace="ns", new=role("r", GET_CM)
    )


def test_escalate_allows_granting_anything() -> None:
    index = RbacIndex()
    grant(
        index, {"verbs": ["escalate"], "apiGroups": [RBAC], "resources": ["roles"]}, namespace="ns"
    )
    check_role_write(
        index,
        user=BOB,
        kind="Role",
        namespace="ns",
        new=role("r", {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
    )
    assert not can_escalate(index, user=BOB, kind="ClusterRole", namespace="", name="")


def test_escalate_limited_by_name_allows_updates_of_that_role_only() -> None:
    index = RbacIndex()
    grant(
        index,
        {
            "verbs": ["escalate"],
            "apiGroups": [RBAC],
            "resources": ["roles"],
            "resourceNames": ["r"],
        },
        namespace="ns",
    )
    new = role("r", DELETE_CM)
    forbidden(check_role_write, index=index, user=BOB, kind="Role", namespace="ns", new=new)
    check_role_write(index, user=BOB, kind="Role", namespace="ns", new=new, old=role("r"))
    forbidden(
        check_role_write,
        index=index,
        user=BOB,
        kind="Role",
        namespace="ns",
        new=role("s", DELETE_CM),
        old=role("s"),
    )


def test_masters_bypass_the_guard() -> None:
    admin = UserInfo(name="admin", groups=("system:masters",))
    wide = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    check_role_write(
        RbacIndex(), user=admin, kind="ClusterRole", namespace="", new=role("r", wide, namespace="")
    )
    binding = {
        "metadata": {"name": "b"},
        "roleRef": ref("ClusterRole", "cluster-admin"),
        "subjects": [],
    }
    check_binding_write(
        RbacIndex(), user=admin, kind="ClusterRoleBinding", namespace="", new=binding
    )


def test_aggregation_rule_needs_cluster_admin() -> None:
    index = RbacIndex()
    grant(index, GET_CM)
    aggregating = role(
        "agg",
        GET_CM,
        namespace="",
        aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]},
    )
    error = forbidden(
        check_role_write, index=index, user=BOB, kind="ClusterRole", namespace="", new=aggregating
    )
    assert (
        error.message
        == f'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: {AGGREGATION_DENIED}'
    )
    # Removing an aggregation rule is as powerful as setting one.
    forbidden(
        check_role_write,
        index=index,
        user=BOB,
        kind="ClusterRole",
        namespace="",
        new=role("agg", GET_CM, namespace=""),
        old=aggregating,
    )
    grant(
        index,
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
        name="admin",
    )
    check_role_write(index, user=BOB, kind="ClusterRole", namespace="", new=aggregating)


def test_empty_aggregation_rule_needs_nothing_more() -> None:
    index = RbacIndex()
    grant(index, GET_CM)
    empty = role("agg", GET_CM, namespace="", aggregationRule={"clusterRoleSelectors": []})
    check_role_write(index, user=BOB, kind="ClusterRole", namespace="", new=empty)


def test_garbage_collector_updates_skip_the_check() -> None:
    index = RbacIndex()
    old = role("r", DELETE_CM)
    old["metadata"].update(finalizers=["x"], resourceVersion="5")
    new = role("r", DELETE_CM)
    new["metadata"].update(ownerReferences=[{"uid": "u"}], resourceVersion="5")
    check_role_write(index, user=BOB, kind="Role", namespace="ns", new=new, old=old)
    changed = role("r", DELETE_CM, GET_CM)
    forbidden(
        check_role_write, index=index, user=BOB, kind="Role", namespace="ns", new=changed, old=old
    )


def binding(kind: str, name: str, role_ref: dict[str, str], *, namespace: str = "") -> Obj:
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {
        "kind": kind,
        "metadata": meta,
        "roleRef": role_ref,
        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "eve"}],
    }


def test_binding_a_role_requires_holding_it_or_bind() -> None:
    index = RbacIndex()
    index.upsert("Role", role("deleter", DELETE_CM))
    new = binding("RoleBinding", "rb", ref("Role", "deleter"), namespace="ns")
    error = forbidden(
        check_binding_write, index=index, user=BOB, kind="RoleBinding", namespace="ns", new=new
    )
    assert error.message == (
        'rolebindings.rbac.authorization.k8s.io "rb" is forbidden: user "bob" (groups=["system:authenticated"]) is'
        ' attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}'
    )
    grant(
        index,
        {
            "verbs": ["bind"],
            "apiGroups": [RBAC],
            "resources": ["roles"],
            "resourceNames": ["deleter"],
        },
        namespace="ns",
    )
    check_binding_write(index, user=BOB, kind="RoleBinding", namespace="ns", new=new)


def test_binding_a_role_one_holds_is_allowed() -> None:
    index = RbacIndex()
    index.upsert("Role", role("deleter", DELETE_CM))
    grant(
        index,
        {"verbs": ["delete", "get"], "apiGroups": [""], "resources": ["configmaps"]},
        namespace="ns",
    )
    check_binding_write(
        index,
        user=BOB,
        kind="RoleBinding",
        namespace="ns",
        new=binding("RoleBinding", "rb", ref("Role", "deleter"), namespace="ns"),
    )


def test_bind_on_another_role_does_not_help() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", {"metadata": {"name": "deleter"}, "rules": [DELETE_CM]})
    grant(
        index,
        {
            "verbs": ["bind"],
            "apiGroups": [RBAC],
            "resources": ["clusterroles"],
            "resourceNames": ["viewer"],
        },
    )
    new = binding("ClusterRoleBinding", "crb", ref("ClusterRole", "deleter"))
    forbidden(
        check_binding_write, index=index, user=BOB, kind="ClusterRoleBinding", namespace="", new=new
    )


def test_bind_granted_in_a_namespace_is_delegation_to_that_namespace() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", {"metadata": {"name": "deleter"}, "rules": [DELETE_CM]})
    grant(
        index,
        {
            "verbs": ["bind"],
            "apiGroups": [RBAC],
            "resources": ["clusterroles"],
            "resourceNames": ["deleter"],
        },
        namespace="ns",
    )
    in_ns = binding("RoleBinding", "rb", ref("ClusterRole", "deleter"), namespace="ns")
    check_binding_write(index, user=BOB, kind="RoleBinding", namespace="ns", new=in_ns)
    elsewhere = binding("RoleBinding", "rb", ref("ClusterRole", "deleter"), namespace="other")
    forbidden(
        check_binding_write,
        index=index,
        user=BOB,
        kind="RoleBinding",
        namespace="other",
        new=elsewhere,
    )
    cluster_wide = binding("ClusterRoleBinding", "crb", ref("ClusterRole", "deleter"))
    forbidden(
        check_binding_write,
        index=index,
        user=BOB,
        kind="ClusterRoleBinding",
        namespace="",
        new=cluster_wide,
    )


def test_binding_a_missing_role_is_forbidden_naming_it() -> None:
    new = binding("RoleBinding", "rb", ref("Role", "gone"), namespace="ns")
    error = forbidden(
        check_binding_write,
        index=RbacIndex(),
        user=BOB,
        kind="RoleBinding",
        namespace="ns",
        new=new,
    )
    assert error.message == (
        'rolebindings.rbac.authorization.k8s.io "rb" is forbidden: roles.rbac.authorization.k8s.io "gone" not found'
    )


def test_binding_gc_update_skips_the_check() -> None:
    index = RbacIndex()
    index.upsert("Role", role("deleter", DELETE_CM))
    old = binding("RoleBinding", "rb", ref("Role", "deleter"), namespace="ns")
    old["metadata"]["finalizers"] = ["cluster.open-cluster-management.io/manifest-work-cleanup"]
    new = binding("RoleBinding", "rb", ref("Role", "deleter"), namespace="ns")
    check_binding_write(index, user=BOB, kind="RoleBinding", namespace="ns", new=new, old=old)


def test_can_bind_refuses_unknown_role_kinds() -> None:
    assert not can_bind(RbacIndex(), user=BOB, role_ref=ref("Pod", "x"), namespace="ns")


def test_confirm_no_escalation_returns_the_missing_pieces() -> None:
    index = RbacIndex()
    grant(index, GET_CM)
    wanted = [
        {
            "verbs": ["get", "list"],
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["a"],
        }
    ]
    assert confirm_no_escalation(index, user=BOB, rules=wanted, namespace="") == [
        PolicyRule(
            verbs=("list",), api_groups=("",), resources=("configmaps",), resource_names=("a",)
        )
    ]
    assert (
        confirm_no_escalation(index, user=BOB, rules=[PolicyRule.from_dict(GET_CM)], namespace="ns")
        == []
    )


def test_missing_roles_are_listed_as_resolution_errors() -> None:
    index = RbacIndex()
    subjects = [{"apiGroup": RBAC, "kind": "User", "name": "bob"}]
    index.upsert(
        "ClusterRoleBinding",
        {"metadata": {"name": "b"}, "roleRef": ref("ClusterRole", "gone"), "subjects": subjects},
    )
    error = forbidden(
        check_role_write, index=index, user=BOB, kind="Role", namespace="ns", new=role("r", GET_CM)
    )
    assert error.message.endswith(
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}'
        '; resolution errors: [clusterrole.rbac.authorization.k8s.io "gone" not found]'
    )


def test_compaction_merges_verbs_of_simple_rules_only() -> None:
    pieces = [
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("list",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",), resource_names=("a",)),
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("get",), non_resource_urls=("/x",)),
    ]
    assert [compact_string(r) for r in compact_rules(pieces)] == [
        '{NonResourceURLs:["/x"], Verbs:["get"]}',
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
        '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get"]}',
    ]


def test_only_gc_fields_changed() -> None:
    old = {"metadata": {"name": "r", "labels": {"a": "b"}, "finalizers": ["f"]}, "rules": []}
    assert only_gc_fields_changed({"metadata": {"name": "r", "labels": {"a": "b"}}}, old)
    assert not only_gc_fields_changed({"metadata": {"name": "r", "labels": {"a": "c"}}}, old)
    assert not only_gc_fields_changed(
        {"metadata": {"name": "r", "labels": {"a": "b"}}, "rules": [GET_CM]}, old
    )
