"""Strategic merge patch: list strategies, directives, element order and error codes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.kube import smp
from pyocm.kube.patches import PatchError
from pyocm.kube.smp import Schema

# A test schema shaped like apimachinery's own test struct: a list merged by "name", a
# list of ints merged as a set, an untagged list, and a nested map with the same fields.
_ITEM = Schema(
    fields={
        "mergingList": Schema(merge=True, merge_key="name"),
        "mergingIntList": Schema(merge=True),
    }
)
SCHEMA = Schema(fields={**_ITEM.fields, "nested": _ITEM})


def item(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


def delete(name: str) -> dict[str, Any]:
    return {"name": name, "$patch": "delete"}


@pytest.mark.parametrize(
    ("current", "patch", "expected"),
    [
        pytest.param(
            {"mergingIntList": [1, 2]},
            {"mergingIntList": [3]},
            {"mergingIntList": [3, 1, 2]},
            id="set-new-items-first-without-order",
        ),
        pytest.param(
            {"mergingIntList": [1, 2]},
            {"mergingIntList": [2, 1]},
            {"mergingIntList": [2, 1]},
            id="set-patch-order-wins",
        ),
        pytest.param(
            {"mergingIntList": [1, 2, 3, 3, 4]},
            {
                "$setElementOrder/mergingIntList": [1, 2],
                "$deleteFromPrimitiveList/mergingIntList": [3],
            },
            {"mergingIntList": [1, 2, 4]},
            id="delete-all-duplicates",
        ),
        pytest.param(
            {"mergingIntList": [1, 2, 3, 4]},
            {
                "mergingIntList": [5],
                "$deleteFromPrimitiveList/mergingIntList": [2],
                "$setElementOrder/mergingIntList": [1, 3, 5],
            },
            {"mergingIntList": [1, 3, 5, 4]},
            id="add-and-delete-with-order",
        ),
        pytest.param(
            {}, {"$deleteFromPrimitiveList/mergingIntList": [1]}, {}, id="delete-from-absent-list"
        ),
        pytest.param(
            {"mergingList": [item("1", other="a"), item("2", value=2, other="b")]},
            {
                "$setElementOrder/mergingList": [item("4"), item("1"), item("2"), item("3")],
                "mergingList": [item("4", value=4), item("3", value=3)],
            },
            {
                "mergingList": [
                    item("4", value=4),
                    item("1", other="a"),
                    item("2", value=2, other="b"),
                    item("3", value=3),
                ]
            },
            id="merge-by-key-with-order",
        ),
        pytest.param(
            {"mergingList": [item("1", other="a"), item("3", value=2, other="b")]},
            {
                "$setElementOrder/mergingList": [item("1"), item("2")],
                "mergingList": [item("1", value=1), item("2", value=2)],
            },
            {
                "mergingList": [
                    item("1", value=1, other="a"),
                    item("2", value=2),
                    item("3", value=2, other="b"),
                ]
            },
            id="server-only-item-kept-after",
        ),
        pytest.param(
            {"mergingList": [item("1"), item("2", other="b"), item("4", other="c")]},
            {
                "$setElementOrder/mergingList": [item("2"), item("3")],
                "mergingList": [item("3"), delete("1")],
            },
            {"mergingList": [item("2", other="b"), item("4", other="c"), item("3")]},
            id="add-and-delete-keeps-go-order",
        ),
        pytest.param(
            {"mergingList": [item("3", other="a")]},
            {"$setElementOrder/mergingList": [item("2")], "mergingList": [item("2"), delete("1")]},
            {"mergingList": [item("2"), item("3", other="a")]},
            id="delete-missing-item",
        ),
        pytest.param(
            {"mergingList": [item("1"), item("2")]},
            {"mergingList": [{"$patch": "replace"}, item("9", value=9)]},
            {"mergingList": [item("9", value=9)]},
            id="list-replace-directive",
        ),
        pytest.param(
            {"mergingList": [item("1", value=1, other="x")]},
            {"mergingList": [item("1", value=None)]},
            {"mergingList": [item("1", other="x")]},
            id="null-inside-merged-item",
        ),
        pytest.param(
            {"untagged": [item("1"), item("2")]},
            {"untagged": [item("3")]},
            {"untagged": [item("3")]},
            id="untagged-list-replaced",
        ),
        pytest.param(
            {"m": {"a": 1, "b": 2}},
            {"m": {"$patch": "replace", "c": 3}},
            {"m": {"c": 3}},
            id="map-replace",
        ),
        pytest.param(
            {"m": {"a": 1}}, {"m": {"$patch": "delete"}}, {"m": {}}, id="map-delete-existing"
        ),
        pytest.param({}, {"m": {"$patch": "delete"}}, {}, id="map-delete-absent"),
        pytest.param(
            {"a": 1, "m": {"b": 2}}, {"$patch": "replace", "z": 1}, {"z": 1}, id="top-level-replace"
        ),
        pytest.param(
            {"a": 1}, {"a": None, "new": {"x": None, "y": 1}}, {"new": {"y": 1}}, id="nulls"
        ),
        pytest.param({"a": {"b": 1}}, {"a": "flat"}, {"a": "flat"}, id="type-change-replaces"),
        pytest.param(
            {"nested": {"name": "foo", "value": "bar", "simpleMap": {"k1": "new", "k2": "b"}}},
            {
                "nested": {
                    "$retainKeys": ["name", "simpleMap", "value"],
                    "simpleMap": {"k1": "modified"},
                }
            },
            {"nested": {"name": "foo", "value": "bar", "simpleMap": {"k1": "modified", "k2": "b"}}},
            id="retain-keys-keeps-listed",
        ),
        pytest.param(
            {"nested": {"name": "foo", "other": "x", "untagged": [1]}},
            {"nested": {"$retainKeys": ["name", "value"], "value": "bar", "untagged": None}},
            {"nested": {"name": "foo", "value": "bar"}},
            id="retain-keys-drops-unlisted",
        ),
        pytest.param(
            {"nested": {"name": "foo", "mergingList": [item("a"), item("b"), item("x")]}},
            {
                "nested": {
                    "$retainKeys": ["mergingList", "name"],
                    "$setElementOrder/mergingList": [item("a")],
                    "mergingList": [delete("b")],
                }
            },
            {"nested": {"name": "foo", "mergingList": [item("a"), item("x")]}},
            id="retain-keys-with-nested-delete",
        ),
    ],
)
def test_strategic_merge(
    current: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    before_current, before_patch = copy.deepcopy(current), copy.deepcopy(patch)
    assert smp.strategic_merge(current, patch, schema=SCHEMA) == expected
    assert current == before_current
    assert patch == before_patch


@pytest.mark.parametrize(
    ("current", "patch", "code", "message"),
    [
        pytest.param(
            {},
            [],
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
            id="patch-not-object",
        ),
        pytest.param(
            {},
            {"$retainKeys": "name"},
            400,
            "invalid patch format of retainKeys",
            id="retain-keys-not-list",
        ),
        pytest.param(
            {},
            {"$retainKeys": ["a"], "b": 1},
            400,
            "invalid patch format of retainKeys",
            id="retain-keys-missing-key",
        ),
        pytest.param(
            {},
            {"$setElementOrderx": [1]},
            400,
            "invalid patch format of setElementOrder list",
            id="bad-order-key",
        ),
        pytest.param(
            {},
            {"$deleteFromPrimitiveListx": [1]},
            400,
            "invalid patch format of primitive list",
            id="bad-delete-key",
        ),
        pytest.param(
            {"mergingIntList": [[1]]},
            {"mergingIntList": [[2]]},
            422,
            "lists of lists are not supported",
            id="list-of-lists",
        ),
        pytest.param(
            {"m": {}},
            {"m": {"$patch": "merge"}},
            500,
            "unknown patch type: merge in map: map[$patch:merge]",
            id="map-merge-directive",
        ),
        pytest.param(
            {"mergingList": [item("1")]},
            {"mergingList": [{"name": "1", "$patch": "merge"}]},
            500,
            "merging lists cannot yet be specified in the patch",
            id="list-merge-directive",
        ),
        pytest.param(
            {"mergingList": [item("1")]},
            {"mergingList": [{"value": 1}]},
            500,
            "map: map[value:1] does not contain declared merge key: name",
            id="missing-merge-key",
        ),
        pytest.param(
            {"mergingIntList": [1, 2]},
            {"$setElementOrder/mergingIntList": [2, 1], "mergingIntList": [1, 2]},
            500,
            "the order in patch list:\n[1 2]\n doesn't match $setElementOrder list:\n[2 1]",
            id="order-mismatch",
        ),
        pytest.param(
            {"mergingIntList": [1]},
            {"mergingIntList": ["a"]},
            500,
            "list element types are not identical: [1 a]",
            id="mixed-types",
        ),
    ],
)
def test_strategic_merge_errors(current: Any, patch: Any, code: int, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        smp.strategic_merge(current, patch, schema=SCHEMA)
    assert caught.value.code == code
    assert str(caught.value) == message


# --- the built-in kinds ---------------------------------------------------------------

META = {
    "name": "x",
    "labels": {"a": "1"},
    "finalizers": ["example.com/one", "example.com/two"],
    "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "o1", "uid": "u1"},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": "u2"},
    ],
}


def test_metadata_owner_references_merge_by_uid_on_every_builtin() -> None:
    schema = smp.schema_for("v1", "ConfigMap")
    assert schema is not None
    patch = {
        "metadata": {
            "ownerReferences": [{"uid": "u2", "controller": True}, {"uid": "u3", "name": "o3"}]
        }
    }
    result = smp.strategic_merge({"metadata": META, "data": {"k": "v"}}, patch, schema=schema)
    assert [r["uid"] for r in result["metadata"]["ownerReferences"]] == ["u1", "u2", "u3"]
    assert result["metadata"]["ownerReferences"][1]["controller"] is True
    assert result["metadata"]["ownerReferences"][1]["name"] == "o2"
    assert result["data"] == {"k": "v"}


def test_metadata_finalizers_merge_as_a_set_and_delete_by_directive() -> None:
    schema = smp.schema_for("coordination.k8s.io/v1", "Lease")
    assert schema is not None
    added = smp.strategic_merge(
        {"metadata": META},
        {"metadata": {"finalizers": ["example.com/one", "example.com/three"]}},
        schema=schema,
    )
    assert added["metadata"]["finalizers"] == [
        "example.com/one",
        "example.com/three",
        "example.com/two",
    ]
    removed = smp.strategic_merge(
        {"metadata": META},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/one"]}},
        schema=schema,
    )
    assert removed["metadata"]["finalizers"] == ["example.com/two"]


def test_configmap_data_merges_as_a_map() -> None:
    schema = smp.schema_for("v1", "ConfigMap")
    assert schema is not None
    result = smp.strategic_merge(
        {"data": {"a": "1", "b": "2"}}, {"data": {"b": None, "c": "3"}}, schema=schema
    )
    assert result == {"data": {"a": "1", "c": "3"}}


@pytest.mark.parametrize(
    ("api_version", "kind", "field", "current", "patch", "expected"),
    [
        pytest.param(
            "v1", "ServiceAccount", "secrets",
            [{"name": "s1"}], [{"name": "s2"}], [{"name": "s2"}, {"name": "s1"}],
            id="serviceaccount-secrets-merge-by-name",
        ),
        pytest.param(
            "v1", "ServiceAccount", "imagePullSecrets",
            [{"name": "s1"}], [{"name": "s2"}], [{"name": "s2"}],
            id="serviceaccount-imagepullsecrets-atomic",
        ),
        pytest.param(
            "rbac.authorization.k8s.io/v1", "ClusterRole", "rules",
            [{"verbs": ["get"]}], [{"verbs": ["list"]}], [{"verbs": ["list"]}],
            id="rbac-rules-atomic",
        ),
        pytest.param(
            "rbac.authorization.k8s.io/v1", "RoleBinding", "subjects",
            [{"kind": "User", "name": "a"}], [{"kind": "User", "name": "b"}], [{"kind": "User", "name": "b"}],
            id="rbac-subjects-atomic",
        ),
    ],
)  # fmt: skip
def test_top_level_lists(
    api_version: str,
    kind: str,
    field: str,
    current: list[Any],
    patch: list[Any],
    expected: list[Any],
) -> None:
    schema = smp.schema_for(api_version, kind)
    assert schema is not None
    assert smp.strategic_merge({field: current}, {field: patch}, schema=schema) == {field: expected}


def test_node_status_conditions_and_addresses_merge_by_type() -> None:
    schema = smp.schema_for("v1", "Node")
    assert schema is not None
    node = {
        "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}], "podCIDRs": ["10.0.0.0/24"]},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "MemoryPressure", "status": "False"},
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "capacity": {"cpu": "4", "memory": "8Gi"},
        },
    }
    patch = {
        "spec": {"taints": [{"key": "b", "effect": "NoExecute"}], "podCIDRs": ["fd00::/64"]},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "Hostname", "address": "n1"}],
            "capacity": {"pods": "110"},
        },
    }
    result = smp.strategic_merge(node, patch, schema=schema)
    assert result["spec"]["taints"] == [{"key": "b", "effect": "NoExecute"}]
    assert result["spec"]["podCIDRs"] == ["fd00::/64", "10.0.0.0/24"]
    assert result["status"]["conditions"] == [
        {"type": "Ready", "status": "False"},
        {"type": "MemoryPressure", "status": "False"},
    ]
    assert result["status"]["addresses"] == [
        {"type": "Hostname", "address": "n1"},
        {"type": "InternalIP", "address": "10.0.0.1"},
    ]
    assert result["status"]["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}


def test_namespace_conditions_merge_but_spec_finalizers_are_atomic() -> None:
    schema = smp.schema_for("v1", "Namespace")
    assert schema is not None
    namespace = {
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"conditions": [{"type": "A", "status": "True"}]},
    }
    patch = {
        "spec": {"finalizers": []},
        "status": {"conditions": [{"type": "B", "status": "True"}]},
    }
    result = smp.strategic_merge(namespace, patch, schema=schema)
    assert result["spec"]["finalizers"] == []
    assert [c["type"] for c in result["status"]["conditions"]] == ["B", "A"]


def test_csr_conditions_are_atomic() -> None:
    schema = smp.schema_for("certificates.k8s.io/v1", "CertificateSigningRequest")
    assert schema is not None
    csr = {"status": {"conditions": [{"type": "Approved", "status": "True"}]}}
    patch = {"status": {"conditions": [{"type": "Failed", "status": "True"}]}}
    assert smp.strategic_merge(csr, patch, schema=schema)["status"]["conditions"] == [
        {"type": "Failed", "status": "True"}
    ]


@pytest.mark.parametrize(
    ("api_version", "kind", "served"),
    [
        pytest.param("v1", "Namespace", True, id="namespace"),
        pytest.param("v1", "Secret", True, id="secret"),
        pytest.param("v1", "Event", True, id="core-event"),
        pytest.param("events.k8s.io/v1", "Event", True, id="events-event"),
        pytest.param("apiextensions.k8s.io/v1", "CustomResourceDefinition", True, id="crd"),
        pytest.param(
            "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", True, id="clusterrolebinding"
        ),
        pytest.param(
            "cluster.open-cluster-management.io/v1", "ManagedCluster", False, id="custom-resource"
        ),
        pytest.param("v1", "Pod", True, id="pod"),
        pytest.param("apps/v1", "Deployment", True, id="deployment"),
        pytest.param("v1", "ReplicationController", False, id="unserved-builtin"),
        pytest.param("v2", "Namespace", False, id="wrong-version"),
    ],
)
def test_schema_for(api_version: str, kind: str, served: bool) -> None:
    assert (smp.schema_for(api_version, kind) is not None) is served
