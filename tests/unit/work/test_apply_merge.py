"""The apply layer's pure pieces: library-go's metadata merging, upstream's hashes and
the comparisons, each against the values upstream's code gives."""

from __future__ import annotations

import hashlib

import pytest

from pyocm.work.agent.apply.gohash import config_spec_hash, go_float, go_value
from pyocm.work.agent.apply.ignorefields import remove_json_path
from pyocm.work.agent.apply.merge import (
    json_equal,
    merge_map,
    merge_owner_refs,
    typed_equal,
    without_removals,
)
from pyocm.work.agent.apply.servicehash import spec_hash
from pyocm.work.agent.apply.update import same_outside_metadata


def test_merge_map_sets_and_removes() -> None:
    assert merge_map({"a": "1"}, {"b": "2"}) == ({"a": "1", "b": "2"}, True)
    assert merge_map({"a": "1"}, {"a": "1"}) == ({"a": "1"}, False)
    assert merge_map({"a": "1", "b": "2"}, {"a-": ""}) == ({"b": "2"}, True)
    assert merge_map({"b": "2"}, {"a-": ""}) == ({"b": "2"}, False)
    assert merge_map(None, None) == ({}, False)


def test_owner_refs_match_by_name_kind_and_group_only() -> None:
    mine = {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "AppliedManifestWork",
        "name": "w",
        "uid": "1",
    }
    newer_version = {**mine, "apiVersion": "work.open-cluster-management.io/v2", "uid": "2"}
    merged, modified = merge_owner_refs([mine], [newer_version])
    assert merged == [newer_version] and modified
    assert merge_owner_refs([mine], [mine]) == ([mine], False)
    assert merge_owner_refs([mine], [{**mine, "uid": "1-"}]) == ([], True)
    other_group = {**mine, "apiVersion": "other.io/v1"}
    assert merge_owner_refs([mine], [other_group])[0] == [mine, other_group]


def test_without_removals() -> None:
    obj = {
        "metadata": {
            "labels": {"a": "1", "b-": ""},
            "annotations": {"c-": ""},
            "ownerReferences": [{"uid": "x-"}, {"uid": "y"}],
        }
    }
    clean = without_removals(obj)
    assert clean["metadata"] == {
        "labels": {"a": "1"},
        "annotations": {},
        "ownerReferences": [{"uid": "y"}],
    }
    assert obj["metadata"]["labels"] == {"a": "1", "b-": ""}  # the input is left alone


def test_json_equal_is_strict_about_types_and_keys() -> None:
    assert json_equal({"a": 1}, {"a": 1.0})
    assert not json_equal({"a": True}, {"a": 1})
    assert not json_equal({"a": []}, {})
    assert not json_equal([1, 2], [2, 1])


def test_typed_equal_treats_zero_values_as_absent() -> None:
    assert typed_equal([{"verbs": ["get"], "resourceNames": []}], [{"verbs": ["get"]}])
    assert typed_equal(None, [])
    assert not typed_equal([{"verbs": ["get"]}], [{"verbs": ["list"]}])


def test_same_outside_metadata_ignores_metadata_and_status() -> None:
    a = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "n", "labels": {"a": "1"}},
        "spec": {"x": 1},
    }
    b = {**a, "metadata": {"name": "n", "uid": "u"}, "status": {"ready": True}}
    assert same_outside_metadata(a, b)
    assert not same_outside_metadata(a, {**b, "spec": {"x": 2}})
    assert not same_outside_metadata(a, {**b, "metadata": {"name": "m"}})


def test_config_spec_hash_is_upstreams() -> None:
    # server_side_apply_test.go's "server side apply ignore update" case carries this hash.
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": "default", "name": "test"},
        "data": {"foo1": "bar1"},
    }
    assert config_spec_hash(manifest) == "4c07ba481d04e9c38e5ed3bf24139537"


@pytest.mark.parametrize(
    ("number", "printed"),
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (100.0, "100"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (-2.25, "-2.25"),
    ],
)
def test_go_float(number: float, printed: str) -> None:
    assert go_float(number) == printed


def test_go_value_prints_as_fmt_does() -> None:
    value = {"b": [1, "x", None, True], "a": {"z": 1.5}, "c": {}}
    assert go_value(value) == "map[a:map[z:1.5] b:[1 x <nil> true] c:map[]]"


def test_service_spec_hash_follows_go_struct_order_and_omitempty() -> None:
    # Go writes ServiceSpec fields in struct order, drops empty ones, and always writes a
    # port's "port" and "targetPort" (a struct, 0 when unset).
    spec = {
        "selector": {"b": "1", "a": "2"},
        "type": "",
        "ports": [{"protocol": "TCP", "port": 80}],
    }
    expected = (
        '{"ports":[{"protocol":"TCP","port":80,"targetPort":0}],"selector":{"a":"2","b":"1"}}'
    )
    assert spec_hash(spec) == hashlib.sha256(expected.encode()).hexdigest()


def test_json_path_removal_as_upstream_splits_it() -> None:
    obj = {
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"image": "a", "name": "c"}]}}}
    }
    remove_json_path(obj, ".spec.replicas")
    remove_json_path(obj, ".spec.template.spec.containers[0].image")
    remove_json_path(obj, "not a path")  # upstream logs and removes nothing
    assert obj == {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
