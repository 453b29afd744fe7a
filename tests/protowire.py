"""A tiny protobuf encoder for tests: each helper returns one encoded field, numbered by
hand from the Kubernetes field tables, so tests never reuse the decoder's own tables."""

from __future__ import annotations


def varint_bytes(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint_bytes(number << 3 | wire_type)


def v(number: int, value: int) -> bytes:
    return tag(number, 0) + varint_bytes(value)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint_bytes(len(payload)) + payload


def s(number: int, text: str) -> bytes:
    return ld(number, text.encode())


def m(number: int, *parts: bytes) -> bytes:
    return ld(number, b"".join(parts))


def entry(number: int, key: str, value: bytes) -> bytes:
    """A map entry: {1: key, 2: value} (value already encoded as field 2)."""
    return m(number, s(1, key), value)


def time(number: int, seconds: int, nanos: int = 0) -> bytes:
    return m(number, v(1, seconds), v(2, nanos))


def body(api_version: str, kind: str, *parts: bytes) -> bytes:
    type_meta = m(1, s(1, api_version), s(2, kind))
    return b"k8s\x00" + type_meta + ld(2, b"".join(parts)) + s(3, "") + s(4, "")
