"""The spec hash of an add-on config (addon-framework's ``utils.GetSpecHash``).

Add-on managers record, per config reference, the sha256 of the config object's
content; agents and deploy works compare them, and an upstream add-on manager reading a
pyocm hub (or the reverse) must get the same value. Upstream drops the top-level
``apiVersion``, ``kind``, ``metadata`` and ``status`` and hashes the rest as Go's
``encoding/json`` writes it: map keys sorted, no whitespace, non-ASCII kept as UTF-8,
``<``, ``>``, ``&``, U+2028 and U+2029 escaped as ``\\u003c``..., and numbers as Go
formats an ``int64`` or ``float64``. The hashed object is the one the API server stores
(CRD defaults included), so the same config gives the same hash on both hubs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

#: Top-level fields that are not the config's content.
_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})
#: What Go's encoder escapes that Python's json (ensure_ascii off) leaves as is.
_GO_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def spec_hash(obj: Mapping[str, Any]) -> str:
    """The lowercase hex sha256 of ``obj``'s content, as upstream computes it."""
    content = {k: v for k, v in obj.items() if k not in _SKIPPED}
    return hashlib.sha256(go_json(content).encode()).hexdigest()


def go_json(value: Any) -> str:
    """``value`` (decoded JSON) encoded as Go's ``json.Marshal`` encodes it."""
    if isinstance(value, Mapping):
        items = sorted(value.items())
        return "{" + ",".join(f"{_string(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, (bool, int)):
        return json.dumps(value)
    if isinstance(value, float):
        return _float(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).translate(_GO_ESCAPES)


def _float(number: float) -> str:
    """Go's float64 encoding: the shortest digits that read back as ``number``, in
    plain notation unless the magnitude is below 1e-6 or at least 1e21, where Go writes
    an exponent of at least one digit (``1e-7``, ``1e+21``)."""
    if math.isnan(number) or math.isinf(number):
        raise ValueError(f"unsupported value: {number}")
    shortest = repr(number)
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        return format(Decimal(shortest), "e")
    plain = format(Decimal(shortest), "f")
    return plain[:-2] if plain.endswith(".0") else plain
