"""Taking ``serverSideApply.ignoreFields`` out of a manifest, as upstream does.

* ``jsonPaths`` (Kubernetes JSONPath): the path is split at its last ``.``; every map
  the first part reaches loses the last key. A path that does not parse, or reaches
  nothing, removes nothing (upstream only logs it).
* ``jsonPointers`` (RFC 6901): the pointed field or list item is removed; a pointer to
  nothing removes nothing; a malformed pointer is an :class:`IgnoreFieldError`.
* ``jqPathExpressions``: ``del(<expression>)`` with jq
  (:mod:`~pyocm.work.agent.apply.jqdelete`); a failing expression is an
  :class:`IgnoreFieldError`.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonpointer

from pyocm.kube.jsonpath import compile_path
from pyocm.work.agent.apply.errors import IgnoreFieldError
from pyocm.work.agent.apply.jqdelete import jq_delete
from pyocm.work.agent.apply.merge import Obj

log = logging.getLogger(__name__)


def remove_json_path(obj: Obj, path: str) -> None:
    """Remove what ``path`` reaches from ``obj`` (in place)."""
    last = path.split(".")[-1]
    parent = path.removesuffix("." + last)
    try:
        found = compile_path(parent).find(obj)
    except ValueError as err:
        log.warning("ignoreFields: cannot use jsonPath %r: %s", path, err)
        return
    for value in found:
        if isinstance(value, dict):
            value.pop(last, None)


def remove_json_pointer(obj: Obj, pointer: str) -> None:
    """Remove what ``pointer`` points at from ``obj`` (in place)."""
    try:
        parts = jsonpointer.JsonPointer(pointer).parts
    except jsonpointer.JsonPointerException as err:
        raise IgnoreFieldError(f"JSON Pointer error in '{pointer}': {err}") from None
    if not parts:
        raise IgnoreFieldError(f"JSON Pointer error in '{pointer}': cannot remove the whole object")
    parent: Any = obj
    for part in parts[:-1]:
        parent = _step(parent, part)
        if parent is None:
            return
    last = parts[-1]
    if isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list) and (index := _index(last, parent)) is not None:
        del parent[index]


def _step(value: Any, part: str) -> Any:
    if isinstance(value, dict):
        return value.get(part)
    if isinstance(value, list) and (index := _index(part, value)) is not None:
        return value[index]
    return None


def _index(part: str, items: list[Any]) -> int | None:
    if part.isdigit() and int(part) < len(items):
        return int(part)
    return None


async def remove_ignored(obj: Obj, field: Any) -> Obj:
    """``obj`` without the fields one ``ignoreFields`` entry names (changed in place, or
    replaced when jq rewrote it)."""
    for path in field.get("jsonPaths") or ():
        remove_json_path(obj, path)
    for pointer in field.get("jsonPointers") or ():
        remove_json_pointer(obj, pointer)
    for expression in field.get("jqPathExpressions") or ():
        obj = await jq_delete(obj, expression)
    return obj
