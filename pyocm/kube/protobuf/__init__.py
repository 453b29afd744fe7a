"""Kubernetes protobuf request bodies, decoded to the JSON objects the rest of the server
handles (client-go 1.32+ typed clients send nothing else for built-in kinds).

A body is the magic ``k8s\\0`` and a ``runtime.Unknown`` envelope: its ``typeMeta``
names the kind, ``raw`` holds the message. :func:`decode_body` answers the object with
``apiVersion`` and ``kind`` set, exactly as the JSON body would have been.
"""

from __future__ import annotations

from typing import Any

from pyocm.kube.protobuf.messages import BY_KIND, DELETE_OPTIONS
from pyocm.kube.protobuf.schema import decode
from pyocm.kube.protobuf.wire import WireError, fields

MAGIC = b"k8s\x00"


class UnsupportedKind(ValueError):
    """A well-formed body of a kind whose protobuf form the server does not read."""


def decode_body(raw: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf body; WireError if it is malformed, UnsupportedKind if
    its kind has no table here."""
    if not raw.startswith(MAGIC):
        raise WireError("the body does not start with the Kubernetes protobuf prefix k8s\\0")
    api_version = kind = encoding = ""
    payload = b""
    for item in fields(raw[len(MAGIC) :]):
        if item.number == 1 and isinstance(item.value, bytes):
            for meta in fields(item.value):
                if meta.number == 1 and isinstance(meta.value, bytes):
                    api_version = meta.value.decode(errors="replace")
                elif meta.number == 2 and isinstance(meta.value, bytes):
                    kind = meta.value.decode(errors="replace")
        elif item.number == 2 and isinstance(item.value, bytes):
            payload = item.value
        elif item.number == 3 and isinstance(item.value, bytes):
            encoding = item.value.decode(errors="replace")
    if encoding:
        raise WireError(f"content encoding {encoding!r} is not supported")
    if not kind:
        raise WireError("the envelope names no kind (typeMeta.kind is empty)")
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    message = DELETE_OPTIONS if kind == "DeleteOptions" else BY_KIND.get((group, kind))
    if message is None:
        raise UnsupportedKind(
            f"protobuf bodies of {api_version} {kind} are not supported; send JSON"
        )
    return {"apiVersion": api_version, "kind": kind, **decode(message, payload)}
