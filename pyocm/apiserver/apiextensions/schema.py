"""Compiled structural schemas: the one-time preparation behind validation, defaulting and pruning.

A CustomResourceDefinition version's ``openAPIV3Schema`` is turned once into a tree of
:class:`Node` objects; every write then walks that tree instead of re-reading the raw
dict. Compiling does the work kube-apiserver does when it builds its validator:

* patterns are compiled with Go ``regexp`` semantics (``$`` only matches at the very end,
  ``\\d``/``\\w``/``\\s`` are ASCII) and shared between schemas through a cache;
* formats Kubernetes does not support for the node's type are dropped, exactly as
  apiextensions' ``StripUnsupportedFormatsPostProcess`` does, and supported string
  formats get their checker attached;
* ``x-kubernetes-int-or-string`` becomes the type list ``integer,string``;
* the root ``metadata`` node keeps only its ``name`` and ``generateName`` restrictions,
  because the generic store validates ObjectMeta itself.

The name-format checks (DNS-1123/1035) live here too: they are the ``k8s-short-name`` and
``k8s-long-name`` formats and are shared with CRD validation.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import rfc3339_validator

#: Marks a node without a ``default`` (``None`` is a legal default value).
MISSING: Any = object()

FormatCheck = Callable[[str], bool]


@dataclass(eq=False, slots=True)
class Node:
    """One compiled schema node; ``properties``/``additional``/``items`` form the structure."""

    types: tuple[str, ...] = ()
    nullable: bool = False
    format: str = ""
    format_check: FormatCheck | None = None
    enum: tuple[Any, ...] | None = None
    pattern: str = ""
    regex: re.Pattern[str] | None = None
    max_length: int | None = None
    min_length: int | None = None
    max_items: int | None = None
    min_items: int | None = None
    max_properties: int | None = None
    min_properties: int | None = None
    maximum: int | float | None = None
    minimum: int | float | None = None
    exclusive_maximum: bool = False
    exclusive_minimum: bool = False
    multiple_of: int | float | None = None
    required: tuple[str, ...] = ()
    properties: dict[str, Node] = field(default_factory=dict)
    #: ``additionalProperties`` is present (as a schema, ``true`` or ``false``).
    has_additional: bool = False
    additional_allowed: bool = True
    additional: Node | None = None
    items: Node | None = None
    all_of: tuple[Node, ...] = ()
    any_of: tuple[Node, ...] = ()
    one_of: tuple[Node, ...] = ()
    not_: Node | None = None
    default: Any = MISSING
    preserve_unknown: bool = False
    embedded: bool = False
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    unique_items: bool = False
    #: Whether any value validation (anyOf/allOf/oneOf/not) hangs off this node.
    composed: bool = False
    #: Whether this node or one below it is an embedded resource / a set or map list;
    #: lets the embedded-resource and list-type passes skip whole subtrees.
    walk_embedded: bool = False
    walk_lists: bool = False
    #: Whether a node below this one has a default, so defaulting can skip whole subtrees.
    walk_defaults: bool = False


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """A CRD version's schema, compiled once and shared by every request for that version."""

    root: Node

    @classmethod
    def from_openapi(cls, schema: Mapping[str, Any]) -> CompiledSchema:
        """Compile ``openAPIV3Schema``; raises ``ValueError`` on a pattern Go would reject."""
        root = compile_node(schema)
        meta = root.properties.get("metadata")
        if meta is not None:
            kept = {k: v for k, v in meta.properties.items() if k in ("name", "generateName")}
            root.properties["metadata"] = Node(types=("object",), properties=kept)
        return cls(root)


def compile_node(schema: Mapping[str, Any]) -> Node:
    """Compile one schema node and everything below it (no resource-root treatment)."""
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    raw_type = str(schema.get("type") or "")
    types = ("integer", "string") if int_or_string else ((raw_type,) if raw_type else ())
    fmt = supported_format("" if int_or_string else raw_type, str(schema.get("format") or ""))
    node = Node(
        types=types,
        nullable=bool(schema.get("nullable")),
        format=fmt,
        format_check=FORMAT_CHECKS.get(fmt.replace("-", "")) if fmt else None,
        enum=tuple(schema["enum"]) if schema.get("enum") is not None else None,
        max_length=schema.get("maxLength"),
        min_length=schema.get("minLength"),
        max_items=schema.get("maxItems"),
        min_items=schema.get("minItems"),
        max_properties=schema.get("maxProperties"),
        min_properties=schema.get("minProperties"),
        maximum=schema.get("maximum"),
        minimum=schema.get("minimum"),
        exclusive_maximum=bool(schema.get("exclusiveMaximum")),
        exclusive_minimum=bool(schema.get("exclusiveMinimum")),
        multiple_of=schema.get("multipleOf"),
        required=tuple(schema.get("required") or ()),
        default=schema.get("default", MISSING),
        preserve_unknown=bool(schema.get("x-kubernetes-preserve-unknown-fields")),
        embedded=bool(schema.get("x-kubernetes-embedded-resource")),
        list_type=str(schema.get("x-kubernetes-list-type") or ""),
        list_map_keys=tuple(schema.get("x-kubernetes-list-map-keys") or ()),
        unique_items=bool(schema.get("uniqueItems")),
    )
    if schema.get("pattern"):
        node.pattern = str(schema["pattern"])
        node.regex = go_regexp(node.pattern)
    _compile_children(node, schema)
    return node


def _compile_children(node: Node, schema: Mapping[str, Any]) -> None:
    node.properties = {k: compile_node(v) for k, v in (schema.get("properties") or {}).items()}
    additional = schema.get("additionalProperties")
    if additional is not None:
        node.has_additional = True
        node.additional_allowed = additional is not False
        node.additional = compile_node(additional) if isinstance(additional, Mapping) else None
    if isinstance(schema.get("items"), Mapping):
        node.items = compile_node(schema["items"])
    node.all_of = tuple(compile_node(s) for s in schema.get("allOf") or ())
    node.any_of = tuple(compile_node(s) for s in schema.get("anyOf") or ())
    node.one_of = tuple(compile_node(s) for s in schema.get("oneOf") or ())
    if isinstance(schema.get("not"), Mapping):
        node.not_ = compile_node(schema["not"])
    node.composed = bool(node.all_of or node.any_of or node.one_of or node.not_)
    children = [
        *node.properties.values(),
        *(c for c in (node.additional, node.items) if c is not None),
    ]
    node.walk_embedded = node.embedded or any(c.walk_embedded for c in children)
    node.walk_lists = node.list_type in ("set", "map") or any(c.walk_lists for c in children)
    node.walk_defaults = any(c.default is not MISSING or c.walk_defaults for c in children)


# --- patterns -------------------------------------------------------------------------

_REGEX_CACHE: dict[str, re.Pattern[str]] = {}
# RE2 has no lookaround and no backreferences; Python would silently accept them.
_UNSUPPORTED_PERL = re.compile(r"\(\?<?[=!]")
_BACKREFERENCE = re.compile(r"(?<!\\)(?:\\\\)*(\\[1-9])")


def go_regexp(pattern: str) -> re.Pattern[str]:
    """Compile a schema ``pattern`` as Go's ``regexp`` would match it; ``ValueError`` if invalid."""
    cached = _REGEX_CACHE.get(pattern)
    if cached is not None:
        return cached
    if found := _UNSUPPORTED_PERL.search(pattern):
        raise ValueError(
            f"error parsing regexp: invalid or unsupported Perl syntax: `{found.group()}`"
        )
    if found := _BACKREFERENCE.search(pattern):
        raise ValueError(f"error parsing regexp: invalid escape sequence: `{found.group(1)}`")
    try:
        compiled = re.compile(_end_anchors(pattern), re.ASCII)
    except re.error as e:
        raise ValueError(f"error parsing regexp: {e}") from None
    _REGEX_CACHE[pattern] = compiled
    return compiled


def _end_anchors(pattern: str) -> str:
    """Rewrite ``$`` and ``\\z`` to ``\\Z``: Go's ``$`` never matches before a final newline."""
    if "(?m" in pattern or ("$" not in pattern and "\\z" not in pattern):
        return pattern
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped:
            out.append("Z" if ch == "z" else ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            in_class = ch != "]"
        else:
            in_class = ch == "["
            out.append("\\Z" if ch == "$" else ch)
    return "".join(out)


# --- formats --------------------------------------------------------------------------

# Formats kube-apiserver keeps on string (or untyped) nodes, normalised without dashes.
_STRING_FORMATS = frozenset(
    (
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "quantity",
        "k8sshortname",
        "k8slongname",
    )
)


def supported_format(schema_type: str, fmt: str) -> str:
    """The format kube-apiserver keeps for a node of ``schema_type``; ``""`` when stripped."""
    if not fmt:
        return ""
    if schema_type in ("", "string"):
        return fmt if fmt.replace("-", "") in _STRING_FORMATS else ""
    allowed = {"integer": ("int32", "int64"), "number": ("float", "double")}.get(schema_type, ())
    return fmt if fmt in allowed else ""


DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = DNS1123_LABEL + "(\\." + DNS1123_LABEL + ")*"
DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{DNS1123_LABEL}\\Z")
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{DNS1123_SUBDOMAIN}\\Z")
_DNS1035_LABEL_RE = re.compile(f"^{DNS1035_LABEL}\\Z")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # apimachinery's RegexError, including its double space after the first example.
    shown = "".join(f"'{e}', " if i == 0 else f" or '{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def dns1123_label_errors(value: str) -> list[str]:
    errs = [] if len(value) <= 63 else ["must be no more than 63 characters"]
    if not _DNS1123_LABEL_RE.match(value):
        msg = (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
            "or '-', and must start and end with an alphanumeric character"
        )
        errs.append(_regex_error(msg, DNS1123_LABEL, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    errs = [] if len(value) <= 253 else ["must be no more than 253 characters"]
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        msg = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character"
        )
        errs.append(_regex_error(msg, DNS1123_SUBDOMAIN, "example.com"))
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    errs = [] if len(value) <= 63 else ["must be no more than 63 characters"]
    if not _DNS1035_LABEL_RE.match(value):
        msg = (
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
            "start with an alphabetic character, and end with an alphanumeric character"
        )
        errs.append(_regex_error(msg, DNS1035_LABEL, "my-name", "abc-123"))
    return errs


def _matches(pattern: str, flags: int = 0) -> FormatCheck:
    compiled = re.compile(pattern, flags)
    return lambda s: compiled.match(s) is not None


def _is_byte(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_ip(version: int) -> FormatCheck:
    # Go's net.ParseIP plus govalidator's "contains '.'"/"contains ':'" rule.
    def check(s: str) -> bool:
        try:
            ip = ipaddress.ip_address(s)
        except ValueError:
            return False
        return "%" not in s and (ip.version == version or (version == 4 and "." in s))

    return check


def _is_cidr(s: str) -> bool:
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return "/" in s and "%" not in s


def _is_date(s: str) -> bool:
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", s)
    return m is not None and rfc3339_validator.validate_rfc3339(f"{s}T00:00:00Z")


def _is_hostname(s: str) -> bool:
    return len(s) <= 255 and _HOSTNAME(s) and all(len(p) <= 63 for p in s.split("."))


_CH = "a-zA-Z0-9\u0080-\U0010ffff"
_HOSTNAME = _matches(
    f"^([{_CH}]((-?[{_CH}]{{0,62}})?)|([{_CH}](([{_CH}-]{{0,61}}[{_CH}])?)(\\.)){{1,}}"
    f"([{_CH}])(-?[{_CH}]){{1,62}})\\Z"
)
_UUID = "^[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}\\Z"
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_UNITS = "ns|us|µs|μs|ms|s|m|h"
_LONG_UNITS = "ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?"

FORMAT_CHECKS: dict[str, FormatCheck] = {
    "byte": _is_byte,
    "date": _is_date,
    "datetime": rfc3339_validator.validate_rfc3339,
    "password": lambda s: True,
    "uri": _matches(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|/)[^\s\x00-\x1f]*\Z"),
    "email": _matches(r"^(?:[^@\s<>]+@[^@\s<>]+|[^<>]*<[^@\s<>]+@[^@\s<>]+>)\Z"),
    "hostname": _is_hostname,
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "mac": _matches(
        r"^(?:[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){7}"
        r"|[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){19}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2,9})\Z"
    ),
    "uuid": _matches(_UUID % ("[0-9a-f]", "[0-9a-f]"), re.I),
    "uuid3": _matches(_UUID % ("3", "[0-9a-f]"), re.I),
    "uuid4": _matches(_UUID % ("4", "[89ab]"), re.I),
    "uuid5": _matches(_UUID % ("5", "[89ab]"), re.I),
    "bsonobjectid": _matches(r"^[0-9a-fA-F]{24}\Z"),
    "ssn": _matches(r"^\d{3}[- ]?\d{2}[- ]?\d{4}\Z", re.A),
    "hexcolor": _matches(r"^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z"),
    "rgbcolor": _matches(f"^rgb\\({_OCTET},{_OCTET},{_OCTET}\\)\\Z", re.A),
    "duration": _matches(
        f"^(?:[-+]?(?:(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:{_UNITS}))+|0|\\d+\\s*(?:{_LONG_UNITS}))\\Z",
        re.A,
    ),
    "quantity": _matches(
        r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:\d+(?:\.\d*)?|\.\d+))?\Z",
        re.A,
    ),
    "k8sshortname": lambda s: not dns1123_label_errors(s),
    "k8slongname": lambda s: len(s) <= 253 and _DNS1123_SUBDOMAIN_RE.match(s) is not None,
}
