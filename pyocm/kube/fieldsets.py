"""Field sets for server-side apply: which fields an object sets, in the ``FieldsV1`` form
``metadata.managedFields`` stores, and the apply merge itself.

A path is a tuple of elements as FieldsV1 writes them: ``f:<field>`` for a field of a
map, ``k:<json of the key fields>`` for an item of a list keyed like a map, ``v:<json>``
for a value of a set, and ``.`` for "this list item itself". Lists are atomic (one leaf)
unless the :class:`Structure` says they are sets or keyed maps, as the CRD schema's
``x-kubernetes-list-type`` or a built-in kind's ``patchMergeKey`` does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import orjson

from pyocm.kube import smp

Obj = dict[str, Any]
Path = tuple[str, ...]
_MISSING = object()


class Structure(Protocol):
    """What the schema says about the value at one place in the object."""

    def field(self, name: str) -> Structure: ...

    def item(self) -> Structure: ...

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        """``("atomic", ())``, ``("set", ())`` or ``("map", key field names)``."""
        ...

    def atomic_map(self) -> bool: ...


class Untyped:
    """No schema: maps are granular, lists atomic."""

    def field(self, name: str) -> Structure:
        return self

    def item(self) -> Structure:
        return self

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        return ("atomic", ())

    def atomic_map(self) -> bool:
        return False


class OpenAPIStructure:
    """A CRD version's ``openAPIV3Schema`` (or a part of it)."""

    def __init__(self, schema: Mapping[str, Any] | None) -> None:
        self.schema = schema or {}

    def field(self, name: str) -> Structure:
        props = self.schema.get("properties") or {}
        if name in props:
            return OpenAPIStructure(props[name])
        extra = self.schema.get("additionalProperties")
        return OpenAPIStructure(extra if isinstance(extra, Mapping) else None)

    def item(self) -> Structure:
        items = self.schema.get("items")
        return OpenAPIStructure(items if isinstance(items, Mapping) else None)

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        kind = self.schema.get("x-kubernetes-list-type") or "atomic"
        keys = tuple(self.schema.get("x-kubernetes-list-map-keys") or ())
        if kind == "map" and keys:
            return ("map", keys)
        return ("set", ()) if kind == "set" else ("atomic", ())

    def atomic_map(self) -> bool:
        return self.schema.get("x-kubernetes-map-type") == "atomic"


def key_element(item: Mapping[str, Any], keys: Iterable[str]) -> str:
    return "k:" + orjson.dumps({k: item.get(k) for k in keys}, option=orjson.OPT_SORT_KEYS).decode()


def value_element(value: Any) -> str:
    return "v:" + orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def leaves(obj: Mapping[str, Any], structure: Structure, prefix: Path = ()) -> set[Path]:
    """Every path ``obj`` sets (maps by field, lists as their structure says)."""
    found: set[Path] = set()
    for name, value in obj.items():
        path = (*prefix, f"f:{name}")
        found |= _value_leaves(value, structure.field(name), path)
    return found


def _value_leaves(value: Any, structure: Structure, path: Path) -> set[Path]:
    if isinstance(value, dict) and value and not structure.atomic_map():
        return leaves(value, structure, path)
    if isinstance(value, list):
        kind, keys = structure.list_type()
        if kind == "set":
            return {(*path, value_element(v)) for v in value}
        if kind == "map":
            found: set[Path] = set()
            for item in value:
                if not isinstance(item, dict):
                    return {path}
                item_path = (*path, key_element(item, keys))
                found.add((*item_path, "."))
                found |= leaves(item, structure.item(), item_path)
            return found
    return {path}


def to_fields_v1(paths: Iterable[Path]) -> Obj:
    tree: Obj = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return tree


def from_fields_v1(tree: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    found: set[Path] = set()
    for element, below in tree.items():
        path = (*prefix, element)
        if isinstance(below, Mapping) and below:
            found |= from_fields_v1(below, path)
        else:
            found.add(path)
    return found


def value_at(obj: Any, path: Path) -> Any:
    """The value ``path`` names in ``obj`` (``_MISSING``-free: None when absent)."""
    node = obj
    for element in path:
        node = _step(node, element)
        if node is _MISSING:
            return None
    return node


def _step(node: Any, element: str) -> Any:
    if element == ".":
        return node
    if element.startswith("f:") and isinstance(node, dict):
        return node.get(element[2:], _MISSING)
    if element.startswith("k:") and isinstance(node, list):
        wanted = orjson.loads(element[2:])
        for item in node:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in wanted.items()):
                return item
        return _MISSING
    if element.startswith("v:") and isinstance(node, list):
        wanted = orjson.loads(element[2:])
        return wanted if wanted in node else _MISSING
    return _MISSING


def remove(obj: Obj, path: Path) -> None:
    """Remove what ``path`` names from ``obj`` (a field, a keyed item, a set value),
    dropping maps it leaves empty."""
    if not path:
        return
    if path[-1] == ".":
        path = path[:-1]
    parents: list[Any] = [obj]
    for element in path[:-1]:
        node = _step(parents[-1], element)
        if node is _MISSING or not isinstance(node, (dict, list)):
            return
        parents.append(node)
    parent, last = parents[-1], path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        target = _step(parent, last)
        if target is not _MISSING and last.startswith("k:"):
            parent[:] = [item for item in parent if item is not target]
        elif target is not _MISSING:
            parent[:] = [item for item in parent if item != target]
    # Maps emptied by the removal go too (their owner set only what was inside).
    for depth in range(len(parents) - 1, 0, -1):
        node = parents[depth]
        if isinstance(node, dict) and not node:
            container, element = parents[depth - 1], path[depth - 1]
            if element.startswith("f:") and isinstance(container, dict):
                container.pop(element[2:], None)


def merge(live: Any, config: Any, structure: Structure) -> Any:
    """``config`` laid over ``live``: maps merge field by field, keyed lists item by
    item (in the config's order, then live items it does not name), sets as a union,
    anything else is replaced."""
    if isinstance(live, dict) and isinstance(config, dict) and not structure.atomic_map():
        merged = dict(live)
        for name, value in config.items():
            merged[name] = merge(live.get(name, _MISSING), value, structure.field(name))
        return merged
    if isinstance(live, list) and isinstance(config, list):
        kind, keys = structure.list_type()
        if kind == "set":
            return [*config, *(v for v in live if v not in config)]
        if kind == "map" and all(isinstance(i, dict) for i in [*live, *config]):
            by_key = {key_element(i, keys): i for i in live}
            out = []
            for item in config:
                element = key_element(item, keys)
                out.append(merge(by_key.pop(element, _MISSING), item, structure.item()))
            return [*out, *by_key.values()]
    return copy.deepcopy(config)


class PatchStructure:
    """A built-in kind, from its strategic-merge-patch metadata: a list merged by
    ``patchMergeKey`` is a keyed map, one merged without a key a set. Object metadata
    follows Kubernetes' own list types (owner references by uid, finalizers a set)."""

    def __init__(self, schema: smp.Schema, *, metadata: bool = False) -> None:
        self.schema = schema
        self.metadata = metadata

    def field(self, name: str) -> Structure:
        if name == "metadata" and not self.metadata:
            return _METADATA
        return PatchStructure(self.schema.child(name))

    def item(self) -> Structure:
        return PatchStructure(self.schema.elements or smp.OPAQUE)

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        if self.schema.merge and self.schema.merge_key:
            return ("map", (self.schema.merge_key,))
        return ("set", ()) if self.schema.merge else ("atomic", ())

    def atomic_map(self) -> bool:
        return False


_METADATA = PatchStructure(
    smp.Schema(
        fields={
            "ownerReferences": smp.Schema(merge=True, merge_key="uid"),
            "finalizers": smp.Schema(merge=True),
        }
    ),
    metadata=True,
)


def structure_for(schema: smp.Schema | None, openapi: Mapping[str, Any] | None) -> Structure:
    """The structure of a kind: its CRD schema, else its patch metadata, else untyped."""
    if openapi:
        return _WithMetadata(OpenAPIStructure(openapi))
    if schema is not None:
        return PatchStructure(schema)
    return _WithMetadata(Untyped())


class _WithMetadata:
    """Any root: ``metadata`` has Kubernetes' own list types."""

    def __init__(self, root: Structure) -> None:
        self.root = root

    def field(self, name: str) -> Structure:
        return _METADATA if name == "metadata" else self.root.field(name)

    def item(self) -> Structure:
        return self.root.item()

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        return self.root.list_type()

    def atomic_map(self) -> bool:
        return self.root.atomic_map()
