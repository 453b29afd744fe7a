"""Exact ``resource.Quantity`` arithmetic: parse, add, and print the canonical form.

A quantity is a decimal number with a suffix from one of three families: binary SI
(``Ki`` … ``Ei``), decimal SI (``n u m "" k M G T P E``) or a decimal exponent (``e3``).
Values are held as exact fractions, rounded up to nano units on parse as apimachinery
does. The printed form follows ``Quantity.String()``: a sum keeps the family of its first
non-zero operand, is reduced to the largest suffix that keeps it exact, and falls back to
decimal SI when a binary value is below 1024 or fractional.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {p // 10: s for s, p in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)
# apimachinery caps binary quantities at the int64 maximum on parse.
_MAX_BINARY = Fraction(2**63 - 1)
# Far beyond any real quantity; bounds the work an absurd exponent could cause.
_MAX_EXPONENT = 1000

FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
NUMERIC = "unable to parse quantity's numeric part"
SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """Text that is not a quantity; the message is apimachinery's."""


class Format(Enum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


@dataclass(frozen=True)
class Quantity:
    """An exact amount and the suffix family it is printed in."""

    value: Fraction
    format: Format = Format.DECIMAL_SI

    def __add__(self, other: Quantity) -> Quantity:
        # Quantity.Add keeps the receiver's format unless the receiver is zero.
        fmt = self.format if self.value != 0 else other.format
        return Quantity(self.value + other.value, fmt)

    def __str__(self) -> str:
        if self.value == 0:
            return "0"
        fmt = self.format
        if fmt is Format.BINARY_SI and (abs(self.value) < 1024 or self.value.denominator != 1):
            fmt = Format.DECIMAL_SI  # printing in Ki would round or confuse
        if fmt is Format.BINARY_SI:
            return _binary_text(int(self.value))
        return _decimal_text(self.value, fmt)


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` as ``resource.ParseQuantity`` does; raises :class:`QuantityError`."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    magnitude = Fraction(int(num + denom), 10 ** len(denom)) * Fraction(base) ** exponent
    magnitude = _round_up_to_nano(magnitude)
    if fmt is Format.BINARY_SI:
        magnitude = min(magnitude, _MAX_BINARY)
        if 0 < magnitude < 1:
            fmt = Format.DECIMAL_SI
    return Quantity(magnitude if positive else -magnitude, fmt)


def sum_quantities(values: Iterable[str | Quantity]) -> Quantity:
    """The sum of ``values`` in order, formatted like repeated ``Quantity.Add``."""
    total = Quantity(Fraction(0))
    for value in values:
        total = total + (parse_quantity(value) if isinstance(value, str) else value)
    return total


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Split into sign, integer digits, fraction digits and suffix, as parseQuantityString."""
    pos, end = 0, len(text)
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    pos = _skip(text, pos, _DIGITS)
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        start = pos + 1
        pos = _skip(text, start, _DIGITS)
        denom = text[start:pos]
    suffix_start = pos
    pos = _skip(text, pos, _SUFFIX_CHARS)
    if pos < end and text[pos] in "+-":
        pos += 1
    if _skip(text, pos, _DIGITS) != end:
        raise QuantityError(FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _skip(text: str, pos: int, allowed: frozenset[str]) -> int:
    while pos < len(text) and text[pos] in allowed:
        pos += 1
    return pos


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """(base, exponent, format) for a suffix, in apimachinery's lookup order."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            exponent = int(suffix[1:])
        except ValueError:
            raise QuantityError(SUFFIX) from None
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(NUMERIC)
        return 10, exponent, Format.DECIMAL_EXPONENT
    raise QuantityError(SUFFIX)


def _round_up_to_nano(magnitude: Fraction) -> Fraction:
    """Nano is the finest unit a Quantity holds; finer values round away from zero."""
    nanos = magnitude / _NANO
    whole = -(-nanos.numerator // nanos.denominator)
    return whole * _NANO


def _decimal_text(value: Fraction, fmt: Format) -> str:
    """Mantissa and suffix with the exponent lowered to a multiple of three."""
    mantissa, exponent = int(value / _NANO), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent > 18:
        mantissa, exponent = mantissa * 10 ** (exponent - 18), 18  # E is the largest suffix
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


def _binary_text(value: int) -> str:
    amount, power = value, 0
    while abs(amount) >= 1024 and amount % 1024 == 0 and power < 6:
        amount //= 1024
        power += 1
    return f"{amount}{_BINARY_BY_POWER.get(power, '')}"
