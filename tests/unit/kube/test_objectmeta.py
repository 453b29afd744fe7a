"""ValidateObjectMeta and ValidateObjectMetaUpdate: fields, messages, order."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.kube import names, objectmeta
from pyocm.kube.status import ErrorType, FieldError


def validate(meta: dict[str, Any], *, namespaced: bool = True, builtin: bool = True) -> list[str]:
    errors = objectmeta.validate_object_meta(
        meta, namespaced=namespaced, name_validator=names.is_dns1123_subdomain, builtin=builtin
    )
    return [e.message() for e in errors]


def test_valid_meta_has_no_errors() -> None:
    meta = {
        "name": "c1",
        "namespace": "open-cluster-management",
        "labels": {"open-cluster-management.io/cluster-name": "c1"},
        "annotations": {"Example.com/Mixed-Case": "ok"},
        "finalizers": [
            "cluster.open-cluster-management.io/api-resource-cleanup",
            "kubernetes",
            "orphan",
        ],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Namespace", "name": "n", "uid": "u", "controller": True}
        ],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1"}],
    }
    assert validate(meta) == []


@pytest.mark.parametrize(
    ("meta", "namespaced", "expected"),
    [
        pytest.param(
            {"namespace": "ns"},
            True,
            ["metadata.name: Required value: name or generateName is required"],
            id="no-name",
        ),
        pytest.param(
            {"name": "c1"}, True, ["metadata.namespace: Required value"], id="namespace-required"
        ),
        pytest.param(
            {"name": "c1", "namespace": "ns"},
            False,
            ["metadata.namespace: Forbidden: not allowed on this type"],
            id="namespace-forbidden",
        ),
        pytest.param(
            {"name": "c1", "namespace": "a.b"},
            True,
            ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
            id="namespace-label",
        ),
        pytest.param(
            {"name": "c1", "namespace": "ns", "generation": -1},
            True,
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
            id="negative-generation",
        ),
    ],
)
def test_identity_fields(meta: dict[str, Any], namespaced: bool, expected: list[str]) -> None:
    assert validate(meta, namespaced=namespaced) == expected


def test_invalid_name_uses_the_kind_name_validator() -> None:
    errors = objectmeta.validate_object_meta(
        {"name": "Bad_Name"}, namespaced=False, name_validator=names.is_dns1123_subdomain
    )
    assert len(errors) == 1
    assert errors[0].field == "metadata.name"
    assert (
        errors[0]
        .message()
        .startswith('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')
    )
    rbac = objectmeta.validate_object_meta(
        {"name": "system:masters"}, namespaced=False, name_validator=names.is_path_segment_name
    )
    assert rbac == []


def test_generate_name_prefix_may_end_with_dash() -> None:
    assert (
        validate({"generateName": "cluster1-", "name": "cluster1-x7k2p", "namespace": "ns"}) == []
    )
    errors = validate({"generateName": "Bad-", "name": "bad-x7k2p", "namespace": "ns"})
    assert len(errors) == 1
    assert errors[0].startswith(
        'metadata.generateName: Invalid value: "Bad-": a lowercase RFC 1123 subdomain'
    )


def test_labels_and_annotations() -> None:
    errors = validate(
        {
            "name": "c",
            "namespace": "ns",
            "labels": {"a/b/c": "v", "ok": "v@"},
            "annotations": {"bad key": "x"},
        }
    )
    assert [e.split(":")[0] for e in errors] == [
        "metadata.labels",
        "metadata.labels",
        "metadata.annotations",
    ]
    assert errors[0].startswith(
        'metadata.labels: Invalid value: "a/b/c": a qualified name must consist'
    )
    assert errors[1].startswith(
        'metadata.labels: Invalid value: "v@": a valid label must be an empty string'
    )
    assert errors[2].startswith(
        'metadata.annotations: Invalid value: "bad key": name part must consist'
    )


def test_annotations_total_size_limit() -> None:
    at_limit = {"k": "x" * (256 * 1024 - 1)}
    assert objectmeta.validate_annotations(at_limit, "metadata.annotations") == []
    over = {"k": "x" * (256 * 1024)}
    errors = objectmeta.validate_annotations(over, "metadata.annotations")
    assert errors == [
        FieldError(ErrorType.TOO_LONG, "metadata.annotations", "may not be more than 262144 bytes")
    ]
    assert (
        errors[0].message() == "metadata.annotations: Too long: may not be more than 262144 bytes"
    )


def test_owner_references() -> None:
    refs: list[dict[str, Any]] = [
        {"apiVersion": "", "kind": "", "name": "", "uid": ""},
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "a",
            "uid": "1",
            "controller": True,
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "b",
            "uid": "2",
            "controller": True,
        },
    ]
    errors = objectmeta.validate_owner_references(refs, "metadata.ownerReferences")
    assert [(e.field, e.detail) for e in errors] == [
        ("metadata.ownerReferences.apiVersion", "version must not be empty"),
        ("metadata.ownerReferences.kind", "kind must not be empty"),
        ("metadata.ownerReferences.name", "name must not be empty"),
        ("metadata.ownerReferences.uid", "uid must not be empty"),
        ("metadata.ownerReferences", "/v1, Kind=Event is disallowed from being an owner"),
        (
            "metadata.ownerReferences",
            'Only one reference can have Controller set to true. Found "true" in references for Deployment/a and Deployment/b',
        ),
    ]


@pytest.mark.parametrize(
    ("finalizers", "builtin", "expected"),
    [
        pytest.param(["example.com/x", "kubernetes", "foregroundDeletion"], True, [], id="valid"),
        pytest.param(
            ["cleanup"],
            True,
            [
                'metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified'
            ],
            id="builtin-needs-domain",
        ),
        pytest.param(["cleanup"], False, [], id="custom-resource-allows-bare-name"),
        pytest.param(
            ["orphan", "foregroundDeletion"],
            True,
            [
                'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set'
            ],
            id="orphan-and-foreground",
        ),
        pytest.param(["a/b/c"], False, None, id="invalid-qualified-name-at-list-path"),
    ],
)
def test_finalizers(finalizers: list[str], builtin: bool, expected: list[str] | None) -> None:
    errors = validate({"name": "c", "namespace": "ns", "finalizers": finalizers}, builtin=builtin)
    if expected is None:
        assert len(errors) == 1
        assert errors[0].startswith(
            'metadata.finalizers: Invalid value: "a/b/c": a qualified name must'
        )
    else:
        assert errors == expected


def test_managed_fields() -> None:
    errors = validate(
        {
            "name": "c",
            "namespace": "ns",
            "managedFields": [
                {"manager": "m" * 129, "operation": "Patch", "fieldsType": "FieldsV2"}
            ],
        }
    )
    assert [e.split(":")[0] for e in errors] == [
        "metadata.managedFields[0].operation",
        "metadata.managedFields[0].fieldsType",
        "metadata.managedFields[0].manager",
    ]
    assert (
        errors[0]
        == 'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`'
    )


OLD: dict[str, Any] = {
    "name": "c1",
    "namespace": "ns",
    "uid": "u-1",
    "creationTimestamp": "2026-11-22T03:22:01Z",
    "generation": 3,
    "finalizers": ["example.com/a"],
}


def update(new: dict[str, Any], old: dict[str, Any] = OLD, *, builtin: bool = True) -> list[str]:
    return [e.message() for e in objectmeta.validate_object_meta_update(new, old, builtin=builtin)]


def test_unchanged_update_is_valid() -> None:
    assert update(dict(OLD)) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            {"name": "c2"}, 'metadata.name: Invalid value: "c2": field is immutable', id="name"
        ),
        pytest.param(
            {"namespace": "other"},
            'metadata.namespace: Invalid value: "other": field is immutable',
            id="namespace",
        ),
        pytest.param(
            {"uid": "u-2"}, 'metadata.uid: Invalid value: "u-2": field is immutable', id="uid"
        ),
        pytest.param(
            {"creationTimestamp": "2026-11-22T03:22:02Z"},
            'metadata.creationTimestamp: Invalid value: "2026-11-22T03:22:02Z": field is immutable',
            id="creation-timestamp",
        ),
        pytest.param(
            {"deletionTimestamp": "2026-11-22T04:00:00Z"},
            'metadata.deletionTimestamp: Invalid value: "2026-11-22T04:00:00Z": field is immutable',
            id="deletion-timestamp-set-by-client",
        ),
        pytest.param(
            {"deletionGracePeriodSeconds": 0},
            "metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable",
            id="grace-period-pointer-zero-differs-from-absent",
        ),
        pytest.param(
            {"generation": 2},
            "metadata.generation: Invalid value: 2: must not be decremented",
            id="generation-decremented",
        ),
    ],
)
def test_immutable_fields(change: dict[str, Any], expected: str) -> None:
    assert update({**OLD, **change}) == [expected]


def test_same_instant_in_another_spelling_is_not_a_change() -> None:
    assert update({**OLD, "creationTimestamp": "2026-11-22T04:22:01+01:00"}) == []


def test_generation_may_increase_and_absent_strings_equal_empty() -> None:
    assert update({**OLD, "generation": 4}) == []
    assert update({"name": "c1", "uid": ""}, {"name": "c1"}) == []


def test_deletion_timestamp_cannot_be_removed() -> None:
    deleting = {**OLD, "deletionTimestamp": "2026-11-22T04:00:00Z", "deletionGracePeriodSeconds": 0}
    errors = update({**OLD}, deleting)
    assert errors == [
        "metadata.deletionTimestamp: Invalid value: null: field is immutable",
        "metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable",
    ]


def test_no_new_finalizers_while_deleting() -> None:
    deleting = {**OLD, "deletionTimestamp": "2026-11-22T04:00:00Z"}
    errors = update(
        {**deleting, "finalizers": ["example.com/b", "example.com/a", "example.com/c"]}, deleting
    )
    assert errors == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"example.com/b", "example.com/c"}'
    ]
    assert update({**deleting, "finalizers": []}, deleting) == []


def test_update_revalidates_labels_and_builtin_finalizers() -> None:
    errors = update({**OLD, "labels": {"k": "v@"}, "finalizers": ["bare"]})
    assert [e.split(":")[0] for e in errors] == ["metadata.labels", "metadata.finalizers[0]"]
    assert update({**OLD, "finalizers": ["bare"]}, builtin=False) == []
