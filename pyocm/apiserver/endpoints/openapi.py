"""OpenAPI v3 (and v2): what ``kubectl explain`` reads, and how kubectl learns that the
server validates fields itself.

``/openapi/v3`` lists one document per served group-version; each document has a
schema per kind, tagged with ``x-kubernetes-group-version-kind``: a custom resource's
``openAPIV3Schema`` (its ``metadata`` pointing at the shared ObjectMeta schema), and for
built-in kinds their top level. Every resource also gets a PATCH path that declares the
``fieldValidation`` parameter, which is how kubectl 1.27+ decides to leave validation to
the server instead of validating against a schema on its side.
"""

from __future__ import annotations

import copy
import hashlib
import weakref
from typing import Any

import orjson

from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo

Obj = dict[str, Any]
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_META_REF = {"allOf": [{"$ref": f"#/components/schemas/{OBJECT_META}"}], "default": {}}
_API_VERSION = {
    "type": "string",
    "description": "The versioned schema of this representation of an object (group/version).",
}
_KIND = {"type": "string", "description": "The REST resource this object represents, in CamelCase."}


def index(catalog: Catalog) -> Obj:
    """``/openapi/v3``: where each group-version's document is, with a content hash
    (computed once per change of the served resources, like the documents)."""
    docs = _documents(catalog)
    found = docs.get(("*", "index"))
    if found is None:
        paths = {}
        for group in ["", *catalog.groups()]:
            for version in catalog.versions(group):
                key = _gv_path(group, version)
                digest = _hash(document(catalog, group, version))
                paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
        found = docs[("*", "index")] = {"paths": paths}
    return found


#: Per catalog: the generation the documents were built for, and the documents.
_built: weakref.WeakKeyDictionary[Catalog, tuple[int, dict[tuple[str, str], Obj]]] = (
    weakref.WeakKeyDictionary()
)


def _documents(catalog: Catalog) -> dict[tuple[str, str], Obj]:
    """What has been built for the catalog's current generation (emptied when it moves)."""
    generation, docs = _built.get(catalog, (-1, {}))
    if generation != catalog.generation:
        docs = {}
        _built[catalog] = (catalog.generation, docs)
    return docs


def document(catalog: Catalog, group: str, version: str) -> Obj:
    """One group-version's document, built once per change of the served resources."""
    docs = _documents(catalog)
    found = docs.get((group, version))
    if found is None:
        found = docs[(group, version)] = _document(catalog, group, version)
    return found


def _document(catalog: Catalog, group: str, version: str) -> Obj:
    schemas: Obj = {OBJECT_META: _object_meta()}
    paths: Obj = {}
    for info in catalog.resources(group, version):
        gvk = [{"group": group, "version": version, "kind": info.kind}]
        schemas[schema_name(info)] = {**_kind_schema(info), "x-kubernetes-group-version-kind": gvk}
        paths[_item_path(info)] = {
            "patch": {
                "operationId": f"patch{info.kind}",
                "parameters": [
                    {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                    {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                    {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk[0],
            }
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "pyocm", "version": version},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def schema_name(info: ResourceInfo) -> str:
    """Kubernetes' naming: the group's domain reversed, then version and kind."""
    if not info.group:
        return f"io.k8s.api.core.v1.{info.kind}"
    prefix = ".".join(reversed(info.group.split(".")))
    return f"{prefix}.{info.version}.{info.kind}"


def _kind_schema(info: ResourceInfo) -> Obj:
    if info.openapi_schema:
        schema: Obj = copy.deepcopy(dict(info.openapi_schema))
        properties: Obj = schema.setdefault("properties", {})
        properties["metadata"] = _META_REF
        properties.setdefault("apiVersion", _API_VERSION)
        properties.setdefault("kind", _KIND)
        return schema
    return {
        "type": "object",
        "description": f"{info.kind} ({info.group_version}).",
        "properties": {"apiVersion": _API_VERSION, "kind": _KIND, "metadata": _META_REF},
        "x-kubernetes-preserve-unknown-fields": True,
    }


def _object_meta() -> Obj:
    def text(description: str) -> Obj:
        return {"type": "string", "description": description}

    def strings(description: str) -> Obj:
        return {
            "type": "object",
            "additionalProperties": {"type": "string", "default": ""},
            "description": description,
        }

    return {
        "type": "object",
        "description": "Metadata every persisted resource has.",
        "properties": {
            "name": text("Unique within a namespace (or the cluster); cannot be changed."),
            "generateName": text("A prefix the server completes into a unique name."),
            "namespace": text("The namespace the object lives in; empty for cluster-scoped kinds."),
            "uid": text("Unique in time and space; set by the server."),
            "resourceVersion": text("The version of the object, for optimistic concurrency."),
            "generation": {
                "type": "integer",
                "format": "int64",
                "description": "A sequence number of the desired state, moved by the server.",
            },
            "creationTimestamp": {
                "type": "string",
                "format": "date-time",
                "description": "When the server created the object.",
            },
            "deletionTimestamp": {
                "type": "string",
                "format": "date-time",
                "description": "When the object will be deleted (set by a delete request).",
            },
            "labels": strings("Keys and values to organize and select objects."),
            "annotations": strings("Arbitrary non-identifying metadata."),
            "finalizers": {
                "type": "array",
                "items": {"type": "string", "default": ""},
                "description": "Must be empty before the object is deleted.",
            },
            "ownerReferences": {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "description": "Objects this one depends on; it is collected when they go.",
            },
            "managedFields": {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "description": "Which field manager owns which fields.",
            },
        },
    }


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _item_path(info: ResourceInfo) -> str:
    base = "/" + _gv_path(info.group, info.version)
    if info.namespaced:
        return f"{base}/namespaces/{{namespace}}/{info.plural}/{{name}}"
    return f"{base}/{info.plural}/{{name}}"


def _hash(doc: Obj) -> str:
    return hashlib.sha512(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32].upper()


def swagger(catalog: Catalog) -> Obj:
    """``/openapi/v2`` in JSON: every kind's schema as a Swagger 2.0 definition.

    (Clients asking for the protobuf form get an empty document instead, which kubectl
    reads as "no schemas" and so leaves validation to the server.)"""
    definitions: Obj = {}
    for group in ["", *catalog.groups()]:
        for version in catalog.versions(group):
            schemas = document(catalog, group, version)["components"]["schemas"]
            for name, schema in schemas.items():
                definitions[name] = _v2_refs(schema)
    return {
        "swagger": "2.0",
        "info": {"title": "pyocm", "version": "v2"},
        "paths": {},
        "definitions": definitions,
    }


def _v2_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: value.replace("#/components/schemas/", "#/definitions/")
            if key == "$ref" and isinstance(value, str)
            else _v2_refs(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_v2_refs(item) for item in node]
    return node
