"""The ``open-cluster-management.io/config-spec-hash`` value upstream's server-side apply
writes: the MD5 of ``fmt.Sprintf("%v", obj)`` for the manifest as an
``*unstructured.Unstructured``, that is ``&{map[apiVersion:v1 kind:... metadata:map[...]]}``
with map keys sorted, lists as ``[a b]``, strings bare and ``<nil>`` for null.

Numbers print as Go prints the JSON decoder's values: integers as themselves, other
numbers as float64 with ``%v`` (shortest digits; exponent form below 1e-4 and from 1e6).
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any


def config_spec_hash(obj: dict[str, Any]) -> str:
    """Upstream's hash of a manifest (after its ignored fields were removed)."""
    return hashlib.md5(f"&{{{go_value(obj)}}}".encode(), usedforsecurity=False).hexdigest()


def go_value(value: Any) -> str:
    """``%v`` of a decoded JSON value held in an ``interface{}``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(item) for item in value) + "]"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_float(number: float) -> str:
    """``%v`` of a float64 (``%g`` with the shortest digits): ``%e`` form when the
    exponent is below -4 or at least 6, as strconv decides for the shortest form."""
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "+Inf" if number > 0 else "-Inf"
    if number == 0:
        return "-0" if str(number).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # the decimal point's place in the digits
    lead = "-" if sign else ""
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{lead}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{lead}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{lead}{text}{'0' * (point - len(text))}"
    return f"{lead}{text[:point]}.{text[point:]}"
