"""Decoding JSON with the errors Go's ``encoding/json`` gives.

The add-on manager reports a template that does not render to JSON, and a cluster's
image-registries annotation that is not JSON, with the decoder's own message (``unexpected
end of JSON input``, ``invalid character '}' after object key``), which ends up in the
ManagedClusterAddOn's conditions; so the same input has to give the same words here.
Python's decoder finds the same first error at the same place; only its wording differs,
and the context Go names (object key, array element...) is read from where the error is.
"""

from __future__ import annotations

import json
from typing import Any

END = "unexpected end of JSON input"
#: Python's message (its start) -> Go's context, for an error at a character.
_CONTEXTS = {
    "Expecting value": "looking for beginning of value",
    "Expecting ':' delimiter": "after object key",
    "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
    "Extra data": "after top-level value",
    "Invalid control character": "in string literal",
    "Invalid \\escape": "in string escape code",
    "Invalid \\uXXXX escape": "in \\u hexadecimal character escape",
}
_SIMPLE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class GoJSONError(ValueError):
    """The text is not JSON; ``str()`` is Go's ``SyntaxError`` message."""


def loads(text: str) -> Any:
    """``text`` decoded; :class:`GoJSONError` with Go's message when it is not JSON
    (Go knows no ``NaN`` or ``Infinity``, which Python would accept)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _ConstantError as exc:
        raise GoJSONError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise GoJSONError(_message(exc)) from None


def type_name(value: Any) -> str:
    """The JSON type name Go's ``UnmarshalTypeError`` uses for a decoded value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


class _ConstantError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    if name.startswith("-"):
        raise _ConstantError(f"invalid character {quote_char(name[1])} in numeric literal")
    raise _ConstantError(f"invalid character {quote_char(name[0])} looking for beginning of value")


def _message(exc: json.JSONDecodeError) -> str:
    text, pos, msg = exc.doc, exc.pos, exc.msg
    if msg.startswith("Illegal trailing comma"):
        # Go reports the closing bracket the comma is followed by.
        pos = _skip_space(text, pos + 1)
        context = "looking for beginning of " + (
            "object key string" if "object" in msg else "value"
        )
    elif msg.startswith("Unterminated string"):
        return END
    elif msg == "Expecting ',' delimiter":
        context = (
            "after object key:value pair" if _inside(text, pos) == "{" else "after array element"
        )
    else:
        context = next((go for py, go in _CONTEXTS.items() if msg.startswith(py)), msg)
        if msg.startswith("Invalid \\escape"):
            pos += 1  # Python points at the backslash, Go at the character after it
        elif msg.startswith("Invalid \\uXXXX"):
            pos = next((i for i in range(pos + 2, pos + 6) if not _is_hex(text, i)), pos)
    if pos >= len(text):
        return END
    return f"invalid character {quote_char(text[pos])} {context}"


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _is_hex(text: str, pos: int) -> bool:
    return pos < len(text) and text[pos] in "0123456789abcdefABCDEF"


def _inside(text: str, pos: int) -> str:
    """The innermost open bracket at ``pos`` (``{`` or ``[``), strings skipped."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:pos]:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def quote_char(char: str) -> str:
    """Go's ``quoteChar``: the byte in single quotes, escaped as ``strconv.Quote`` does
    (a non-ASCII character is reported by its first UTF-8 byte, as Go's scanner does)."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    byte = char.encode()[0]
    if char == "\\":
        shown = "\\\\"
    elif char in _SIMPLE_ESCAPES:
        shown = _SIMPLE_ESCAPES[char]
    elif char == "\v":
        shown = "\\v"
    elif byte < 0x20 or byte == 0x7F:
        shown = f"\\x{byte:02x}"
    elif 0x80 <= byte < 0xA0 or byte == 0xAD:
        shown = f"\\u{byte:04x}"
    else:
        shown = chr(byte)
    return f"'{shown}'"
