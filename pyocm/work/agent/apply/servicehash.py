"""The ``operator.openshift.io/spec-hash`` annotation library-go puts on every Service
it applies: the SHA-256 of the Service's spec as Go's ``encoding/json`` writes the typed
``corev1.ServiceSpec`` (fields in struct order, ``omitempty`` rules, unknown fields
dropped). Reproduced so a Service applied by pyocm's work agent carries the value
upstream's would.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

SPEC_HASH_ANNOTATION: Final = "operator.openshift.io/spec-hash"

# One field: its JSON name and how Go writes it. "str", "int", "bool", "list", "map"
# are omitempty values (dropped when zero or empty); "ptr" is a pointer (dropped only
# when absent); "always" is written even when zero; "intorstr" is intstr.IntOrString
# (a struct: always written, 0 when absent); a tuple is a nested struct behind a pointer.
Field = tuple[str, Any]

_CLIENT_IP: tuple[Field, ...] = (("timeoutSeconds", "ptr"),)
_AFFINITY: tuple[Field, ...] = (("clientIP", _CLIENT_IP),)
_PORT: tuple[Field, ...] = (
    ("name", "str"),
    ("protocol", "str"),
    ("appProtocol", "ptr"),
    ("port", "always"),
    ("targetPort", "intorstr"),
    ("nodePort", "int"),
)
_SPEC: tuple[Field, ...] = (
    ("ports", ("list", _PORT)),
    ("selector", "map"),
    ("clusterIP", "str"),
    ("clusterIPs", "list"),
    ("type", "str"),
    ("externalIPs", "list"),
    ("sessionAffinity", "str"),
    ("loadBalancerIP", "str"),
    ("loadBalancerSourceRanges", "list"),
    ("externalName", "str"),
    ("externalTrafficPolicy", "str"),
    ("healthCheckNodePort", "int"),
    ("publishNotReadyAddresses", "bool"),
    ("sessionAffinityConfig", _AFFINITY),
    ("ipFamilies", "list"),
    ("ipFamilyPolicy", "ptr"),
    ("allocateLoadBalancerNodePorts", "ptr"),
    ("loadBalancerClass", "ptr"),
    ("internalTrafficPolicy", "ptr"),
    ("trafficDistribution", "ptr"),
)


def spec_hash(spec: Mapping[str, Any] | None) -> str:
    """The hex SHA-256 of ``spec`` marshalled as Go marshals a ``corev1.ServiceSpec``."""
    return hashlib.sha256(_struct(spec or {}, _SPEC).encode()).hexdigest()


def _struct(value: Mapping[str, Any], fields: tuple[Field, ...]) -> str:
    parts = []
    for name, how in fields:
        present = name in value and value[name] is not None
        item = value.get(name)
        if isinstance(how, tuple) and how[0] == "list":
            if item:
                parts.append(f"{_string(name)}:[{','.join(_struct(i, how[1]) for i in item)}]")
        elif isinstance(how, tuple):
            if isinstance(item, Mapping):
                parts.append(f"{_string(name)}:{_struct(item, how)}")
        elif how == "always":
            parts.append(f"{_string(name)}:{_value(item or 0)}")
        elif how == "intorstr":
            parts.append(f"{_string(name)}:{_value(item if present else 0)}")
        elif how == "ptr":
            if present:
                parts.append(f"{_string(name)}:{_value(item)}")
        elif item:  # omitempty: zero, "", false, empty list or map are left out
            parts.append(f"{_string(name)}:{_value(item)}")
    return "{" + ",".join(parts) + "}"


def _value(value: Any) -> str:
    if isinstance(value, dict):  # Go writes map keys sorted
        return "{" + ",".join(f"{_string(k)}:{_value(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)


_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _string(text: str) -> str:
    """A JSON string as Go writes it: other control characters, HTML characters and
    line separators as ``\\u00XX`` escapes."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char < " " or char in "<>&\u2028\u2029":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
