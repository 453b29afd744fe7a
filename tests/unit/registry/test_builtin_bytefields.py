"""Base64 byte fields decoded with Go's rules and error offsets."""

from __future__ import annotations

import pytest

from pyocm.apiserver.registry.builtin import bytefields
from pyocm.kube.status import ApiError


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        pytest.param("aGVsbG8=", None, id="valid"),
        pytest.param("", None, id="empty"),
        pytest.param("aGVs\nbG8=\n", None, id="newlines-skipped"),
        pytest.param("aGVsbA==", None, id="double-padding"),
        pytest.param("aGV*bG8=", 3, id="bad-character"),
        pytest.param("abc", 0, id="missing-padding"),
        pytest.param("abcde", 4, id="dangling-symbol"),
        pytest.param("ab=", 3, id="half-padding"),
        pytest.param("ab=x", 2, id="bad-second-pad"),
        pytest.param("a===", 1, id="early-padding"),
        pytest.param("abc=abcd", 4, id="data-after-padding"),
    ],
)
def test_first_error_matches_go(text: str, offset: int | None) -> None:
    assert bytefields.first_error(text) == offset


def test_decode_and_errors() -> None:
    assert bytefields.decode("aGVsbG8=", kind="Secret") == b"hello"
    assert bytefields.decode(None, kind="Secret") == b""
    assert bytefields.decode("aGVs\r\nbG8=", kind="Secret") == b"hello"
    with pytest.raises(ApiError) as bad:
        bytefields.decode("aGV\n!G8=", kind="Secret")
    assert bad.value.message.endswith("illegal base64 data at input byte 4")
    with pytest.raises(ApiError) as non_ascii:
        bytefields.decode("aGé=", kind="Secret")
    assert non_ascii.value.message.endswith("illegal base64 data at input byte 2")
    assert bytefields.first_error("aGé=") == 2
    with pytest.raises(ApiError) as caught:
        bytefields.decode(12, kind="Secret")
    assert (
        caught.value.message
        == 'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go value of type []uint8'
    )


def test_canonicalize_map_rewrites_values() -> None:
    holder = {"data": {"a": "aGVs\r\nbG8=", "b": None}}
    bytefields.canonicalize_map(holder, "data", kind="Secret")
    assert holder == {"data": {"a": "aGVsbG8=", "b": None}}


def test_go_bytes_rendering() -> None:
    assert bytefields.go_bytes(b"\n-\xff") == "[]byte{0xa, 0x2d, 0xff}"
