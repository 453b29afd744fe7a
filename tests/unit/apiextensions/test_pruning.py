"""Pruning: unknown fields go, known ones and preserved subtrees stay, and removals are reported."""

from __future__ import annotations

import functools
from typing import Any

import yaml

from pyocm.apiserver.apiextensions import pruning
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from tests.reference import shared

CRDS = shared("reference", "ocm-crds")
EXAMPLES = shared("seeds", "addon-template-examples")


@functools.cache
def compiled(file_part: str) -> CompiledSchema:
    (path,) = CRDS.glob(f"*{file_part}*.yaml")
    crd = yaml.safe_load(path.read_text())
    return CompiledSchema.from_openapi(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def test_unknown_fields_are_removed_and_reported_in_order() -> None:
    obj = {
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": "c1", "notObjectMeta": True},
        "spec": {"hubAcceptsClient": True, "foo": 1, "taints": [{"key": "k", "effect": "NoSelect", "bar": {"x": 1}}]},
        "status": {"capacity": {"cpu": "1"}, "version": {"kubernetes": "v1", "git": "abc"}},
        "extra": {"a": 1},
    }
    removed = pruning.prune(obj, compiled("managedclusters.crd"))
    assert removed == ["spec.foo", "spec.taints[0].bar", "status.version.git", "extra"]
    assert obj == {
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        # the root ObjectMeta belongs to the generic store and is not touched here
        "metadata": {"name": "c1", "notObjectMeta": True},
        "spec": {"hubAcceptsClient": True, "taints": [{"key": "k", "effect": "NoSelect"}]},
        "status": {"capacity": {"cpu": "1"}, "version": {"kubernetes": "v1"}},
    }


def test_a_known_object_keeps_everything() -> None:
    obj = {"spec": {"leaseDurationSeconds": 60}}
    assert pruning.prune(obj, compiled("managedclusters.crd")) == []
    assert obj == {"spec": {"leaseDurationSeconds": 60}}


def test_type_meta_is_pruned_when_not_a_resource_root() -> None:
    schema = CompiledSchema.from_openapi({"type": "object", "properties": {"a": {"type": "string"}}})
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {}, "a": "x"}
    assert pruning.prune(obj, schema, is_resource_root=False) == ["apiVersion", "kind", "metadata"]
    assert obj == {"a": "x"}


SCHEMA = CompiledSchema.from_openapi({
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "pools": {"type": "object", "additionalProperties": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                "free": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "freeList": {
                    "type": "array", "x-kubernetes-preserve-unknown-fields": True,
                    "items": {"type": "object", "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                },
                "untyped": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
})


def test_map_values_are_pruned_by_the_additional_properties_schema() -> None:
    obj = {"spec": {"pools": {"east": {"size": 1, "zone": "a"}}}}
    assert pruning.prune(obj, SCHEMA) == ["spec.pools.east.zone"]
    assert obj == {"spec": {"pools": {"east": {"size": 1}}}}


def test_preserve_unknown_fields_keeps_unknowns_but_prunes_known_properties() -> None:
    obj: dict[str, Any] = {"spec": {"free": {"anything": {"deep": [1]}, "known": {"a": "x", "b": "y"}}}}
    assert pruning.prune(obj, SCHEMA) == ["spec.free.known.b"]
    assert obj == {"spec": {"free": {"anything": {"deep": [1]}, "known": {"a": "x"}}}}


def test_preserve_unknown_fields_on_an_array_covers_its_items() -> None:
    obj = {"spec": {"freeList": [{"other": 1, "known": {"a": "x", "b": "y"}}]}}
    assert pruning.prune(obj, SCHEMA) == ["spec.freeList[0].known.b"]
    assert obj == {"spec": {"freeList": [{"other": 1, "known": {"a": "x"}}]}}


def test_objects_where_the_schema_has_scalars_are_emptied() -> None:
    obj = {"spec": {"untyped": ["a", {"x": 1}]}}
    assert pruning.prune(obj, SCHEMA) == ["spec.untyped[1].x"]
    assert obj == {"spec": {"untyped": ["a", {}]}}


def test_embedded_manifests_keep_their_content_and_clean_their_metadata() -> None:
    doc = yaml.safe_load((EXAMPLES / "addon-template.yaml").read_text())
    manifest = doc["spec"]["agentSpec"]["workload"]["manifests"][0]
    manifest["metadata"].update(bogus="x", name="", annotations={"a": 1}, generation=0, uid="u1")
    manifest["spec"]["unknownButPreserved"] = True
    doc["spec"]["agentSpec"]["workload"]["manifests"][1]["kind"] = 7
    removed = pruning.prune(doc, compiled("addontemplates"))
    assert removed == ["spec.agentSpec.workload.manifests[0].metadata.bogus"]
    assert manifest["metadata"] == {
        "namespace": "open-cluster-management-agent-addon", "labels": {"app": "hello-template-agent"}, "uid": "u1",
    }
    assert manifest["spec"]["unknownButPreserved"] is True
    assert manifest["spec"]["template"]["spec"]["containers"][0]["name"] == "helloworld-agent"
    assert "kind" not in doc["spec"]["agentSpec"]["workload"]["manifests"][1]


def test_pruning_a_value_under_no_schema_empties_objects() -> None:
    value = {"a": {"b": 1}, "c": [{"d": 2}]}
    assert pruning.prune_value(value, None, is_resource_root=False) == ["a", "c"]
    assert value == {}
