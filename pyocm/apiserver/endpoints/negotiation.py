"""Content negotiation: decoding request bodies and choosing the response shape."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from aiohttp import web

from pyocm.apiserver.endpoints import yamlbody
from pyocm.kube import jsonlimits, protobuf, status
from pyocm.kube.protobuf.wire import WireError

#: kube-apiserver refuses bodies over 3 MiB.
MAX_BODY = 3 * 1024 * 1024

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def media_type(header: str | None) -> str:
    if not header:
        return ""
    return header.split(";", 1)[0].strip().lower()


async def read_body(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise status.too_large(MAX_BODY)
    if request.content_length is not None:
        # Length known and within the limit: read it all at once. From the stream, not
        # request.read(), which keeps a copy on the request: aiohttp holds an idle
        # connection's last request until the next one comes.
        return await request.content.read()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(65536):
        size += len(chunk)
        if size > MAX_BODY:
            raise status.too_large(MAX_BODY)
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class Decoded:
    value: Any
    #: ``duplicate field "k"`` (JSON) or ``line N: key "k" already set in map`` (YAML),
    #: found only when asked for (``fieldValidation`` Strict or Warn).
    duplicates: list[str]


def body_types(*, protobuf: bool = True) -> list[str]:
    """The media types a write body may have, in kube-apiserver's order (custom
    resources are not served as protobuf)."""
    return [JSON, YAML, PROTOBUF] if protobuf else [JSON, YAML]


def body_kind(content_type: str | None, *, protobuf: bool = True) -> str:
    """The body's media type, or 415 as kube-apiserver answers: a missing type means
    the first accepted (JSON); anything else must be one of them exactly."""
    kind = media_type(content_type)
    accepted = body_types(protobuf=protobuf)
    if not kind:
        return JSON
    if kind not in accepted:
        raise status.unsupported_media_type(kind, accepted)
    return kind


async def decode(
    raw: bytes, content_type: str | None, *, protobuf: bool = True, duplicates: bool = False
) -> Decoded:
    """Decode a write body. A large body decodes in a worker thread, so that one
    request never holds the event loop (and /readyz, and every other client) for long;
    ordinary bodies stay inline, where they cost nothing extra."""
    kind = body_kind(content_type, protobuf=protobuf)
    if len(raw) <= _INLINE.get(kind, 0):
        return _decode(raw, kind, duplicates)
    return await asyncio.to_thread(_decode, raw, kind, duplicates)


async def decode_apply(raw: bytes, *, duplicates: bool = False) -> Decoded:
    """Server-side apply bodies are YAML (JSON is a subset)."""
    if len(raw) <= _INLINE[YAML]:
        return _decode(raw, YAML, duplicates)
    return await asyncio.to_thread(_decode, raw, YAML, duplicates)


def decode_object(raw: bytes, content_type: str) -> Any:
    """Decode a small body inline (DeleteOptions): JSON, YAML, or Kubernetes protobuf."""
    return _decode(raw, body_kind(content_type), False).value


#: Bodies up to these sizes decode inline (well under a millisecond for orjson; YAML
#: decodes in Python, some 100 times slower).
_INLINE = {JSON: 256 * 1024, PROTOBUF: 64 * 1024, YAML: 4 * 1024}


def _decode(raw: bytes, kind: str, duplicates: bool) -> Decoded:
    if kind == YAML:
        return _yaml(raw, duplicates)
    if kind == PROTOBUF:
        return Decoded(_protobuf(raw), [])
    value = _json(raw)
    _bounded(value, raw=raw, what="JSON")
    return Decoded(value, jsonlimits.duplicate_fields(raw) if duplicates else [])


def _bounded(value: Any, *, raw: bytes | None, what: str) -> None:
    try:
        jsonlimits.check_depth(value, raw=raw)
    except jsonlimits.TooDeep as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as {what}: {err}"
        ) from None


def _protobuf(raw: bytes) -> Any:
    try:
        value = protobuf.decode_body(raw)
    except protobuf.UnsupportedKind as err:
        raise status.bad_request(str(err)) from None
    except WireError as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as protobuf: {err}"
        ) from None
    if len(raw) > _INLINE[PROTOBUF]:
        # Field names make the JSON form larger than the wire form: a large body is
        # measured, so no body decodes to more than the limit on bodies.
        _within_limit(orjson.dumps(value))
    return value


def _within_limit(encoded: bytes) -> None:
    if len(encoded) > MAX_BODY:
        raise status.too_large(MAX_BODY)


def _json(raw: bytes) -> Any:
    if not raw.strip():
        raise status.bad_request("the request body is empty; an object was expected")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as JSON: {err.msg} at offset {err.pos}"
        ) from None


def _yaml(raw: bytes, duplicates: bool) -> Decoded:
    try:
        # Aliases are measured expanded before anything is built: a small document
        # whose aliases repeat a large value is refused as the large body it stands for.
        loaded = yamlbody.load(raw, max_depth=jsonlimits.MAX_DEPTH, max_bytes=MAX_BODY)
    except yamlbody.YamlTooLarge:
        raise status.too_large(MAX_BODY) from None
    except (yaml.YAMLError, yamlbody.YamlLimit, RecursionError) as err:
        raise _not_yaml(err) from None
    value = loaded.value
    if loaded.shared:
        # Aliases decode to shared objects; an alias is a copy in Kubernetes, and the
        # expanded document is held to the same limit as any body.
        try:
            encoded = orjson.dumps(value)
        except orjson.JSONEncodeError as err:  # the analysis bounds depth; a backstop
            raise _not_yaml(err) from None
        _within_limit(encoded)
        value = orjson.loads(encoded)
    return Decoded(value, loaded.duplicates if duplicates else [])


def _not_yaml(err: Exception) -> status.ApiError:
    return status.bad_request(
        f"the body of the request could not be decoded as YAML: {_short(err)}"
    )


def _short(err: Exception) -> str:
    return " ".join(str(err).split())[:300]


@dataclass(frozen=True)
class Accept:
    """What shape of answer the client asked for."""

    partial_metadata: bool = False
    table: bool = False


def parse_accept(header: str | None) -> Accept:
    """Table and PartialObjectMetadata are asked for with ``as=`` parameters; a client
    that asks for them always also accepts plain JSON, so plain JSON is a valid answer."""
    if not header or "as=" not in header:
        return Accept()
    first = header.split(",", 1)[0]
    params = {}
    for part in first.split(";")[1:]:
        if "=" in part:
            key, value = part.split("=", 1)
            params[key.strip()] = value.strip()
    wanted = params.get("as", "")
    return Accept(
        partial_metadata=wanted in ("PartialObjectMetadata", "PartialObjectMetadataList"),
        table=wanted == "Table",
    )
