"""The binding index: scoping, subjects, and staying right as objects come and go."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.index import RbacIndex

Obj = dict[str, Any]
READ_CM = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}
ALICE = UserInfo(name="alice", groups=("team-a", "system:authenticated"))


def subject(kind: str, name: str, namespace: str = "") -> dict[str, str]:
    out = {"kind": kind, "name": name}
    if namespace:
        out["namespace"] = namespace
    if kind != "ServiceAccount":
        out["apiGroup"] = "rbac.authorization.k8s.io"
    return out


def role(name: str, *rules: Obj, namespace: str = "") -> Obj:
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"metadata": meta, "rules": list(rules)}


def binding(
    name: str, ref_kind: str, ref_name: str, *subjects: dict[str, str], namespace: str = ""
) -> Obj:
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": ref_kind, "name": ref_name}
    return {"metadata": meta, "roleRef": ref, "subjects": list(subjects)}


def granted(index: RbacIndex, user: UserInfo, namespace: str, verb: str = "get") -> bool:
    attrs = Attributes(user=user, verb=verb, resource="configmaps", namespace=namespace)
    return any(rule.allows(attrs) for rule, _ in index.rules_for(user, namespace))


def test_role_binding_to_cluster_role_applies_in_its_namespace_only() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert(
        "RoleBinding",
        binding("rb", "ClusterRole", "reader", subject("User", "alice"), namespace="ns1"),
    )
    assert granted(index, ALICE, "ns1")
    assert not granted(index, ALICE, "ns2")
    assert not granted(index, ALICE, "")


def test_cluster_role_binding_applies_everywhere() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "reader", subject("Group", "team-a"))
    )
    assert granted(index, ALICE, "ns1")
    assert granted(index, ALICE, "")


def test_role_binding_uses_the_role_of_its_own_namespace() -> None:
    index = RbacIndex()
    index.upsert("Role", role("reader", READ_CM, namespace="ns2"))
    index.upsert(
        "RoleBinding", binding("rb", "Role", "reader", subject("User", "alice"), namespace="ns1")
    )
    assert not granted(index, ALICE, "ns1")
    index.upsert("Role", role("reader", READ_CM, namespace="ns1"))
    assert granted(index, ALICE, "ns1")
    assert not granted(index, ALICE, "ns2")


def test_cluster_role_binding_to_a_role_grants_nothing() -> None:
    index = RbacIndex()
    index.upsert("Role", role("reader", READ_CM, namespace="ns1"))
    index.upsert("ClusterRoleBinding", binding("crb", "Role", "reader", subject("User", "alice")))
    assert not granted(index, ALICE, "ns1")
    [match] = index.bindings_for(ALICE, "ns1")
    assert match.rules is None
    assert match.error == 'role.rbac.authorization.k8s.io "reader" not found'


@pytest.mark.parametrize(
    ("subj", "user", "namespace", "allowed"),
    [
        pytest.param(subject("User", "alice"), ALICE, "ns1", True, id="user"),
        pytest.param(subject("User", "bob"), ALICE, "ns1", False, id="other-user"),
        pytest.param(subject("Group", "team-a"), ALICE, "ns1", True, id="group"),
        pytest.param(subject("Group", "alice"), ALICE, "ns1", False, id="group-named-like-user"),
        pytest.param(subject("User", "team-a"), ALICE, "ns1", False, id="user-named-like-group"),
        pytest.param(
            subject("ServiceAccount", "builder", "ns1"),
            UserInfo(name="system:serviceaccount:ns1:builder"),
            "ns1",
            True,
            id="service-account",
        ),
        pytest.param(
            subject("ServiceAccount", "builder", "ns2"),
            UserInfo(name="system:serviceaccount:ns1:builder"),
            "ns1",
            False,
            id="service-account-other-namespace",
        ),
        pytest.param(
            subject("ServiceAccount", "builder"),
            UserInfo(name="system:serviceaccount:ns1:builder"),
            "ns1",
            True,
            id="service-account-defaults-to-binding-namespace",
        ),
        pytest.param(
            subject("ServiceAccount", "builder"),
            UserInfo(name="system:serviceaccount:ns2:builder"),
            "ns1",
            False,
            id="service-account-default-is-not-any-namespace",
        ),
        pytest.param(subject("Robot", "alice"), ALICE, "ns1", False, id="unknown-kind"),
    ],
)
def test_role_binding_subjects(
    subj: dict[str, str], user: UserInfo, namespace: str, allowed: bool
) -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert("RoleBinding", binding("rb", "ClusterRole", "reader", subj, namespace=namespace))
    assert granted(index, user, namespace) is allowed


def test_cluster_role_binding_service_account_needs_a_namespace() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert(
        "ClusterRoleBinding",
        binding("crb", "ClusterRole", "reader", subject("ServiceAccount", "builder")),
    )
    assert not granted(index, UserInfo(name="system:serviceaccount:ns1:builder"), "ns1")
    index.upsert(
        "ClusterRoleBinding",
        binding("crb", "ClusterRole", "reader", subject("ServiceAccount", "builder", "ns1")),
    )
    assert granted(index, UserInfo(name="system:serviceaccount:ns1:builder"), "ns1")


def test_roles_changing_after_bindings_exist() -> None:
    index = RbacIndex()
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "reader", subject("User", "alice"))
    )
    assert not granted(index, ALICE, "ns")
    index.upsert("ClusterRole", role("reader", READ_CM))
    assert granted(index, ALICE, "ns")
    index.upsert("ClusterRole", role("reader", {**READ_CM, "verbs": ["list"]}))
    assert not granted(index, ALICE, "ns")
    assert granted(index, ALICE, "ns", verb="list")
    index.delete("ClusterRole", name="reader")
    assert not granted(index, ALICE, "ns", verb="list")


def test_binding_update_moves_it_between_subjects() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert(
        "RoleBinding",
        binding("rb", "ClusterRole", "reader", subject("User", "alice"), namespace="ns"),
    )
    bob = UserInfo(name="bob")
    index.upsert(
        "RoleBinding",
        binding("rb", "ClusterRole", "reader", subject("User", "bob"), namespace="ns"),
    )
    assert not granted(index, ALICE, "ns")
    assert granted(index, bob, "ns")
    index.delete("RoleBinding", namespace="ns", name="rb")
    assert not granted(index, bob, "ns")
    assert list(index.bindings_for(bob, "ns")) == []


def test_binding_update_changes_its_role_ref() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert("ClusterRole", role("nothing"))
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "reader", subject("User", "alice"))
    )
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "nothing", subject("User", "alice"))
    )
    assert not granted(index, ALICE, "")


def test_delete_of_missing_objects_is_quiet() -> None:
    index = RbacIndex()
    index.delete("Role", namespace="ns", name="x")
    index.delete("RoleBinding", namespace="ns", name="x")
    index.delete("ClusterRoleBinding", namespace="ignored", name="x")


def test_cluster_role_binding_delete_ignores_namespace() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "reader", subject("User", "alice"))
    )
    index.delete("ClusterRoleBinding", namespace="whatever", name="crb")
    assert not granted(index, ALICE, "")


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="not an RBAC kind: 'Pod'"):
        RbacIndex().upsert("Pod", {"metadata": {"name": "p"}})
    with pytest.raises(ValueError, match="not an RBAC kind"):
        RbacIndex().delete("Pod", name="p")


def test_only_bindings_naming_the_user_are_visited() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    for i in range(500):
        index.upsert(
            "ClusterRoleBinding",
            binding(f"other-{i}", "ClusterRole", "reader", subject("Group", f"g{i}")),
        )
        index.upsert(
            "RoleBinding",
            binding(f"rb-{i}", "ClusterRole", "reader", subject("User", f"u{i}"), namespace="ns"),
        )
    index.upsert(
        "ClusterRoleBinding", binding("mine", "ClusterRole", "reader", subject("Group", "team-a"))
    )
    index.upsert(
        "RoleBinding",
        binding("mine-ns", "ClusterRole", "reader", subject("User", "alice"), namespace="ns"),
    )
    names = [m.binding.name for m in index.bindings_for(ALICE, "ns")]
    assert names == ["mine", "mine-ns"]


def test_bindings_visit_cluster_bindings_first_then_in_arrival_order() -> None:
    index = RbacIndex()
    index.upsert(
        "RoleBinding", binding("rb", "ClusterRole", "r", subject("User", "alice"), namespace="ns")
    )
    index.upsert(
        "ClusterRoleBinding", binding("crb-2", "ClusterRole", "r", subject("Group", "team-a"))
    )
    index.upsert(
        "ClusterRoleBinding", binding("crb-1", "ClusterRole", "r", subject("User", "alice"))
    )
    # Re-applying a binding keeps its place.
    index.upsert(
        "ClusterRoleBinding", binding("crb-2", "ClusterRole", "r", subject("User", "alice"))
    )
    names = [m.binding.name for m in index.bindings_for(ALICE, "ns")]
    assert names == ["crb-2", "crb-1", "rb"]


def test_a_binding_naming_the_user_twice_is_visited_once_with_its_first_matching_subject() -> None:
    index = RbacIndex()
    index.upsert("ClusterRole", role("reader", READ_CM))
    subjects = (subject("User", "bob"), subject("Group", "team-a"), subject("User", "alice"))
    index.upsert("ClusterRoleBinding", binding("crb", "ClusterRole", "reader", *subjects))
    [match] = index.bindings_for(ALICE, "")
    assert match.describe() == 'ClusterRoleBinding "crb" of ClusterRole "reader" to Group "team-a"'


def test_rules_for_yields_each_rule_with_its_source() -> None:
    index = RbacIndex()
    second = {"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"]}
    index.upsert("Role", role("r", READ_CM, second, namespace="ns"))
    index.upsert(
        "RoleBinding", binding("rb", "Role", "r", subject("User", "alice"), namespace="ns")
    )
    found = [(rule.to_dict(), source.describe()) for rule, source in index.rules_for(ALICE, "ns")]
    assert found == [
        (READ_CM, 'RoleBinding "rb/ns" of Role "r" to User "alice"'),
        (second, 'RoleBinding "rb/ns" of Role "r" to User "alice"'),
    ]


def test_index_holds_no_reference_to_the_objects_it_was_given() -> None:
    index = RbacIndex()
    reader = role("reader", READ_CM)
    index.upsert("ClusterRole", reader)
    reader["rules"][0]["verbs"] = ["delete"]
    index.upsert(
        "ClusterRoleBinding", binding("crb", "ClusterRole", "reader", subject("User", "alice"))
    )
    assert granted(index, ALICE, "")
