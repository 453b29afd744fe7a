"""Would this JSON decode into the kind's Go struct? The first error, worded as Go's.

kube-apiserver decodes a built-in object with (a fork of) ``encoding/json``: a value of
the wrong JSON type for its field is an ``UnmarshalTypeError``, reported as ``json: cannot
unmarshal <value> into Go struct field <Struct>.<path> of type <type>``, where ``<Struct>``
is the innermost struct holding the field and ``<path>`` the JSON field names from the root
(map keys and list indices are not part of it). The decoder goes on after such an error
and keeps the first, so the first mismatch in document order is the one reported. ``null``
decodes into anything.

:func:`compile_decoder` builds the checking tree once per kind from the structural schema
of :mod:`kubeschemas`; :func:`first_error` walks a body along it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from pyocm.apiserver.registry.builtin.kubeschemas import Schema

ANY, STRUCT, MAP, SLICE, STRING, INT, FLOAT, BOOL, INT_OR_STRING, QUANTITY = range(10)
_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@dataclass(eq=False, slots=True)
class GoType:
    kind: int
    go: str
    #: The Go struct's name (``LeaseSpec``), for errors about its fields.
    struct: str = ""
    fields: dict[str, GoType] = field(default_factory=dict)
    #: Map values and slice items.
    elem: GoType | None = None


def compile_decoder(schema: Schema) -> GoType:
    go = str(schema.get("x-go", ""))
    if schema.get("x-kubernetes-int-or-string"):
        return GoType(INT_OR_STRING, "int32")
    if go == "quantity":
        return GoType(QUANTITY, "resource.Quantity")
    kind = schema.get("type")
    if kind == "object" and "properties" in schema:
        fields = {k: compile_decoder(v) for k, v in schema["properties"].items()}
        return GoType(STRUCT, go, struct=str(schema.get("x-go-struct", "")), fields=fields)
    if kind == "object" and "additionalProperties" in schema:
        return GoType(MAP, go, elem=compile_decoder(schema["additionalProperties"]))
    if kind == "array":
        items = schema.get("items")
        return GoType(SLICE, go, elem=compile_decoder(items) if items else GoType(ANY, ""))
    scalar = {"string": STRING, "integer": INT, "number": FLOAT, "boolean": BOOL}
    return GoType(scalar.get(str(kind), ANY), go)


def first_error(obj: dict[str, Any], root: GoType) -> Mismatch | None:
    """The first value of the wrong type, else None."""
    for key, value in obj.items():
        child = root.fields.get(key)
        if child is not None and value is not None:
            found = _check(value, child, key, root.struct)
            if found is not None:
                return found
    return None


def _check(value: Any, node: GoType, path: str, struct: str) -> Mismatch | None:
    kind = node.kind
    if kind == STRUCT:
        if not isinstance(value, dict):
            return _mismatch(value, node, path, struct)
        for key, item in value.items():
            child = node.fields.get(key)
            if child is not None and item is not None:
                found = _check(item, child, f"{path}.{key}", node.struct)
                if found is not None:
                    return found
        return None
    if kind in (MAP, SLICE):
        return _check_collection(value, node, path, struct)
    if _scalar_fits(value, node):
        return None
    return _mismatch(value, node, path, struct)


def _check_collection(value: Any, node: GoType, path: str, struct: str) -> Mismatch | None:
    if node.kind == MAP:
        if not isinstance(value, dict):
            return _mismatch(value, node, path, struct)
        items: Any = value.values()
    elif isinstance(value, list):
        items = value
    elif node.go == "[]uint8" and isinstance(value, str):
        return None  # []byte decodes from base64 text
    else:
        return _mismatch(value, node, path, struct)
    elem = node.elem
    if elem is None or elem.kind == ANY:
        return None
    for item in items:
        if item is not None:
            found = _check(item, elem, path, struct)
            if found is not None:
                return found
    return None


def _scalar_fits(value: Any, node: GoType) -> bool:
    kind = node.kind
    if kind == STRING:
        return isinstance(value, str)
    if kind == INT:
        low, high = _INT_RANGE.get(node.go, _INT_RANGE["int64"])
        return type(value) is int and low <= value <= high
    if kind == FLOAT:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT_OR_STRING:
        return isinstance(value, str) or type(value) is int
    if kind == QUANTITY:
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    return True


@dataclass(frozen=True, slots=True)
class Mismatch:
    value: Any
    node: GoType
    #: JSON field names from the root, dotted; the innermost struct holding the field.
    path: str
    struct: str

    def go_message(self) -> str:
        """As ``encoding/json`` words it (create, update and patches)."""
        return (
            f"json: cannot unmarshal {_describe(self.value, self.node)} into Go struct field "
            f"{self.struct}.{self.path} of type {self.node.go}"
        )

    def apply_message(self) -> str:
        """As structured-merge-diff words it when an apply configuration has the wrong type."""
        expected = _SMD_NAMES.get(self.node.kind, self.node.go)
        shown = orjson.dumps(self.value).decode()
        return f".{self.path}: expected {expected}, got {shown}"


_SMD_NAMES = {
    STRUCT: "map",
    MAP: "map",
    SLICE: "list",
    STRING: "string",
    INT: "numeric (int or float)",
    FLOAT: "numeric (int or float)",
    BOOL: "boolean",
}


def _mismatch(value: Any, node: GoType, path: str, struct: str) -> Mismatch:
    return Mismatch(value, node, path, struct)


def _describe(value: Any, node: GoType) -> str:
    """Go's name for the JSON value; a number meant for an integer shows its literal."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return f"number {value!r}" if node.kind in (INT, INT_OR_STRING) else "number"
    return "array" if isinstance(value, list) else "object"
