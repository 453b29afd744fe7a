"""YAML request bodies, read as kube-apiserver reads them (go-yaml v2 under
sigs.k8s.io/yaml), with go-yaml's defences against hostile documents.

PyYAML builds a graph in which every alias is the anchored node itself, so a
600-byte "billion laughs" decodes cheaply and explodes later, when the object is
copied or encoded. Before anything is constructed, :func:`load` walks that graph once
(each distinct node once) and counts what go-yaml's decoder would do: every alias
re-decodes its anchor's whole subtree. It refuses, with go-yaml's message, a document
whose alias-driven decodes pass go-yaml's ratio (``document contains excessive
aliasing``), an anchor that contains itself, and nesting deeper than the server's
limit. Values then come out as go-yaml gives them to JSON: timestamps stay strings,
keys become strings, integers beyond 64 bits become floats.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# go-yaml v2 decode.go: the allowed share of alias-driven decodes scales from 99% at
# 400,000 decodes down to 10% at 4,000,000; it is only checked past 100 aliased and
# 1,000 total decodes.
_RATIO_LOW = 400_000
_RATIO_HIGH = 4_000_000
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"


class YamlLimit(ValueError):
    """A document go-yaml (or this server's depth limit) refuses before decoding."""


def allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _RATIO_LOW:
        return 0.99
    if decodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def excessive(aliased: int, decodes: int) -> bool:
    return aliased > 100 and decodes > 1000 and aliased / decodes > allowed_alias_ratio(decodes)


@dataclass
class Shape:
    """What decoding the graph would cost, as go-yaml counts it, and what expanding it
    to JSON would build."""

    max_depth: int
    max_bytes: int | None = None
    decodes: int = 1  # the document node
    aliased: int = 0
    #: Aliases met so far: only a document with aliases can expand past its own size.
    aliases: int = 0
    #: The JSON bytes of the whole document so far, each alias expanded (an estimate a
    #: little over the real size: every scalar counts as a quoted string).
    expanded: int = 0
    duplicates: list[str] = field(default_factory=list)
    #: Of each finished node, by id: decodes of one decode (an alias costs this again),
    #: its expanded JSON bytes, and its height (a scalar 0, a flat collection 1).
    sizes: dict[int, int] = field(default_factory=dict)
    bytes: dict[int, int] = field(default_factory=dict)
    heights: dict[int, int] = field(default_factory=dict)
    open: set[int] = field(default_factory=set)

    def count(self, *, decodes: int, aliased: int = 0) -> None:
        self.decodes += decodes
        self.aliased += aliased
        # Within one alias both counters grow together, so the ratio only rises:
        # checking after the whole expansion finds what go-yaml's per-node check finds.
        if excessive(self.aliased, self.decodes):
            raise YamlLimit("yaml: document contains excessive aliasing")

    def grow(self, size: int) -> None:
        self.expanded += size
        if self.aliases and self.max_bytes is not None and self.expanded > self.max_bytes:
            raise YamlTooLarge(self.max_bytes)


class YamlTooLarge(YamlLimit):
    """A document whose aliases expand it past the limit on bodies."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"yaml: aliases expand the document past {limit} bytes")
        self.limit = limit


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def analyse(root: Node, *, max_depth: int, max_bytes: int | None = None) -> Shape:
    """Walk each distinct node once, in document order; refuse what go-yaml refuses,
    and (before anything is built) an alias that would nest past ``max_depth`` or make
    the expanded document larger than ``max_bytes``."""
    shape = Shape(max_depth=max_depth, max_bytes=max_bytes)
    shape.count(decodes=1)
    if isinstance(root, ScalarNode):
        return shape
    shape.open.add(id(root))
    shape.grow(2)
    # Per open node: its children, then [decodes, next child, JSON bytes, height].
    stack: list[tuple[Node, list[Node], list[int]]] = [(root, _children(root), [1, 0, 2, 1])]
    _duplicates(root, shape)
    while stack:
        node, pending, acc = stack[-1]
        if acc[1] >= len(pending):
            stack.pop()
            key = id(node)
            shape.open.discard(key)
            shape.sizes[key] = acc[0]
            shape.bytes[key] = acc[2]
            shape.heights[key] = acc[3]
            if stack:
                _add(stack[-1][2], acc[0], acc[2], acc[3])
            continue
        child = pending[acc[1]]
        acc[1] += 1
        key = id(child)
        size = shape.sizes.get(key)
        if size is not None:  # an alias: go-yaml decodes the anchored subtree again
            shape.count(decodes=1 + size, aliased=size)
            height = shape.heights[key]
            if len(stack) + height > max_depth:
                raise YamlLimit(f"yaml: exceeded max depth of {max_depth}")
            shape.aliases += 1
            shape.grow(shape.bytes[key] + 1)
            _add(acc, 1 + size, shape.bytes[key], height)
        elif key in shape.open:
            raise YamlLimit("yaml: anchor value contains itself")
        else:
            shape.count(decodes=1)
            if not isinstance(child, ScalarNode):
                if len(stack) >= max_depth:
                    raise YamlLimit(f"yaml: exceeded max depth of {max_depth}")
                shape.open.add(key)
                shape.grow(3)
                _duplicates(child, shape)
                stack.append((child, _children(child), [1, 0, 2, 1]))
            else:
                scalar = len(child.value) + 2
                shape.sizes[key] = 1
                shape.bytes[key] = scalar
                shape.heights[key] = 0
                shape.grow(scalar + 1)
                _add(acc, 1, scalar, 0)
    return shape


def _add(acc: list[int], decodes: int, size: int, height: int) -> None:
    """Count a finished child into its parent's running totals."""
    acc[0] += decodes
    acc[2] += size + 1  # a comma, or a key's colon
    if height + 1 > acc[3]:
        acc[3] = height + 1


def _duplicates(node: Node, shape: Shape) -> None:
    """go-yaml's strict mode: ``line N: key "k" already set in map``."""
    if not isinstance(node, MappingNode) or len(node.value) < 2:
        return
    seen: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == _MERGE:
            continue
        ident = (key.tag, key.value)
        if ident in seen:
            shown = orjson.dumps(key.value).decode() if key.tag == _STR else key.value
            shape.duplicates.append(
                f"line {key.start_mark.line + 1}: key {shown} already set in map"
            )
        seen.add(ident)


class _Loader(_BASE):  # type: ignore[misc]
    """SafeLoader whose values are those go-yaml hands to JSON."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[str, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        return {_key(k): v for k, v in mapping.items()}


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return str(key) if isinstance(key, int) else format(key, "g")
    raise yaml.constructor.ConstructorError(None, None, f"unsupported map key: {key!r}")


def _timestamp(loader: _Loader, node: ScalarNode) -> str:
    # go-yaml v2 keeps timestamp-looking scalars as strings when decoding into
    # interface{}, so the text is kept exactly.
    return str(loader.construct_scalar(node))


def _int(loader: _Loader, node: ScalarNode) -> int | float:
    value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    if -(2**63) <= value < 2**64:
        return int(value)
    try:
        return float(value)  # go-yaml resolves an integer too big for 64 bits as a float
    except OverflowError:
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot decode {node.value[:40]!r}: number out of range", node.start_mark
        ) from None


def _float(loader: _Loader, node: ScalarNode) -> float:
    value = float(yaml.constructor.SafeConstructor.construct_yaml_float(loader, node))
    if math.isfinite(value):
        return value
    raise yaml.constructor.ConstructorError(
        None, None, f"json: unsupported value: {value}", node.start_mark
    )


def _binary(loader: _Loader, node: ScalarNode) -> str:
    raw = yaml.constructor.SafeConstructor.construct_yaml_binary(loader, node)
    return base64.b64encode(raw).decode()


def _set(loader: _Loader, node: MappingNode) -> Any:
    data: dict[str, Any] = {}
    yield data
    data.update(dict.fromkeys(loader.construct_mapping(node)))


def _pairs(loader: _Loader, node: SequenceNode) -> Any:
    data: list[Any] = []
    yield data
    data.extend(loader.construct_sequence(node, deep=True))


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
_Loader.add_constructor("tag:yaml.org,2002:int", _int)
_Loader.add_constructor("tag:yaml.org,2002:float", _float)
_Loader.add_constructor("tag:yaml.org,2002:binary", _binary)
_Loader.add_constructor("tag:yaml.org,2002:set", _set)
_Loader.add_constructor("tag:yaml.org,2002:omap", _pairs)
_Loader.add_constructor("tag:yaml.org,2002:pairs", _pairs)


@dataclass(frozen=True)
class Loaded:
    value: Any
    duplicates: list[str]
    #: The document used aliases: its value shares objects and must be copied apart.
    shared: bool


def load(raw: bytes, *, max_depth: int, max_bytes: int | None = None) -> Loaded:
    """Decode one YAML document; YamlLimit (YamlTooLarge past ``max_bytes`` once its
    aliases are expanded) or yaml.YAMLError when it is refused."""
    loader = _Loader(raw)
    try:
        root = loader.get_single_node()
        if root is None:
            return Loaded(None, [], shared=False)
        shape = analyse(root, max_depth=max_depth, max_bytes=max_bytes)
        value = loader.construct_document(root)
    finally:
        loader.dispose()
    return Loaded(value, shape.duplicates, shared=shape.aliased > 0)
