"""Objects read as their schema types them, whatever another writer stored.

pyocm's API server and kube-apiserver refuse custom resources that break their schema,
but an object stored before such checks, under a looser CRD, or by a writer that went
around the API may hold a ``status`` that is a string or ``conditions`` that are a
number. Controllers read such objects through :func:`well_typed`: every value of the
wrong type is left out (a property from its object, an item from its list) and named,
so the controller sees those fields as absent, and what it writes back is well formed.

Only types and required properties are checked: patterns, enums and lengths are the API
server's to enforce, and a value that breaks them still reads as what it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pyocm.api import schema as s

Obj = dict[str, Any]

#: What the API server checks of every object's metadata, as a schema (kind_root leaves
#: ``metadata`` opaque because the server validates it itself).
OBJECT_META: s.Schema = s.obj(
    {
        "name": s.string(),
        "namespace": s.string(),
        "resourceVersion": s.string(),
        "labels": s.string_map(),
        "annotations": s.string_map(),
        "finalizers": s.string_list(),
    }
)


class Typed(NamedTuple):
    #: The object without its ill-typed values (the very object when it had none).
    value: Obj
    #: ``path: what was wrong``, one per value left out.
    problems: list[str]


_DROP = object()
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


def well_typed(obj: Obj, schema: Mapping[str, Any]) -> Typed:
    """``obj`` as ``schema`` (a kind's root schema) types it; its metadata as the API
    server types object meta."""
    problems: list[str] = []
    root = {**schema, "properties": {**schema.get("properties", {}), "metadata": OBJECT_META}}
    value = _prune(obj, root, "", problems, root=True)
    return Typed(value if isinstance(value, dict) else {}, problems)


def _prune(
    value: Any, schema: Mapping[str, Any], path: str, problems: list[str], *, root: bool = False
) -> Any:
    wrong = _wrong_type(value, schema)
    if wrong:
        problems.append(f"{path or '.'}: {wrong}")
        return _DROP
    if isinstance(value, dict):
        return _prune_object(value, schema, path, problems, root=root)
    if isinstance(value, list) and "items" in schema:
        return _prune_list(value, schema["items"], path, problems)
    return value


def _wrong_type(value: Any, schema: Mapping[str, Any]) -> str:
    """Why ``value`` cannot be what ``schema`` says, or ''."""
    if schema.get("x-kubernetes-int-or-string"):
        allowed: tuple[type, ...] = (int, str)
    else:
        allowed = _TYPES.get(str(schema.get("type")), ())
    if not allowed or (value is None and schema.get("nullable")):
        return ""
    # bool is an int to Python, never to JSON.
    if isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed):
        return ""
    return f"expected {' or '.join(_json_name(t) for t in allowed)}, got {_json_type(value)}"


def _prune_object(
    value: Obj, schema: Mapping[str, Any], path: str, problems: list[str], *, root: bool
) -> Any:
    if not root:
        missing = [key for key in schema.get("required", ()) if key not in value]
        if missing:
            problems.append(f"{path}: missing required {', '.join(missing)}")
            return _DROP
    properties: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    kept: Obj = {}
    for key, item in value.items():
        sub = properties.get(key, extra if isinstance(extra, Mapping) else None)
        if item is None and not (sub or {}).get("nullable"):
            continue  # as kube-apiserver prunes nulls a schema does not allow
        pruned = item if sub is None else _prune(item, sub, f"{path}.{key}", problems)
        if pruned is not _DROP:
            kept[key] = pruned
    return value if _same(kept, value) else kept


def _prune_list(value: list[Any], items: Mapping[str, Any], path: str, problems: list[str]) -> Any:
    kept = [
        p
        for i, v in enumerate(value)
        if (p := _prune(v, items, f"{path}[{i}]", problems)) is not _DROP
    ]
    return (
        value
        if len(kept) == len(value) and all(a is b for a, b in zip(kept, value, strict=True))
        else kept
    )


def _same(kept: Obj, value: Obj) -> bool:
    """Whether pruning changed nothing (children are the very same objects)."""
    return len(kept) == len(value) and all(kept.get(k, _DROP) is v for k, v in value.items())


def _json_name(kind: type) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }[kind]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind in (bool, dict, list, str, int, float):
        if isinstance(value, kind):
            return _json_name(kind)
    return type(value).__name__


def mapping(value: Any) -> Obj:
    """``value`` if it is an object, else an empty one (for a quick read of one field)."""
    return value if isinstance(value, dict) else {}


def objects(value: Any) -> list[Obj]:
    """The objects among ``value``'s items, if it is a list."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def string_map(value: Any) -> dict[str, str]:
    """Labels or annotations: only string keys with string values count."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
