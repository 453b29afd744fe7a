"""Bounds on decoded JSON values, and the duplicate keys JSON decoders drop silently.

kube-apiserver's JSON decoder refuses nesting past 10,000 levels. This server keeps
objects as Python values and encodes them with orjson, which cannot encode past 254
levels (the object inside a List, a watch event or managedFields adds a few), and
walks them recursively: :data:`MAX_DEPTH` is what it can serve, far above what any
real object needs.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

MAX_DEPTH = 200

# One JSON string (with the colon that makes it a key) or one bracket. Outside strings
# a quote only ever opens a string, so scanning valid JSON left to right stays aligned.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*(:)?|[{}\[\]]')


class TooDeep(ValueError):
    """A value nested deeper than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"exceeded max depth of {limit}")


def check_depth(value: Any, *, raw: bytes | None = None, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`TooDeep` when ``value`` nests objects and lists past ``limit``.

    ``raw`` is the JSON text it came from: when it has no more brackets than the
    limit, it cannot nest deeper, and the walk is skipped (ordinary bodies)."""
    if raw is not None and raw.count(b"{") + raw.count(b"[") <= limit:
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            raise TooDeep(limit)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def duplicate_fields(raw: bytes) -> list[str]:
    """``duplicate field "k"`` for each key repeated within one object of ``raw``
    (valid JSON), in document order, as Go's strict JSON decoder reports them."""
    found: list[str] = []
    objects: list[set[str] | None] = []
    for match in _TOKENS.finditer(raw):
        token = match.group(0)
        first = token[0]
        if first in b"{[":
            objects.append(set() if first == ord("{") else None)
        elif first in b"}]":
            objects.pop()
        elif match.group(1) is not None and objects and (keys := objects[-1]) is not None:
            key = orjson.loads(token[: token.rindex(b'"') + 1])
            if key in keys:
                found.append(f"duplicate field {orjson.dumps(key).decode()}")
            keys.add(key)
    return found
