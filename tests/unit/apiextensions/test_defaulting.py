"""Structural defaulting: which missing fields get defaults, and which nulls are dropped."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import yaml

from pyocm.apiserver.apiextensions import defaulting, pruning
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from tests.reference import shared

CRDS = shared("reference", "ocm-crds")


@functools.cache
def compiled(file_part: str) -> CompiledSchema:
    (path,) = CRDS.glob(f"*{file_part}*.yaml")
    crd = yaml.safe_load(path.read_text())
    return CompiledSchema.from_openapi(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def defaulted(obj: dict[str, Any], schema: CompiledSchema) -> dict[str, Any]:
    defaulting.apply_defaults(obj, schema)
    return obj


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, {"leaseDurationSeconds": 60}, id="missing"),
        pytest.param({"leaseDurationSeconds": 30}, {"leaseDurationSeconds": 30}, id="kept"),
        pytest.param({"leaseDurationSeconds": None}, {"leaseDurationSeconds": 60}, id="null-gets-default"),
        pytest.param({"hubAcceptsClient": None}, {"leaseDurationSeconds": 60}, id="null-without-default-dropped"),
    ],
)
def test_managed_cluster_lease_duration(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = defaulted({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
                     "metadata": {"name": "c1"}, "spec": spec}, compiled("managedclusters.crd"))
    assert obj["spec"] == expected


def test_no_spec_means_no_spec_defaults() -> None:
    obj = defaulted({"metadata": {"name": "c1"}}, compiled("managedclusters.crd"))
    assert obj == {"metadata": {"name": "c1"}}


def test_nullable_null_is_kept() -> None:
    obj = defaulted({"spec": {"taints": [{"key": "k", "effect": "NoSelect", "timeAdded": None}]}}, compiled("managedclusters.crd"))
    assert obj["spec"]["taints"] == [{"key": "k", "effect": "NoSelect", "timeAdded": None}]


def test_rollout_defaults_reach_into_array_items_after_pruning() -> None:
    path = shared("seeds", "addon-template-examples", "upgrade", "cluster-management-addon.yaml")
    doc = yaml.safe_load(path.read_text())
    schema = compiled("v1alpha1-0000_00_addon")
    assert pruning.prune(doc, schema) == ["spec.installStrategy.placements[0].rolloutStrategy.all.timeout"]
    defaulting.apply_defaults(doc, schema)
    assert doc["spec"]["installStrategy"]["placements"][0]["rolloutStrategy"] == {
        "type": "All", "all": {"maxFailures": 0, "minSuccessTime": "0", "progressDeadline": "None"},
    }


SCHEMA = CompiledSchema.from_openapi({
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "mode": {"type": "string", "default": "Fast"},
                "limits": {"type": "object", "properties": {"cpu": {"type": "string", "default": "1"}}},
                "pools": {"type": "object", "additionalProperties": {
                    "type": "object", "default": {"size": 1},
                    "properties": {"size": {"type": "integer"}, "zone": {"type": "string", "default": "a"}},
                }},
                "steps": {"type": "array", "items": {
                    "type": "object", "default": {"name": "step"},
                    "properties": {"name": {"type": "string"}, "retries": {"type": "integer", "default": 3}},
                }},
                "note": {"type": "string", "nullable": True, "default": "n"},
            },
        },
    },
})


def test_a_default_object_is_created_and_then_filled() -> None:
    assert defaulted({}, SCHEMA) == {"spec": {"mode": "Fast", "note": "n"}}


def test_defaults_only_fill_objects_that_exist() -> None:
    assert defaulted({"spec": {"limits": {}}}, SCHEMA)["spec"]["limits"] == {"cpu": "1"}


def test_map_values_get_defaults_and_null_values_are_replaced() -> None:
    obj = defaulted({"spec": {"pools": {"east": {"size": 5}, "west": None}}}, SCHEMA)
    assert obj["spec"]["pools"] == {"east": {"size": 5, "zone": "a"}, "west": {"size": 1, "zone": "a"}}


def test_array_items_get_defaults_and_null_items_are_replaced() -> None:
    obj = defaulted({"spec": {"steps": [{"name": "build"}, None]}}, SCHEMA)
    assert obj["spec"]["steps"] == [{"name": "build", "retries": 3}, {"name": "step", "retries": 3}]


def test_nullable_fields_keep_an_explicit_null() -> None:
    assert defaulted({"spec": {"note": None}}, SCHEMA)["spec"]["note"] is None


def test_defaults_are_copies() -> None:
    first = defaulted({"spec": {"pools": {"x": None}}}, SCHEMA)
    first["spec"]["pools"]["x"]["size"] = 99
    second = defaulted({"spec": {"pools": {"x": None}}}, SCHEMA)
    assert second["spec"]["pools"]["x"]["size"] == 1


def test_defaulting_is_idempotent_for_reads() -> None:
    once = defaulted({"spec": {"steps": [{}]}}, SCHEMA)
    twice = defaulted(defaulting.copy_json(once), SCHEMA)
    assert twice == once == {"spec": {"mode": "Fast", "note": "n", "steps": [{"retries": 3}]}}
