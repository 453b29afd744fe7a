"""JSON merge patch and JSON patch: results, immutability of inputs, error codes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.kube import patches
from pyocm.kube.patches import PatchError

ORIGINAL: dict[str, Any] = {
    "metadata": {"name": "c1", "labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
    "spec": {"hubAcceptsClient": False, "taints": [{"key": "k", "effect": "NoSelect"}]},
}


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            {"metadata": {"labels": {"c": "3"}}},
            {
                **ORIGINAL,
                "metadata": {**ORIGINAL["metadata"], "labels": {"a": "1", "b": "2", "c": "3"}},
            },
            id="add-label",
        ),
        pytest.param(
            {"metadata": {"labels": {"a": None}}},
            {**ORIGINAL, "metadata": {**ORIGINAL["metadata"], "labels": {"b": "2"}}},
            id="null-deletes",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["z"]}},
            {**ORIGINAL, "metadata": {**ORIGINAL["metadata"], "finalizers": ["z"]}},
            id="list-replaced",
        ),
        pytest.param({"spec": None}, {"metadata": ORIGINAL["metadata"]}, id="delete-subtree"),
        pytest.param(
            {"status": {"conditions": [], "x": None, "y": {"z": None}}},
            {**ORIGINAL, "status": {"conditions": [], "y": {}}},
            id="new-subtree-nulls-dropped",
        ),
        pytest.param(
            {"spec": "flat"}, {**ORIGINAL, "spec": "flat"}, id="object-replaced-by-scalar"
        ),
        pytest.param({}, ORIGINAL, id="empty-patch"),
    ],
)
def test_merge_patch(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(ORIGINAL)
    result = patches.merge_patch(ORIGINAL, patch)
    assert result == expected
    assert before == ORIGINAL


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param({"a": 1}, ["x"], ["x"], id="non-object-patch-replaces"),
        pytest.param("text", {"a": {"b": None, "c": 1}}, {"a": {"c": 1}}, id="non-object-target"),
        pytest.param(
            {"a": [1, {"b": None}]},
            {"a": [{"b": None}]},
            {"a": [{"b": None}]},
            id="nulls-in-lists-kept",
        ),
    ],
)
def test_merge_patch_rfc7386_cases(original: Any, patch: Any, expected: Any) -> None:
    assert patches.merge_patch(original, patch) == expected


def test_merge_patch_result_shares_nothing_with_inputs() -> None:
    original = {"keep": {"deep": [1]}, "spec": {"x": 1}}
    patch = {"spec": {"list": [{"a": 1}]}}
    result = patches.merge_patch(original, patch)
    result["keep"]["deep"].append(2)
    result["spec"]["list"][0]["a"] = 2
    assert original == {"keep": {"deep": [1]}, "spec": {"x": 1}}
    assert patch == {"spec": {"list": [{"a": 1}]}}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param({"a": 1, "b": 2}, {"a": 1}, {"b": None}, id="removed-key"),
        pytest.param(
            {"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}, {"a": {"c": 3}}, id="nested-change"
        ),
        pytest.param({"a": {"b": 1}}, {"a": {"b": 1}}, {}, id="no-change"),
        pytest.param({"l": [1, 2]}, {"l": [1]}, {"l": [1]}, id="list-whole"),
        pytest.param({"a": 1}, {"a": True}, {"a": True}, id="bool-is-not-int"),
        pytest.param({"a": 1}, {"a": 1.0}, {}, id="int-equals-float"),
        pytest.param({"a": {"b": 1}}, {"a": 5}, {"a": 5}, id="object-to-scalar"),
    ],
)
def test_create_merge_patch(
    old: dict[str, Any], new: dict[str, Any], expected: dict[str, Any]
) -> None:
    patch = patches.create_merge_patch(old, new)
    assert patch == expected
    assert patches.merge_patch(old, patch) == new


def test_create_merge_patch_round_trips_a_real_object() -> None:
    new = copy.deepcopy(ORIGINAL)
    new["metadata"]["labels"]["a"] = "changed"
    del new["metadata"]["labels"]["b"]
    new["spec"]["taints"] = []
    new["status"] = {"conditions": [{"type": "Ready"}]}
    patch = patches.create_merge_patch(ORIGINAL, new)
    assert patch == {
        "metadata": {"labels": {"a": "changed", "b": None}},
        "spec": {"taints": []},
        "status": {"conditions": [{"type": "Ready"}]},
    }
    assert patches.merge_patch(ORIGINAL, patch) == new


@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        pytest.param(
            [{"op": "add", "path": "/metadata/labels/c", "value": "3"}],
            {"c": "3", "a": "1", "b": "2"},
            id="add",
        ),
        pytest.param([{"op": "remove", "path": "/metadata/labels/a"}], {"b": "2"}, id="remove"),
        pytest.param(
            [{"op": "replace", "path": "/metadata/labels/a", "value": "9"}],
            {"a": "9", "b": "2"},
            id="replace",
        ),
        pytest.param(
            [{"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/z"}],
            {"b": "2", "z": "1"},
            id="move",
        ),
        pytest.param(
            [{"op": "copy", "from": "/metadata/labels/a", "path": "/metadata/labels/z"}],
            {"a": "1", "b": "2", "z": "1"},
            id="copy",
        ),
        pytest.param(
            [
                {"op": "test", "path": "/metadata/labels/a", "value": "1"},
                {"op": "add", "path": "/metadata/labels/t", "value": "ok"},
            ],
            {"a": "1", "b": "2", "t": "ok"},
            id="test-then-add",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/labels/a~1b", "value": "s"}],
            {"a": "1", "b": "2", "a/b": "s"},
            id="escaped-slash",
        ),
    ],
)
def test_json_patch(operations: list[dict[str, Any]], expected: dict[str, str]) -> None:
    before = copy.deepcopy(ORIGINAL)
    result = patches.json_patch(ORIGINAL, operations)
    assert result["metadata"]["labels"] == expected
    assert before == ORIGINAL


def test_json_patch_appends_to_list_and_does_not_alias_values() -> None:
    value = {"key": "new"}
    result = patches.json_patch(ORIGINAL, [{"op": "add", "path": "/spec/taints/-", "value": value}])
    assert result["spec"]["taints"] == [{"key": "k", "effect": "NoSelect"}, {"key": "new"}]
    result["spec"]["taints"][1]["key"] = "mutated"
    assert value == {"key": "new"}


@pytest.mark.parametrize(
    ("operations", "code", "message"),
    [
        pytest.param(
            {"op": "add"},
            400,
            "json: cannot unmarshal the patch into a list of operations",
            id="not-a-list",
        ),
        pytest.param(
            ["x"],
            400,
            "json: cannot unmarshal the patch into a list of operations",
            id="not-objects",
        ),
        pytest.param([{"op": "frob", "path": "/a"}], 422, "Unexpected kind: frob", id="unknown-op"),
        pytest.param([{"path": "/a"}], 422, "Unexpected kind: unknown", id="missing-op"),
        pytest.param(
            [{"op": "add", "path": "/a"}],
            422,
            'add operation does not apply: missing "value"',
            id="missing-value",
        ),
        pytest.param(
            [{"op": "move", "path": "/a"}],
            422,
            'move operation does not apply: missing "from"',
            id="missing-from",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/annotations/x"}],
            422,
            'remove operation does not apply: doc is missing path: "/metadata/annotations/x"',
            id="remove-missing",
        ),
        pytest.param(
            [{"op": "replace", "path": "/spec/nothing", "value": 1}],
            422,
            'replace operation does not apply: doc is missing path: "/spec/nothing"',
            id="replace-missing",
        ),
        pytest.param(
            [{"op": "add", "path": "/nope/deeper", "value": 1}],
            422,
            'add operation does not apply: doc is missing path: "/nope/deeper"',
            id="add-missing-parent",
        ),
        pytest.param(
            [{"op": "copy", "from": "/nope", "path": "/x"}],
            422,
            'copy operation does not apply: doc is missing from path: "/nope"',
            id="copy-missing-from",
        ),
        pytest.param(
            [{"op": "test", "path": "/metadata/name", "value": "other"}],
            422,
            "testing value /metadata/name failed: test failed",
            id="test-fails",
        ),
        pytest.param(
            [{"op": "test", "path": "/spec/hubAcceptsClient", "value": 0}],
            422,
            "testing value /spec/hubAcceptsClient failed: test failed",
            id="test-false-is-not-zero",
        ),
    ],
)
def test_json_patch_errors(operations: Any, code: int, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        patches.json_patch(ORIGINAL, operations)
    assert caught.value.code == code
    assert str(caught.value) == message


def test_json_patch_failure_leaves_original_untouched() -> None:
    before = copy.deepcopy(ORIGINAL)
    with pytest.raises(PatchError):
        patches.json_patch(
            ORIGINAL,
            [{"op": "remove", "path": "/metadata/labels/a"}, {"op": "remove", "path": "/missing"}],
        )
    assert before == ORIGINAL


def test_json_patch_operation_limit() -> None:
    operations = [{"op": "test", "path": "/metadata/name", "value": "c1"}] * (
        patches.MAX_JSON_PATCH_OPERATIONS + 1
    )
    with pytest.raises(PatchError) as caught:
        patches.json_patch(ORIGINAL, operations)
    assert caught.value.code == 413
    assert str(caught.value) == "The allowed maximum operations in a JSON patch is 10000, got 10001"


def test_patch_error_is_value_error_with_default_422() -> None:
    assert issubclass(PatchError, ValueError)
    assert PatchError("x").code == 422
