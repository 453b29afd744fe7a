"""Content negotiation: decoding request bodies and choosing the response shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from aiohttp import web

from pyocm.kube import protobuf, status
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

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def decode_object(raw: bytes, content_type: str) -> Any:
    """Decode a create/update/delete body: JSON by default, YAML, or Kubernetes protobuf."""
    kind = media_type(content_type)
    if kind in ("", JSON, "*/*", "text/plain"):
        return _json(raw)
    if kind in (YAML, "application/x-yaml", "text/yaml"):
        return _yaml(raw)
    if kind == PROTOBUF:
        return _protobuf(raw)
    raise status.unsupported_media_type(kind, [JSON, YAML, PROTOBUF])


def _protobuf(raw: bytes) -> Any:
    try:
        return protobuf.decode_body(raw)
    except protobuf.UnsupportedKind as err:
        raise status.bad_request(str(err)) from None
    except WireError as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as protobuf: {err}"
        ) from None


def _json(raw: bytes) -> Any:
    if not raw.strip():
        raise status.bad_request("the request body is empty; an object was expected")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as JSON: {err.msg} at offset {err.pos}"
        ) from None


def _yaml(raw: bytes) -> Any:
    try:
        return yaml.load(raw, Loader=_YAML_LOADER)
    except yaml.YAMLError as err:
        raise status.bad_request(
            f"the body of the request could not be decoded as YAML: {_short(err)}"
        ) from None


def decode_apply(raw: bytes) -> Any:
    """Server-side apply bodies are YAML (JSON is a subset)."""
    return _yaml(raw)


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
