"""The schema DSL emits exactly the JSONSchemaProps it is asked for, and nothing shared."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import descriptor
from pyocm.api import schema as s


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        pytest.param(s.string(), {"type": "string"}, id="plain-string"),
        pytest.param(
            s.string(enum=("A", "B"), default="A", max_length=3),
            {"type": "string", "enum": ["A", "B"], "default": "A", "maxLength": 3},
            id="enum-default",
        ),
        pytest.param(s.string(default=""), {"type": "string", "default": ""}, id="empty-default"),
        pytest.param(
            s.date_time(nullable=True),
            {"type": "string", "format": "date-time", "nullable": True},
            id="nullable-time",
        ),
        pytest.param(
            s.integer(format="int32", minimum=-1, maximum=1, default=0),
            {"type": "integer", "format": "int32", "minimum": -1, "maximum": 1, "default": 0},
            id="bounded-int",
        ),
        pytest.param(
            s.int_or_string(pattern="^x$", default=0),
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
                "pattern": "^x$",
                "default": 0,
            },
            id="int-or-string",
        ),
        pytest.param(
            s.array(s.string(), list_type="map", map_keys=("name",), min_items=1),
            {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            id="list-map",
        ),
        pytest.param(
            s.string_map(),
            {"type": "object", "additionalProperties": {"type": "string"}},
            id="string-map",
        ),
        pytest.param(
            s.embedded_resource(),
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            id="embedded",
        ),
    ],
)
def test_builders_emit_exact_schemas(built: dict[str, Any], expected: dict[str, Any]) -> None:
    assert built == expected


def test_obj_sorts_required_and_adds_markers() -> None:
    built = s.obj(
        {"b": s.string(), "a": s.string()},
        required=("b", "a"),
        map_type="atomic",
        validations=(s.rule("self.a != ''", message="a is required"),),
    )
    assert built == {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "required": ["a", "b"],
        "x-kubernetes-map-type": "atomic",
        "x-kubernetes-validations": [{"rule": "self.a != ''", "message": "a is required"}],
    }


def test_obj_rejects_required_names_that_are_not_properties() -> None:
    with pytest.raises(ValueError, match=r"required names undeclared properties: \['nmae'\]"):
        s.obj({"name": s.string()}, required=("nmae",))


def test_map_keys_need_a_map_list() -> None:
    with pytest.raises(ValueError, match="map_keys need list_type='map'"):
        s.array(s.string(), map_keys=("name",))


def test_defaults_are_copied_not_shared() -> None:
    default = {"type": "All"}
    built = s.obj({"type": s.string()}, default=default)
    default["type"] = "changed"
    assert built["default"] == {"type": "All"}


def test_kind_root_holds_type_meta_and_given_parts() -> None:
    root = s.kind_root(description="A kind.", spec=s.obj({}), required=("spec",))
    assert sorted(root["properties"]) == ["apiVersion", "kind", "metadata", "spec"]
    assert root["properties"]["metadata"] == {"type": "object"}
    assert root["required"] == ["spec"]


def test_descriptor_schema_copy_is_private() -> None:
    resource = descriptor.ResourceDescriptor(
        group="example.io",
        version="v1",
        kind="Thing",
        plural="things",
        singular="thing",
        namespaced=False,
        schema=s.kind_root(description="A thing."),
    )
    copy = resource.openapi_schema()
    copy["properties"]["kind"]["type"] = "integer"
    assert resource.openapi_schema()["properties"]["kind"]["type"] == "string"
    assert (resource.api_version, resource.scope, resource.crd_name) == (
        "example.io/v1",
        "Cluster",
        "things.example.io",
    )
