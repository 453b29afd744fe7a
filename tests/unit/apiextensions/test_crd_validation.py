"""CustomResourceDefinition defaulting and validation, with kube-apiserver's paths and messages."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyocm.apiserver.apiextensions import crd_validation
from pyocm.kube.status import FieldError
from tests.reference import shared_files

CRDS = shared_files("reference", "ocm-crds")
SCHEMA_PATH = "spec.validation.openAPIV3Schema"


def widget_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 1}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                }}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
            }],
        },
    }


def errors_after(change: Callable[[dict[str, Any]], Any]) -> list[FieldError]:
    crd = widget_crd()
    change(crd)
    crd_validation.default_crd(crd)
    return crd_validation.validate_crd(crd)


def messages(errors: list[FieldError]) -> list[str]:
    return [e.message() for e in errors]


def spec_schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schema


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name.split("_", 1)[-1][:60]) for p in CRDS])
def test_every_ocm_crd_is_valid(path: Path) -> None:
    crd = yaml.safe_load(path.read_text())
    crd_validation.default_crd(crd)
    assert crd_validation.validate_crd(crd) == []


def test_the_example_crd_is_valid() -> None:
    assert errors_after(lambda crd: None) == []


def test_defaults() -> None:
    crd = widget_crd()
    crd["spec"]["versions"].append({"name": "v2", "served": True, "storage": False})
    crd_validation.default_crd(crd)
    assert crd["spec"]["names"] == {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"],
                                    "singular": "widget", "listKind": "WidgetList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_webhook_service_port_defaults_to_443_and_names_are_kept() -> None:
    crd = widget_crd()
    crd["spec"]["names"].update(singular="gizmo", listKind="Gizmos")
    crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}
    crd_validation.default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "gizmo" and crd["spec"]["names"]["listKind"] == "Gizmos"
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda c: c["metadata"].update(name="gadgets.example.com"),
                     ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'], id="name"),
        pytest.param(lambda c: c["spec"].update(group="example"),
                     ['spec.group: Invalid value: "example": should be a domain with at least one dot',
                      'metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group'][::-1], id="group-no-dot"),
        pytest.param(lambda c: c["spec"].update(scope="Global"),
                     ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'], id="scope"),
        pytest.param(lambda c: c["spec"].pop("scope"), ["spec.scope: Required value"], id="scope-missing"),
        pytest.param(lambda c: c["spec"]["names"].update(kind="Wid_get", singular="widget", listKind="WidgetList"),
                     ['spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: a DNS-1035 '
                      "label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and "
                      "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                      "'[a-z]([-a-z0-9]*[a-z0-9])?')"], id="kind"),
        pytest.param(lambda c: c["spec"]["names"].update(shortNames=["wd", "9w"]),
                     ['spec.names.shortNames[1]: Invalid value: "9w": a DNS-1035 label must consist of lower case alphanumeric '
                      "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
                      "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"], id="short-name"),
        pytest.param(lambda c: c["spec"]["names"].update(listKind="Widget"),
                     ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'], id="list-kind"),
        pytest.param(lambda c: c["spec"]["versions"][0].pop("schema"),
                     ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"], id="schema-missing"),
        pytest.param(lambda c: c["spec"].update(preserveUnknownFields=True),
                     ["spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
                      "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
                      "x-preserve-unknown-fields to true in spec.versions[*].schema instead"], id="preserve-unknown"),
    ],
)
def test_spec_errors(change: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert messages(errors_after(change)) == expected


def test_version_rules() -> None:
    def two_storage_versions(crd: dict[str, Any]) -> None:
        crd["spec"]["versions"].append({**copy.deepcopy(crd["spec"]["versions"][0]), "name": "V2"})
        crd["spec"]["versions"].append(copy.deepcopy(crd["spec"]["versions"][0]))
    errors = errors_after(two_storage_versions)
    assert [(e.field, e.detail.split(" (")[0]) for e in errors] == [
        ("spec.versions[1].name", "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                  "with an alphabetic character, and end with an alphanumeric character"),
        ("spec.versions", "must contain unique version names"),
        ("spec.versions", "must have exactly one version marked as storage version"),
    ]


def test_no_versions() -> None:
    assert messages(errors_after(lambda c: c["spec"].update(versions=[]))) == [
        "spec.versions: Invalid value: []: must have exactly one version marked as storage version"
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda s: s["properties"]["size"].pop("type"),
                     [f"{SCHEMA_PATH}.properties[spec].properties[size].type: Required value: must not be empty for specified object fields"],
                     id="missing-type"),
        pytest.param(lambda s: s.update(additionalProperties={"type": "string"}),
                     [f"{SCHEMA_PATH}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"],
                     id="additional-and-properties"),
        pytest.param(lambda s: s["properties"].update(list={"type": "array"}),
                     [f"{SCHEMA_PATH}.properties[spec].properties[list].items: Required value: must be specified"], id="array-items"),
        pytest.param(lambda s: s["properties"].update(tags={"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
                     [f"{SCHEMA_PATH}.properties[spec].properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to "
                      "true since the runtime complexity becomes quadratic"], id="unique-items"),
        pytest.param(lambda s: s["properties"]["size"].update(anyOf=[{"type": "integer", "minimum": 1}]),
                     [f"{SCHEMA_PATH}.properties[spec].properties[size].anyOf[0].type: Forbidden: must be empty to be structural"],
                     id="typed-any-of"),
        pytest.param(lambda s: s["properties"].update(name={"type": "string", "pattern": "^(?!x)"}),
                     [f'{SCHEMA_PATH}.properties[spec].properties[name].pattern: Invalid value: "^(?!x)": must be a valid regular '
                      "expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?!`"], id="pattern"),
        pytest.param(lambda s: s["properties"].update(items={
            "type": "array", "x-kubernetes-list-type": "map",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                     [f"{SCHEMA_PATH}.properties[spec].properties[items].x-kubernetes-list-map-keys: Required value: must not be "
                      "empty if x-kubernetes-list-type is map"], id="list-map-without-keys"),
        pytest.param(lambda s: s["properties"].update(items={
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                     [f"{SCHEMA_PATH}.properties[spec].properties[items].items.properties[name].default: Required value: this "
                      "property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"],
                     id="list-map-key-optional"),
        pytest.param(lambda s: s["properties"].update(tags={"type": "string", "x-kubernetes-list-type": "set"}),
                     [f'{SCHEMA_PATH}.properties[spec].properties[tags].type: Invalid value: "string": must be array if '
                      "x-kubernetes-list-type is specified"], id="list-type-on-string"),
        pytest.param(lambda s: s["properties"]["size"].update(type="int"),
                     [f'{SCHEMA_PATH}.properties[spec].properties[size].type: Unsupported value: "int": supported values: '
                      '"array", "boolean", "integer", "number", "object", "string"',
                      # and, as in kube-apiserver, the default no longer matches its type
                      f'{SCHEMA_PATH}.properties[spec].properties[size].default: Invalid value: "integer":  in body must be '
                      'of type int: "integer"'], id="unknown-type"),
        pytest.param(lambda s: s["properties"].update(items={
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "nullable": True}}}}),
                     [f"{SCHEMA_PATH}.properties[spec].properties[items].items.properties[name].nullable: Forbidden: this "
                      "property is in x-kubernetes-list-map-keys, so it cannot be nullable"], id="list-map-key-nullable"),
        pytest.param(lambda s: s.update({"x-kubernetes-validations": [{"rule": " "}]}),
                     [f"{SCHEMA_PATH}.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified"],
                     id="empty-rule"),
        pytest.param(lambda s: s["properties"]["size"].update(default="one"),
                     [f'{SCHEMA_PATH}.properties[spec].properties[size].default: Invalid value: "string":  in body must be of '
                      'type integer: "string"'], id="default-wrong-type"),
        pytest.param(lambda s: s.update(default={"size": 2, "colour": "red"}),
                     [f'{SCHEMA_PATH}.properties[spec].default: Invalid value: {{"size":2,"colour":"red"}}: must not have '
                      "unknown fields"], id="default-unknown-field"),
    ],
)
def test_schema_errors(change: Callable[[dict[str, Any]], Any], expected: list[str]) -> None:
    assert messages(errors_after(lambda crd: change(spec_schema(crd)))) == expected


def test_root_metadata_may_only_restrict_name_and_generate_name() -> None:
    def restrict(crd: dict[str, Any]) -> None:
        root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        root["properties"]["metadata"] = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}
    assert errors_after(restrict) == []

    def over_restrict(crd: dict[str, Any]) -> None:
        root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        root["properties"]["metadata"] = {"type": "object", "properties": {"labels": {"type": "object"}}}
    assert messages(errors_after(over_restrict)) == [
        f"{SCHEMA_PATH}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, "
        "but metadata is implicitly specified"
    ]


def root_schema(crd: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return root


def test_status_subresource_limits_the_root_fields() -> None:
    errors = errors_after(lambda crd: root_schema(crd).update(minProperties=1, nullable=True))
    assert [(e.field, e.detail) for e in errors] == [
        (SCHEMA_PATH, "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum "
                      "MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
                      "ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of "
                      "the schema if the status subresource is enabled"),
        (f"{SCHEMA_PATH}.nullable", "nullable cannot be true at the root"),
    ]


def test_defaults_are_forbidden_in_top_level_metadata() -> None:
    def default_name(crd: dict[str, Any]) -> None:
        root_schema(crd)["properties"]["metadata"] = {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}
    assert messages(errors_after(default_name)) == [
        f"{SCHEMA_PATH}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"
    ]


def test_deprecation_warning_needs_a_deprecated_version() -> None:
    assert messages(errors_after(lambda c: c["spec"]["versions"][0].update(deprecationWarning="old"))) == [
        'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions'
    ]


def test_root_must_be_an_object() -> None:
    def string_root(crd: dict[str, Any]) -> None:
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {"type": "string"}
        crd["spec"]["versions"][0].pop("subresources")
    assert messages(errors_after(string_root)) == [f'{SCHEMA_PATH}.type: Invalid value: "string": must be object at the root']


def test_differing_versions_are_reported_per_version() -> None:
    def second_version(crd: dict[str, Any]) -> None:
        v2 = copy.deepcopy(crd["spec"]["versions"][0])
        v2.update(name="v2", storage=False)
        v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"].pop("type")
        v2["additionalPrinterColumns"] = [{"name": "Size", "type": "float", "jsonPath": "spec.size"}]
        crd["spec"]["versions"].append(v2)
    assert messages(errors_after(second_version)) == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be "
        "empty for specified object fields",
        'spec.versions[1].additionalPrinterColumns[0].type: Invalid value: "float": must be one of '
        "boolean,date,integer,number,string",
        'spec.versions[1].additionalPrinterColumns[0].JSONPath: Invalid value: "spec.size": must be a simple json path '
        "starting with .",
    ]


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        pytest.param([{"type": "string", "jsonPath": ".spec.x"}], ["spec.additionalPrinterColumns[0].name: Required value"], id="name"),
        pytest.param([{"name": "X", "jsonPath": ".spec.x"}],
                     ["spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string"],
                     id="type"),
        pytest.param([{"name": "X", "type": "string", "format": "hex", "jsonPath": ".spec.x"}],
                     ['spec.additionalPrinterColumns[0].format: Invalid value: "hex": must be one of '
                      "byte,date,date-time,double,float,int32,int64,password"], id="format"),
        # the internal type's field name, as kube-apiserver reports it
        pytest.param([{"name": "X", "type": "string"}], ["spec.additionalPrinterColumns[0].JSONPath: Required value"], id="json-path"),
    ],
)
def test_printer_columns(columns: list[dict[str, Any]], expected: list[str]) -> None:
    assert messages(errors_after(lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=columns))) == expected


def test_scale_subresource_paths() -> None:
    scale = {"specReplicasPath": "spec.replicas", "labelSelectorPath": ".metadata.labels"}
    assert messages(errors_after(lambda c: c["spec"]["versions"][0]["subresources"].update(scale=scale))) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
        "spec.subresources.scale.statusReplicasPath: Required value",
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either '
        ".spec or .status",
    ]


@pytest.mark.parametrize(
    ("conversion", "expected"),
    [
        pytest.param({"strategy": "Webhook"}, [
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ], id="webhook-without-config"),
        pytest.param({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x/convert"},
                                                         "conversionReviewVersions": ["v2", "v2"]}}, [
            'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
            'spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1',
        ], id="review-versions"),
        pytest.param({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "http://x/convert"},
                                                         "conversionReviewVersions": ["v1"]}},
                     ['spec.conversion.webhookClientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme'],
                     id="webhook-http"),
        pytest.param({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}},
                                                         "conversionReviewVersions": ["v1"]}}, [], id="webhook-service"),
        pytest.param({"strategy": "Magic"}, ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'],
                     id="strategy"),
        pytest.param({"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"}}},
                     ["spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"],
                     id="config-without-webhook"),
    ],
)
def test_conversion(conversion: dict[str, Any], expected: list[str]) -> None:
    assert messages(errors_after(lambda c: c["spec"].update(conversion=conversion))) == expected


def established(crd: dict[str, Any]) -> dict[str, Any]:
    crd_validation.default_crd(crd)
    crd["status"] = {"conditions": [{"type": "Established", "status": "True"}], "storedVersions": ["v1"]}
    return crd


def test_update_keeps_scope_kind_group_and_plural() -> None:
    old = established(widget_crd())
    new = copy.deepcopy(old)
    new["spec"].update(scope="Cluster", group="example.org")
    new["spec"]["names"].update(kind="Gadget", plural="gadgets")
    new["metadata"]["name"] = "gadgets.example.org"
    assert messages(crd_validation.validate_crd_update(new, old)) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Gadget": field is immutable',
        'spec.group: Invalid value: "example.org": field is immutable',
        'spec.names.plural: Invalid value: "gadgets": field is immutable',
    ]


def test_scope_may_change_before_the_crd_is_established() -> None:
    old = widget_crd()
    crd_validation.default_crd(old)
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    assert crd_validation.validate_crd_update(new, old) == []


def test_stored_versions_must_stay_in_spec_versions() -> None:
    old = established(widget_crd())
    new = copy.deepcopy(old)
    new["spec"]["versions"][0]["name"] = "v2"
    assert messages(crd_validation.validate_crd_update(new, old))[-1:] == [
        'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions'
    ]
    assert [e.detail for e in crd_validation.validate_crd_update(new, old)] == [
        "must have the storage version v2", "must appear in spec.versions",
    ]
    new["status"]["storedVersions"] = []
    assert messages(crd_validation.validate_crd_update(new, old)) == [
        "status.storedVersions: Invalid value: []: must have at least one stored version"
    ]
