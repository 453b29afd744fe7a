"""Kubernetes' published schemas of the built-in kinds, as structural schemas.

The ``kubernetes-validate`` package ships kube's OpenAPI definitions, per Kubernetes
release, as JSON Schema (``type: [string, "null"]``, ``$ref`` into one ``_definitions.json``).
:func:`structural` turns one kind's definition into the structural-schema dialect the CRD
machinery compiles (one ``type``, ``properties``, ``additionalProperties``, ``items``),
inlining references and annotating each node with its Go type under ``x-go`` (and
``x-go-struct`` for structs), which is what decoding errors name. Only the newest release
the package ships is read, once, on first use.

Types with their own JSON decoding are mapped by name: ``Time``/``MicroTime`` decode
from a string, ``IntOrString`` from an integer or a string, ``Quantity`` from a string or
a number; ``RawExtension``, ``FieldsV1`` and apiextensions ``JSON`` hold any value, and a
reference back into a definition being expanded (JSONSchemaProps) holds any value too.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pyocm.kube.kubedefs import definitions

Schema = dict[str, Any]
ANY: Schema = {"x-kubernetes-preserve-unknown-fields": True, "x-go": "interface {}"}
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_BY_NAME: dict[str, Schema] = {
    _META + "Time": {"type": "string", "x-go": "string"},
    _META + "MicroTime": {"type": "string", "x-go": "string"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "x-kubernetes-int-or-string": True,
        "x-go": "int32",
    },
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"x-go": "quantity"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": ANY,
    _META + "FieldsV1": ANY,
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": ANY,
}


@cache
def _by_kind() -> dict[tuple[str, str, str], str]:
    found: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            found[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return found


def structural(group: str, version: str, kind: str) -> Schema | None:
    """The kind's structural schema with Go types, or ``None`` for a kind kube lacks."""
    name = _by_kind().get((group, version, kind))
    return reference(name) if name is not None else None


def reference(name: str) -> Schema:
    """One definition (``io.k8s.api.core.v1.ConfigMap``), converted."""
    return _reference(name, ())


def _reference(name: str, expanding: tuple[str, ...]) -> Schema:
    if name in _BY_NAME:
        return dict(_BY_NAME[name])
    if name in expanding:
        return dict(ANY)
    converted = _convert(definitions()[name], (*expanding, name))
    if converted.get("type") == "object" and "properties" in converted:
        short = name.rsplit(".", 1)[-1]
        package = name.rsplit(".", 2)[-2]
        converted["x-go"] = f"{package}.{short}"
        converted["x-go-struct"] = short
    return converted


def _convert(node: Schema, expanding: tuple[str, ...]) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _reference(ref.rsplit("/", 1)[-1], expanding)
    types = node.get("type") or ()
    kinds = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    if not kinds:
        return dict(ANY)
    out: Schema = {"type": kinds[0]}
    if isinstance(node.get("format"), str):
        out["format"] = node["format"]
    if isinstance(node.get("properties"), dict):
        out["properties"] = {
            key: _convert(value, expanding) for key, value in node["properties"].items()
        }
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _convert(node["additionalProperties"], expanding)
    if isinstance(node.get("items"), dict):
        out["items"] = _convert(node["items"], expanding)
    if kinds[0] == "object" and "properties" not in out and "additionalProperties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    out["x-go"] = _go_name(out)
    return out


def _go_name(node: Schema) -> str:
    """The Go type of a node that is not a named struct."""
    kind, fmt = node["type"], node.get("format", "")
    if kind == "string":
        return "[]uint8" if fmt == "byte" else "string"
    if kind == "integer":
        return "int32" if fmt == "int32" else "int64"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + str(node.get("items", ANY)["x-go"])
    if "additionalProperties" in node:
        return "map[string]" + str(node["additionalProperties"]["x-go"])
    return "map[string]interface {}"
