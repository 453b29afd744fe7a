"""``[]byte`` fields: base64 text in JSON, decoded the way Go's ``encoding/json`` does.

Secret ``data``, ConfigMap ``binaryData`` and the CSR's ``spec.request`` and
``status.certificate`` are byte slices. A real server rejects bad base64 while decoding the
body, before any strategy runs, with a 400 naming the first bad input byte; these helpers
reproduce that check (newlines are skipped, padding is required, trailing data after
padding is an error) and the size and ``%#v`` rendering validation messages rely on.
"""

from __future__ import annotations

import base64
import string
from typing import Any

from pyocm.kube import status

_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/")
_NEWLINES = "\r\n"


def first_error(text: str) -> int | None:
    """Offset Go reports as ``illegal base64 data at input byte N``, or None if valid."""
    try:  # the usual case, valid input, checked at C speed
        base64.b64decode(_compact(text), validate=True)
        return None
    except ValueError:  # binascii.Error, or a non-ASCII character
        return _scan(text)


def _compact(text: str) -> str:
    return text.replace("\r", "").replace("\n", "")


def _scan(text: str) -> int | None:
    index = 0
    while index < len(text):
        index, error = _quantum(text, index)
        if error is not None:
            return error
    return None


def _quantum(text: str, index: int) -> tuple[int, int | None]:
    """Read one 4-character group from ``index``: (next index, error offset or None)."""
    filled = 0
    while filled < 4:
        if index == len(text):
            return index, (None if filled == 0 else index - filled)
        char = text[index]
        index += 1
        if char in _ALPHABET:
            filled += 1
        elif char in _NEWLINES:
            continue
        elif char != "=" or filled < 2:
            return index, index - 1
        else:
            return _padding(text, index, filled)
    return index, None


def _padding(text: str, index: int, filled: int) -> tuple[int, int | None]:
    """After the first ``=``: a second one is due when only two symbols came, then the
    input must end (newlines aside)."""
    if filled == 2:
        index = _skip_newlines(text, index)
        if index == len(text):
            return index, len(text)
        if text[index] != "=":
            return index, index - 1
        index += 1
    index = _skip_newlines(text, index)
    return len(text), (index if index < len(text) else None)


def _skip_newlines(text: str, index: int) -> int:
    while index < len(text) and text[index] in _NEWLINES:
        index += 1
    return index


def decode(value: object, *, kind: str, version: str = "v1") -> bytes:
    """The bytes of a base64 JSON value; a 400 like the real decoder's when it is not.
    JSON null is an empty (nil) slice."""
    if value is None:
        return b""
    if not isinstance(value, str):
        raise status.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: '
            f"json: cannot unmarshal {_json_type(value)} into Go value of type []uint8"
        )
    compact = _compact(value)
    try:  # valid input decoded once, at C speed: CSRs and certificates pass here per write
        return base64.b64decode(compact, validate=True)
    except ValueError:  # binascii.Error, or a non-ASCII character
        offset = _scan(value)
    if offset is not None:
        raise status.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: '
            f"illegal base64 data at input byte {offset}"
        )
    return base64.b64decode(compact)


def decode_map(values: object, *, kind: str) -> dict[str, bytes]:
    """Decode every value of a ``map[string][]byte`` field (absent or null is empty)."""
    if not isinstance(values, dict):
        return {}
    return {key: decode(value, kind=kind) for key, value in values.items()}


def canonicalize(holder: dict[str, Any], key: str, *, kind: str) -> None:
    """Re-encode ``holder[key]`` the way the server writes bytes back (no line breaks),
    so equal bytes always compare equal; raises the decoder's 400 on bad input."""
    value = holder.get(key)
    if value is not None:
        holder[key] = base64.b64encode(decode(value, kind=kind)).decode()


def canonicalize_map(holder: dict[str, Any], key: str, *, kind: str) -> None:
    """:func:`canonicalize` every value of the ``map[string][]byte`` at ``holder[key]``."""
    values = holder.get(key)
    if isinstance(values, dict):
        for name in values:
            canonicalize(values, name, kind=kind)


def go_bytes(data: bytes) -> str:
    """``%#v`` of a Go byte slice, the form validation messages quote bad bytes in."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"
