"""The JSON Patch a mutating webhook answers: applying it to the object sent gives the
object wanted, with no operation for what did not change."""

from __future__ import annotations

from typing import Any

import jsonpatch as reference
from hypothesis import given
from hypothesis import strategies as st

from pyocm.hooks.jsonpatch import diff, pointer_token


def test_equal_documents_need_no_operation() -> None:
    doc = {"a": [1, {"b": None}], "c": "x"}
    assert diff(doc, {"c": "x", "a": [1.0, {"b": None}]}) == []


def test_keys_with_slash_and_tilde_are_escaped() -> None:
    before = {"metadata": {"labels": {"a~b/c": "1"}}}
    after = {
        "metadata": {
            "labels": {"a~b/c": "2", "cluster.open-cluster-management.io/clusterset": "default"}
        }
    }
    ops = diff(before, after)
    assert ops == [
        {"op": "replace", "path": "/metadata/labels/a~0b~1c", "value": "2"},
        {
            "op": "add",
            "path": "/metadata/labels/cluster.open-cluster-management.io~1clusterset",
            "value": "default",
        },
    ]
    assert reference.apply_patch(before, ops) == after
    assert pointer_token("~1") == "~01", "tilde first, so a literal ~1 survives"


def test_a_boolean_is_no_number() -> None:
    assert diff({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert diff({"a": False}, {"a": 0}) == [{"op": "replace", "path": "/a", "value": 0}]


def test_arrays_patch_by_index_then_grow_or_shrink_at_the_end() -> None:
    before = {"t": [{"k": "a"}, {"k": "b"}, {"k": "c"}]}
    after = {"t": [{"k": "a", "time": "now"}]}
    ops = diff(before, after)
    assert ops == [
        {"op": "add", "path": "/t/0/time", "value": "now"},
        {"op": "remove", "path": "/t/2"},
        {"op": "remove", "path": "/t/1"},
    ]
    assert reference.apply_patch(before, ops) == after
    grown = {"t": [{"k": "a"}, {"k": "b"}, {"k": "c"}, {"k": "d"}, 5]}
    assert reference.apply_patch(before, diff(before, grown)) == grown


def test_a_missing_spec_is_added_whole() -> None:
    assert diff({"metadata": {}}, {"metadata": {}, "spec": {"hubAcceptsClient": False}}) == [
        {"op": "add", "path": "/spec", "value": {"hubAcceptsClient": False}}
    ]


KEYS = st.text(alphabet="ab/~.", max_size=4)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(alphabet="xy", max_size=2),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(KEYS, JSON, max_size=4), st.dictionaries(KEYS, JSON, max_size=4))
def test_applying_the_patch_gives_the_wanted_object(before: Any, after: Any) -> None:
    ops = diff(before, after)
    patched = reference.apply_patch(before, ops)
    assert diff(patched, after) == []
    assert patched == after
