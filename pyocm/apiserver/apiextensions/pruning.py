"""Pruning: drop every field the structural schema does not specify, and say which.

The rules are kube-apiserver's:

* an object field that is neither in ``properties`` nor covered by
  ``additionalProperties`` is removed, with everything below it;
* ``x-kubernetes-preserve-unknown-fields: true`` keeps the unknown fields of that node
  (and of the items of an array under it) untouched, while its known properties are
  still pruned by their own schemas;
* ``apiVersion``, ``kind`` and ``metadata`` are kept at the resource root (the generic
  store owns ObjectMeta) and in ``x-kubernetes-embedded-resource`` nodes. In embedded
  resources ``metadata`` is cut down to ObjectMeta's fields, as decoding it into an
  ObjectMeta would: unknown fields are reported and removed, fields of the wrong type and
  empty fields are dropped silently, and a non-string ``apiVersion``/``kind`` is dropped.

The removed paths (``spec.foo``, ``spec.items[0].bar``, ``spec.template.metadata.x``) come
back in the order they were found, for ``fieldValidation=Strict`` (``unknown field
"spec.foo"``) and ``Warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rfc3339_validator

from pyocm.apiserver.apiextensions.schema import CompiledSchema, Node

_META_FIELDS = ("apiVersion", "kind", "metadata")


def prune(obj: Any, compiled: CompiledSchema, *, is_resource_root: bool = True) -> list[str]:
    """Remove unknown fields from ``obj`` in place; returns the removed fields' paths."""
    return prune_value(obj, compiled.root, is_resource_root=is_resource_root)


def prune_value(value: Any, node: Node | None, *, is_resource_root: bool) -> list[str]:
    """:func:`prune` for any value under any node (``None`` prunes every object field)."""
    removed: list[str] = []
    _prune(value, node, "", removed, is_resource_root)
    return removed


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(
    value: Any, node: Node | None, path: str, removed: list[str], root: bool = False
) -> None:
    if node is not None and node.preserve_unknown:
        _prune_known(value, node, path, removed, root)
    elif isinstance(value, dict):
        for key in list(value):
            if node is None:
                removed.append(_key(path, key))
                del value[key]
            elif not _kept_meta(value, key, node, path, removed, root):
                _prune_field(value, key, node, _key(path, key), removed)
    elif isinstance(value, list):
        items = node.items if node is not None else None
        for i, item in enumerate(value):
            _prune(item, items, f"{path}[{i}]", removed)


def _prune_known(
    value: Any, node: Node | None, path: str, removed: list[str], root: bool = False
) -> None:
    """Below ``x-kubernetes-preserve-unknown-fields``: prune only what the schema knows."""
    if node is None:
        return
    if isinstance(value, dict):
        for key in list(value):
            if _kept_meta(value, key, node, path, removed, root):
                continue
            if key in node.properties or node.has_additional:
                _prune_field(value, key, node, _key(path, key), removed)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _prune_known(item, node.items, f"{path}[{i}]", removed)


def _prune_field(obj: dict[str, Any], key: str, node: Node, path: str, removed: list[str]) -> None:
    sub = node.properties.get(key)
    if sub is not None:
        _prune(obj[key], sub, path, removed)
    elif node.has_additional:
        _prune(obj[key], node.additional, path, removed)
    else:
        removed.append(path)
        del obj[key]


def _kept_meta(
    obj: dict[str, Any], key: str, node: Node, path: str, removed: list[str], root: bool
) -> bool:
    """Type and object meta of a resource are not pruned by the schema; True if ``key`` is one."""
    if key not in _META_FIELDS or not (root or node.embedded):
        return False
    if not root:
        _coerce_meta_field(obj, key, _key(path, key), removed)
    return True


def _coerce_meta_field(obj: dict[str, Any], key: str, path: str, removed: list[str]) -> None:
    value = obj[key]
    if key != "metadata":
        if not isinstance(value, str):
            del obj[key]
        return
    if not isinstance(value, dict):
        return  # left for validation to report: it cannot be decoded at all
    for field in list(value):
        check = _OBJECT_META.get(field)
        if check is None:
            removed.append(f"{path}.{field}")
            del value[field]
        elif not check(value[field]) or _empty(field, value[field]):
            del value[field]


def _empty(field: str, value: Any) -> bool:
    # ObjectMeta's fields are all omitempty; the grace period is a pointer, so 0 stays.
    return field != "deletionGracePeriodSeconds" and value in (None, "", 0, {}, [])


def _is_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_int(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _is_time(value: Any) -> bool:
    return value is None or (isinstance(value, str) and rfc3339_validator.validate_rfc3339(value))


def _is_str_map(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    )


def _list_of(kind: type) -> Callable[[Any], bool]:
    return lambda value: (
        value is None or (isinstance(value, list) and all(isinstance(v, kind) for v in value))
    )


_OBJECT_META: dict[str, Callable[[Any], bool]] = {
    "name": _is_str,
    "generateName": _is_str,
    "namespace": _is_str,
    "selfLink": _is_str,
    "uid": _is_str,
    "resourceVersion": _is_str,
    "generation": _is_int,
    "creationTimestamp": _is_time,
    "deletionTimestamp": _is_time,
    "deletionGracePeriodSeconds": _is_int,
    "labels": _is_str_map,
    "annotations": _is_str_map,
    "ownerReferences": _list_of(dict),
    "finalizers": _list_of(str),
    "managedFields": _list_of(dict),
}
