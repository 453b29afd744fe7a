"""Custom resource validation: exact causes, field paths and messages, as kube-apiserver gives them."""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import pytest
import yaml

from pyocm.apiserver.apiextensions import validation
from pyocm.apiserver.apiextensions.schema import CompiledSchema, compile_node
from pyocm.kube.status import FieldError
from tests.reference import shared

CRDS = shared("reference", "ocm-crds")
SEEDS = shared("seeds")


@functools.cache
def compiled(file_part: str, version: str) -> CompiledSchema:
    (path,) = CRDS.glob(f"*{file_part}*.yaml")
    crd = yaml.safe_load(path.read_text())
    (found,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return CompiledSchema.from_openapi(found["schema"]["openAPIV3Schema"])


def managed_cluster_schema() -> CompiledSchema:
    return compiled("managedclusters.crd", "v1")


def condition(kind: str, reason: str) -> dict[str, Any]:
    return {"type": kind, "status": "True", "reason": reason, "message": f"{kind} holds",
            "lastTransitionTime": "2025-01-02T03:04:05Z", "observedGeneration": 3}


def managed_cluster() -> dict[str, Any]:
    """A ManagedCluster as a joined, accepted cluster reports it (about 2.5 KB of JSON)."""
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
        "metadata": {"name": "cluster1", "uid": "6d2c5a9e-1f0b-4c55-9d0e-2f1f6f1e0a11", "generation": 3,
                     "labels": {"cluster.open-cluster-management.io/clusterset": "default", "vendor": "Kind"}},
        "spec": {
            "hubAcceptsClient": True, "leaseDurationSeconds": 60,
            "managedClusterClientConfigs": [{"url": "https://cluster1-control-plane:6443", "caBundle": "aGVsbG8="}],
            "taints": [{"key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect", "timeAdded": None}],
        },
        "status": {
            "allocatable": {"cpu": "8", "memory": "16213004Ki", "pods": 110},
            "capacity": {"cpu": "8", "memory": "16315404Ki", "pods": "110"},
            "clusterClaims": [{"name": "id.k8s.io", "value": "cluster1"}, {"name": "kubeversion.open-cluster-management.io", "value": "v1.30.0"}],
            "conditions": [condition("HubAcceptedManagedCluster", "HubClusterAdminAccepted"),
                           condition("ManagedClusterJoined", "ManagedClusterJoined"),
                           condition("ManagedClusterConditionAvailable", "ManagedClusterAvailable")],
            "managedNamespaces": [{"clusterSet": "default", "name": "app-ns", "conditions": [condition("NamespaceReady", "Ready")]}],
            "version": {"kubernetes": "v1.30.0"},
        },
    }


def messages(errors: list[FieldError]) -> list[str]:
    return [e.message() for e in errors]


def seed_examples(seed: str, kind: str) -> list[dict[str, Any]]:
    """The complete YAML examples of ``kind`` embedded in a seed document's prose."""
    text = (SEEDS / seed).read_text() + "\n"
    found = []
    for match in re.finditer(rf"^apiVersion: \S+\nkind: {kind}\n(?:(?!apiVersion:)[ \-\w\"'].*\n)+", text, re.M):
        doc = yaml.safe_load(match.group())
        if isinstance(doc.get("metadata"), dict):
            found.append(doc)
    return found


def test_a_joined_managed_cluster_is_valid() -> None:
    assert validation.validate(managed_cluster(), managed_cluster_schema(), kind="ManagedCluster") == []


def test_cluster_set_examples_from_the_docs_are_valid() -> None:
    examples = seed_examples("001_33c26e3077cc6ffe.txt", "ManagedClusterSet")
    assert [e["metadata"]["name"] for e in examples] == ["example-clusterset", "example-openshift-clusterset", "global"]
    for example in examples:
        assert validation.validate(example, compiled("managedclustersets.crd", "v1beta2")) == []


@pytest.mark.parametrize(
    ("file_name", "crd_part", "version"),
    [
        pytest.param("addon-template.yaml", "addontemplates", "v1alpha1", id="addon-template"),
        pytest.param("upgrade/addon-template-v2.yaml", "addontemplates", "v1alpha1", id="addon-template-v2"),
        pytest.param("addon-deployment-config.yaml", "v1alpha1-0000_02_addon", "v1alpha1", id="deployment-config"),
        pytest.param("cluster-management-addon.yaml", "v1alpha1-0000_00_addon", "v1alpha1", id="cluster-management-addon"),
        pytest.param("managed-cluster-addon.yaml", "v1alpha1-0000_01_addon", "v1alpha1", id="managed-cluster-addon"),
        pytest.param("upgrade/placement.yaml", "_placements.crd", "v1beta1", id="placement"),
    ],
)
def test_addon_template_examples_are_valid(file_name: str, crd_part: str, version: str) -> None:
    doc = yaml.safe_load((SEEDS / "addon-template-examples" / file_name).read_text())
    assert validation.validate(doc, compiled(crd_part, version), kind=doc["kind"]) == []


def _broken(change: Any) -> list[str]:
    obj = managed_cluster()
    change(obj)
    return messages(validation.validate(obj, managed_cluster_schema()))


def test_wrong_type_names_the_expected_and_found_types() -> None:
    errors = validation.validate({**managed_cluster(), "spec": {"leaseDurationSeconds": "60"}}, managed_cluster_schema())
    assert [(e.type.reason, e.field) for e in errors] == [("FieldValueTypeInvalid", "spec.leaseDurationSeconds")]
    assert messages(errors) == ['spec.leaseDurationSeconds: Invalid value: "string": '
                                'spec.leaseDurationSeconds in body must be of type integer: "string"']


def test_bad_taint_effect_lists_the_supported_values() -> None:
    assert _broken(lambda o: o["spec"]["taints"][0].update(effect="NoSchedule")) == [
        'spec.taints[0].effect: Unsupported value: "NoSchedule": supported values: "NoSelect", "PreferNoSelect", "NoSelectIfNew"'
    ]


def test_missing_required_field() -> None:
    errors = validation.validate({**managed_cluster(), "spec": {"taints": [{"effect": "NoSelect"}]}}, managed_cluster_schema())
    assert [(e.type.reason, e.message()) for e in errors] == [("FieldValueRequired", "spec.taints[0].key: Required value")]


def test_pattern_mismatch_quotes_the_pattern() -> None:
    assert _broken(lambda o: o["status"]["conditions"][1].update(reason="1st")) == [
        'status.conditions[1].reason: Invalid value: "1st": status.conditions[1].reason in body should match '
        "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'"
    ]


def test_too_long_omits_the_value() -> None:
    assert _broken(lambda o: o["spec"]["taints"][0].update(value="v" * 1025)) == [
        "spec.taints[0].value: Too long: may not be more than 1024 bytes"
    ]


def test_date_time_format() -> None:
    assert _broken(lambda o: o["status"]["conditions"][0].update(lastTransitionTime="yesterday")) == [
        'status.conditions[0].lastTransitionTime: Invalid value: "yesterday": '
        'status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday"'
    ]


def test_byte_format() -> None:
    assert _broken(lambda o: o["spec"]["managedClusterClientConfigs"][0].update(caBundle="not base64!")) == [
        'spec.managedClusterClientConfigs[0].caBundle: Invalid value: "not base64!": '
        'spec.managedClusterClientConfigs[0].caBundle in body must be of type byte: "not base64!"'
    ]


def test_minimum() -> None:
    assert _broken(lambda o: o["status"]["conditions"][0].update(observedGeneration=-1)) == [
        "status.conditions[0].observedGeneration: Invalid value: -1: "
        "status.conditions[0].observedGeneration in body should be greater than or equal to 0"
    ]


def test_null_is_refused_unless_nullable() -> None:
    assert _broken(lambda o: o["spec"].update(hubAcceptsClient=None)) == [
        'spec.hubAcceptsClient: Invalid value: "null": spec.hubAcceptsClient in body must be of type boolean: "null"'
    ]


def test_list_map_duplicates_name_the_key() -> None:
    def duplicate(obj: dict[str, Any]) -> None:
        obj["status"]["conditions"][2]["type"] = "ManagedClusterJoined"
        obj["status"]["managedNamespaces"].append({"clusterSet": "default", "name": "app-ns"})
    assert _broken(duplicate) == [
        'status.conditions[2]: Duplicate value: {"type":"ManagedClusterJoined"}',
        'status.managedNamespaces[1]: Duplicate value: {"clusterSet":"default","name":"app-ns"}',
    ]


def test_int_or_string_quantity() -> None:
    def bad(obj: dict[str, Any]) -> None:
        obj["status"]["capacity"].update(memory="lots", gpu=True)
    assert _broken(bad) == [
        'status.capacity.memory: Invalid value: "lots": status.capacity.memory in body should match '
        "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'",
        'status.capacity.gpu: Invalid value: "boolean": status.capacity.gpu in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "status.capacity.gpu" must validate at least one schema (anyOf)',
        'status.capacity.gpu: Invalid value: "boolean": status.capacity.gpu in body must be of type integer: "boolean"',
    ]


def test_kind_mismatch_is_reported_alone() -> None:
    obj = {**managed_cluster(), "kind": "Other", "spec": {"leaseDurationSeconds": "x"}}
    assert messages(validation.validate(obj, managed_cluster_schema(), kind="ManagedCluster")) == [
        'kind: Invalid value: "Other": must be ManagedCluster'
    ]


def test_api_version_mismatch() -> None:
    obj = managed_cluster()
    errors = validation.validate(obj, managed_cluster_schema(), api_version="cluster.open-cluster-management.io/v2")
    assert messages(errors) == ['apiVersion: Invalid value: "cluster.open-cluster-management.io/v1": '
                                "must be cluster.open-cluster-management.io/v2"]


def test_validation_does_not_mutate() -> None:
    obj = managed_cluster()
    before = copy.deepcopy(obj)
    validation.validate(obj, managed_cluster_schema())
    assert obj == before


SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2, "maxLength": 1},
                "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"},
                         "x-kubernetes-list-type": "set"},
                "labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
                           "additionalProperties": {"type": "string", "enum": ["a", "b"]}},
                "count": {"type": "integer", "format": "int32", "multipleOf": 5, "maximum": 10, "exclusiveMaximum": True},
                "ratio": {"type": "number", "minimum": 0.5, "maximum": 1e6},
                "closed": {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}}},
                "choice": {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]},
                "both": {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^x"}]},
                "never": {"type": "string", "not": {"enum": ["forbidden"]}},
                "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
            },
        },
    },
}


def check(spec: dict[str, Any]) -> list[str]:
    return messages(validation.validate({"spec": spec}, CompiledSchema.from_openapi(SCHEMA)))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"name": "a"}, ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'], id="min-length"),
        pytest.param({"name": "abc"}, ["spec.name: Too long: may not be more than 1 byte"], id="max-length-first"),
        pytest.param({"tags": []}, ["spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"], id="min-items"),
        pytest.param({"tags": ["a", "b", "c"]}, ["spec.tags: Too many: 3: must have at most 2 items"], id="max-items"),
        pytest.param({"tags": ["a", "a"]}, ['spec.tags[1]: Duplicate value: "a"'], id="set-duplicate"),
        pytest.param({"tags": [1, 1.0]}, [
            'spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"',
            'spec.tags[1]: Invalid value: "number": spec.tags[1] in body must be of type string: "number"',
        ], id="set-int-and-float-differ"),
        pytest.param({"labels": {}}, ["spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"], id="min-properties"),
        pytest.param({"labels": {"x": "a", "y": "a", "z": "a"}}, ["spec.labels: Too many: 3: must have at most 2 items"], id="max-properties"),
        pytest.param({"labels": {"x": "c"}}, ['spec.labels.x: Unsupported value: "c": supported values: "a", "b"'], id="map-value-enum"),
        pytest.param({"count": 7}, ["spec.count: Invalid value: 7: spec.count in body should be a multiple of 5"], id="multiple-of"),
        pytest.param({"count": 10}, ["spec.count: Invalid value: 10: spec.count in body should be less than 10"], id="exclusive-maximum"),
        pytest.param({"count": 5.0}, [], id="integral-float-is-an-integer"),
        pytest.param({"count": 2.5}, [
            'spec.count: Invalid value: "float64": spec.count in body must be of type int32: "float64"',
            "spec.count: Invalid value: 2.5: spec.count in body should be a multiple of 5",
        ], id="float-for-int32"),
        pytest.param({"ratio": 0.25}, ["spec.ratio: Invalid value: 0.25: spec.ratio in body should be greater than or equal to 0.5"], id="float-minimum"),
        pytest.param({"ratio": 2e6}, ["spec.ratio: Invalid value: 2000000.0: spec.ratio in body should be less than or equal to 1e+06"], id="go-float-format"),
        pytest.param({"closed": {"a": "x", "b": "y"}}, ['spec.closed: Invalid value: "b": spec.closed.b in body is a forbidden property'], id="no-additional"),
        pytest.param({"choice": "ab"}, ['<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives'], id="one-of-two"),
        pytest.param({"choice": "zz"}, [
            '<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found none valid',
            "spec.choice: Invalid value: \"zz\": spec.choice in body should match '^a'",
        ], id="one-of-none"),
        pytest.param({"both": "y"}, [
            'spec.both: Invalid value: "y": spec.both in body should be at least 2 chars long',
            "spec.both: Invalid value: \"y\": spec.both in body should match '^x'",
            '<nil>: Invalid value: "": "spec.both" must validate all the schemas (allOf). None validated',
        ], id="all-of"),
        pytest.param({"never": "forbidden"}, ['<nil>: Invalid value: "": "spec.never" must not validate the schema (not)'], id="not"),
        pytest.param({"items": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}, ['spec.items[2]: Duplicate value: {"name":"a"}'], id="map-list"),
        pytest.param({"items": [{}, None]}, [
            'spec.items[1]: Invalid value: "null": spec.items[1] in body must be of type object: "null"',
            "spec.items[1]: Duplicate value: {}",
        ], id="map-list-missing-keys"),
        pytest.param({"items": [{"name": "a"}, "b"]}, [
            'spec.items[1]: Invalid value: "string": spec.items[1] in body must be of type object: "string"',
            'spec.items[1]: Invalid value: "b": must be an object for an array of list-type map',
        ], id="map-list-non-object"),
    ],
)
def test_value_validations(spec: dict[str, Any], expected: list[str]) -> None:
    assert check(spec) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "v"}}, [], id="valid"),
        pytest.param({"metadata": {}}, ["spec.template.apiVersion: Required value", "spec.template.kind: Required value"], id="missing-type-meta"),
        pytest.param({"apiVersion": "a/b/c", "kind": "Config_Map"}, [
            'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
            'spec.template.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: a DNS-1035 '
            "label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
            "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ], id="bad-type-meta"),
        pytest.param({"apiVersion": "v1", "kind": 3}, ["spec.template.kind: Invalid value: 3: must be a string"], id="kind-not-string"),
        pytest.param({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b", "namespace": "Bad_NS"}}, [
            "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
            'spec.template.metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ], id="bad-metadata"),
        pytest.param({"apiVersion": "v1", "kind": "Pod", "metadata": "x"}, [
            'spec.template.metadata: Invalid value: "x": json: cannot unmarshal string into Go value of type v1.ObjectMeta'
        ], id="metadata-not-object"),
    ],
)
def test_embedded_resources(template: dict[str, Any], expected: list[str]) -> None:
    assert check({"template": template}) == expected


def test_int32_format_does_not_bound_the_value() -> None:
    # kube-apiserver only uses integer formats to tell integers from floats, never for range.
    node = compile_node({"type": "integer", "format": "int32"})
    assert validation.validate_value(2**40, node) == []


def test_too_many_uses_the_singular_for_one() -> None:
    node = compile_node({"type": "object", "maxProperties": 1})
    assert messages(validation.validate_value({"a": 1, "b": 2}, node, prefix="spec.x")) == [
        "spec.x: Too many: 2: must have at most 1 item"
    ]


def test_value_validation_with_a_prefix_reports_under_it() -> None:
    node = compile_node({"type": "object", "properties": {"n": {"type": "integer"}}, "oneOf": [{"minLength": 5}]})
    prefix = "spec.validation.openAPIV3Schema.properties[spec].default"
    assert messages(validation.validate_value({"n": "1"}, node, prefix=prefix)) == [
        f'{prefix}.n: Invalid value: "string": n in body must be of type integer: "string"'
    ]
    assert messages(validation.validate_value("x", node, prefix=prefix)) == [
        f'{prefix}: Invalid value: "string":  in body must be of type object: "string"',
        f'{prefix}: Invalid value: "": "" must validate one and only one schema (oneOf). Found none valid',
        f'{prefix}: Invalid value: "x":  in body should be at least 5 chars long',
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(10, "10", id="int"),
        pytest.param(0.5, "0.5", id="half"),
        pytest.param(123456.0, "123456", id="below-1e6"),
        pytest.param(1e6, "1e+06", id="1e6"),
        pytest.param(1234567.0, "1.234567e+06", id="above-1e6"),
        pytest.param(0.0001, "0.0001", id="1e-4"),
        pytest.param(0.00001, "1e-05", id="1e-5"),
        pytest.param(-2.5, "-2.5", id="negative"),
        pytest.param(0.0, "0", id="zero"),
    ],
)
def test_numbers_render_like_go(value: float, shown: str) -> None:
    assert validation.go_number(value) == shown
