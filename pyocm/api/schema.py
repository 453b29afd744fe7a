"""A small vocabulary for writing structural OpenAPI v3 schemas the way CRDs need them.

Each builder returns a new plain ``dict`` in the ``JSONSchemaProps`` shape of
``apiextensions.k8s.io/v1``, so a definition reads like the CRD it renders to::

    obj(
        {"key": string(max_length=316), "effect": string(enum=("NoSelect",))},
        required=("key", "effect"),
    )

Contracts:

- Every call builds fresh dicts and deep-copies defaults, so pieces shared between kinds
  never alias each other (a later mutation or a YAML anchor cannot leak across kinds).
- Options left at their neutral value (empty string, empty tuple, ``None``) are omitted, so
  the output carries only what a definition states.
- ``required`` is emitted sorted, as controller-gen does, and must name declared properties;
  a typo fails at import time instead of producing a schema that rejects every object.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable, Mapping
from typing import Any

Schema = dict[str, Any]


class _Missing(enum.Enum):
    """Marks "no default" so that falsy defaults (``0``, ``""``) stay expressible."""

    TOKEN = enum.auto()


NO_DEFAULT = _Missing.TOKEN


def _common(
    schema: Schema,
    *,
    description: str,
    default: object,
    nullable: bool = False,
) -> Schema:
    if description:
        schema["description"] = description
    if default is not NO_DEFAULT:
        schema["default"] = copy.deepcopy(default)
    if nullable:
        schema["nullable"] = True
    return schema


def string(
    *,
    description: str = "",
    enum: Iterable[str] = (),
    pattern: str = "",
    min_length: int | None = None,
    max_length: int | None = None,
    format: str = "",
    default: object = NO_DEFAULT,
    nullable: bool = False,
) -> Schema:
    """A ``type: string`` property; ``format`` is e.g. ``date-time`` or ``byte``."""
    schema: Schema = {"type": "string"}
    if format:
        schema["format"] = format
    values = list(enum)
    if values:
        schema["enum"] = values
    if pattern:
        schema["pattern"] = pattern
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    return _common(schema, description=description, default=default, nullable=nullable)


def integer(
    *,
    description: str = "",
    format: str = "",
    minimum: int | None = None,
    maximum: int | None = None,
    default: object = NO_DEFAULT,
) -> Schema:
    """A ``type: integer`` property; ``format`` is ``int32``, ``int64`` or empty (Go ``int``)."""
    schema: Schema = {"type": "integer"}
    if format:
        schema["format"] = format
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return _common(schema, description=description, default=default)


def int32(*, description: str = "", default: object = NO_DEFAULT) -> Schema:
    return integer(description=description, format="int32", default=default)


def int64(*, description: str = "", default: object = NO_DEFAULT) -> Schema:
    return integer(description=description, format="int64", default=default)


def boolean(*, description: str = "", default: object = NO_DEFAULT) -> Schema:
    return _common({"type": "boolean"}, description=description, default=default)


def date_time(*, description: str = "", nullable: bool = False) -> Schema:
    """A ``metav1.Time``: an RFC 3339 string, ``null`` allowed only where Go omits a pointer."""
    return string(description=description, format="date-time", nullable=nullable)


def int_or_string(
    *,
    description: str = "",
    pattern: str = "",
    default: object = NO_DEFAULT,
) -> Schema:
    """An ``intstr.IntOrString`` (or ``resource.Quantity``): the structural ``anyOf`` form."""
    schema: Schema = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    if pattern:
        schema["pattern"] = pattern
    return _common(schema, description=description, default=default)


def array(
    items: Schema,
    *,
    description: str = "",
    list_type: str = "",
    map_keys: Iterable[str] = (),
    min_items: int | None = None,
    max_items: int | None = None,
) -> Schema:
    """A list; ``list_type`` is ``atomic``, ``set`` or ``map`` (the latter with ``map_keys``)."""
    keys = list(map_keys)
    if keys and list_type != "map":
        raise ValueError("map_keys need list_type='map'")
    schema: Schema = {"type": "array", "items": items}
    if min_items is not None:
        schema["minItems"] = min_items
    if max_items is not None:
        schema["maxItems"] = max_items
    if list_type:
        schema["x-kubernetes-list-type"] = list_type
    if keys:
        schema["x-kubernetes-list-map-keys"] = keys
    return _common(schema, description=description, default=NO_DEFAULT)


def string_list(*, description: str = "", list_type: str = "") -> Schema:
    return array(string(), description=description, list_type=list_type)


def map_of(values: Schema, *, description: str = "") -> Schema:
    """A ``map[string]T``: an object whose every value follows ``values``."""
    schema: Schema = {"type": "object", "additionalProperties": values}
    return _common(schema, description=description, default=NO_DEFAULT)


def string_map(*, description: str = "") -> Schema:
    return map_of(string(), description=description)


def rule(expression: str, *, message: str) -> dict[str, str]:
    """One CEL ``x-kubernetes-validations`` entry."""
    return {"rule": expression, "message": message}


def obj(
    properties: Mapping[str, Schema],
    *,
    required: Iterable[str] = (),
    description: str = "",
    default: object = NO_DEFAULT,
    map_type: str = "",
    validations: Iterable[dict[str, str]] = (),
) -> Schema:
    """A struct. ``map_type`` is ``atomic`` for types replaced as a whole on apply."""
    names = sorted(required)
    unknown = [name for name in names if name not in properties]
    if unknown:
        raise ValueError(f"required names undeclared properties: {unknown}")
    schema: Schema = {"type": "object"}
    if properties:
        schema["properties"] = dict(properties)
    if names:
        schema["required"] = names
    if map_type:
        schema["x-kubernetes-map-type"] = map_type
    checks = list(validations)
    if checks:
        schema["x-kubernetes-validations"] = checks
    return _common(schema, description=description, default=default)


def embedded_resource(*, description: str = "") -> Schema:
    """A whole Kubernetes object kept as sent (``runtime.RawExtension`` with embedded marker)."""
    schema: Schema = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    return _common(schema, description=description, default=NO_DEFAULT)


def kind_root(
    *,
    description: str,
    spec: Schema | None = None,
    status: Schema | None = None,
    required: Iterable[str] = (),
) -> Schema:
    """The ``openAPIV3Schema`` of a kind: type meta, opaque ``metadata``, then spec and status.

    ``metadata`` stays ``{type: object}`` because the API server validates object meta itself.
    """
    properties: Schema = {
        "apiVersion": string(description="Versioned schema of this object."),
        "kind": string(description="REST resource this object represents."),
        "metadata": {"type": "object"},
    }
    if spec is not None:
        properties["spec"] = spec
    if status is not None:
        properties["status"] = status
    return obj(properties, required=required, description=description)
