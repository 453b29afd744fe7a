"""resource.Quantity parsing, addition and canonical printing."""

from __future__ import annotations

from fractions import Fraction

import pytest

from pyocm.kube import quantity
from pyocm.kube.quantity import Format


@pytest.mark.parametrize(
    ("text", "value", "fmt", "canonical"),
    [
        pytest.param("12", Fraction(12), Format.DECIMAL_SI, "12", id="integer"),
        pytest.param("11700m", Fraction(117, 10), Format.DECIMAL_SI, "11700m", id="milli"),
        pytest.param(
            "17474228Ki", Fraction(17474228 * 1024), Format.BINARY_SI, "17474228Ki", id="kibi"
        ),
        pytest.param("1Gi", Fraction(2**30), Format.BINARY_SI, "1Gi", id="gibi"),
        pytest.param("1024Mi", Fraction(2**30), Format.BINARY_SI, "1Gi", id="binary-reduced"),
        pytest.param(
            "1.5Gi", Fraction(3 * 2**29), Format.BINARY_SI, "1536Mi", id="binary-fraction"
        ),
        pytest.param("1e3", Fraction(1000), Format.DECIMAL_EXPONENT, "1e3", id="exponent"),
        pytest.param(
            "1.5e1", Fraction(15), Format.DECIMAL_EXPONENT, "15", id="exponent-zero-printed-bare"
        ),
        pytest.param(
            "342068531454", Fraction(342068531454), Format.DECIMAL_SI, "342068531454", id="big"
        ),
        pytest.param("1000", Fraction(1000), Format.DECIMAL_SI, "1k", id="thousand-is-k"),
        pytest.param("0.1", Fraction(1, 10), Format.DECIMAL_SI, "100m", id="decimal-fraction"),
        pytest.param("-1500m", Fraction(-3, 2), Format.DECIMAL_SI, "-1500m", id="negative"),
        pytest.param("+5", Fraction(5), Format.DECIMAL_SI, "5", id="plus-sign"),
        pytest.param("0", Fraction(0), Format.DECIMAL_SI, "0", id="zero"),
        pytest.param("000", Fraction(0), Format.DECIMAL_SI, "0", id="zeros"),
        pytest.param("1E", Fraction(10**18), Format.DECIMAL_SI, "1E", id="exa-not-exponent"),
        pytest.param("512Ki", Fraction(512 * 1024), Format.BINARY_SI, "512Ki", id="kibi-kept"),
        pytest.param(
            "0.5Ki", Fraction(512), Format.BINARY_SI, "512", id="binary-below-1024-printed-decimal"
        ),
        pytest.param(
            "0.0000000001", Fraction(1, 10**9), Format.DECIMAL_SI, "1n", id="rounded-up-to-nano"
        ),
        pytest.param("1.", Fraction(1), Format.DECIMAL_SI, "1", id="trailing-dot"),
    ],
)
def test_parse_and_print(text: str, value: Fraction, fmt: Format, canonical: str) -> None:
    parsed = quantity.parse_quantity(text)
    assert parsed.value == value
    assert parsed.format is fmt
    assert str(parsed) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", quantity.FORMAT_WRONG, id="empty"),
        pytest.param("1.5.5", quantity.FORMAT_WRONG, id="two-dots"),
        pytest.param(" 1", quantity.FORMAT_WRONG, id="leading-space"),
        pytest.param("1Gb", quantity.FORMAT_WRONG, id="unknown-letter"),
        pytest.param("1Ki2", quantity.SUFFIX, id="digits-after-binary-suffix"),
        pytest.param("1kk", quantity.SUFFIX, id="double-suffix"),
    ],
)
def test_parse_rejects(text: str, message: str) -> None:
    with pytest.raises(quantity.QuantityError) as caught:
        quantity.parse_quantity(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["12", "11700m"], "23700m", id="cpu-sum-keeps-decimal"),
        pytest.param(["17474228Ki", "371168112Ki"], "388642340Ki", id="memory-sum-keeps-binary"),
        pytest.param(["1Gi", "1Gi"], "2Gi", id="binary-reduced"),
        pytest.param(["1Gi", "500M"], "1573741824", id="first-operand-format-binary-not-exact-ki"),
        pytest.param(["500M", "1Gi"], "1573741824", id="first-operand-decimal"),
        pytest.param(["1k", "1Ki"], "2024", id="decimal-first"),
        pytest.param(["1Ki", "1k"], "2024", id="binary-first-not-multiple"),
        pytest.param(["1Ki", "1024"], "2Ki", id="binary-first-multiple"),
        pytest.param(["0", "1Ki"], "1Ki", id="zero-first-takes-second-format"),
        pytest.param(["110", "342068531454"], "342068531564", id="pods-and-storage"),
        pytest.param([], "0", id="empty"),
    ],
)
def test_sum(values: list[str], expected: str) -> None:
    assert str(quantity.sum_quantities(values)) == expected


def test_sum_accepts_parsed_quantities() -> None:
    total = quantity.sum_quantities([quantity.parse_quantity("1"), "500m"])
    assert total.value == Fraction(3, 2)
    assert str(total) == "1500m"
