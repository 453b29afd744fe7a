"""The protobuf wire format, read: varints and length-delimited fields.

Only decoding is needed (clients send protobuf; the server answers JSON). Every
malformed input raises :class:`WireError` naming the offset, never anything else.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5


class WireError(ValueError):
    """The bytes are not a valid protobuf message."""


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    wire_type: int
    #: An int for VARINT/FIXED32/FIXED64, the payload for LENGTH.
    value: int | bytes


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError(f"truncated varint at offset {pos}")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError(f"varint longer than 10 bytes at offset {pos}")


def fields(data: bytes) -> Iterator[Field]:
    """The fields of one message, in the order they were written."""
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = read_varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise WireError(f"field number 0 at offset {start}")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            yield Field(number, wire_type, value)
        elif wire_type == LENGTH:
            size, pos = read_varint(data, pos)
            if pos + size > len(data):
                raise WireError(f"field {number} at offset {start} runs past the end")
            yield Field(number, wire_type, data[pos : pos + size])
            pos += size
        elif wire_type in (FIXED32, FIXED64):
            width = 4 if wire_type == FIXED32 else 8
            if pos + width > len(data):
                raise WireError(f"field {number} at offset {start} runs past the end")
            yield Field(number, wire_type, int.from_bytes(data[pos : pos + width], "little"))
            pos += width
        else:
            raise WireError(f"unsupported wire type {wire_type} at offset {start}")


def signed(value: int) -> int:
    """An int32/int64 varint as the signed number it encodes (negatives use 10 bytes)."""
    return value - (1 << 64) if value >= 1 << 63 else value
