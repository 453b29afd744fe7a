"""Reading the object a write sends, with the checks every write shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import CIMultiDict

from pyocm.apiserver.endpoints import negotiation
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.registry.resources import ResourceInfo

Obj = dict[str, Any]


async def read_object(
    request: web.Request,
    info: ResourceInfo,
    *,
    kind: str = "",
    group_version: str = "",
    warnings: list[str] | None = None,
) -> Obj:
    """The body as an object of ``info``'s kind (or the given kind for subresources
    with their own kind). Missing apiVersion/kind are filled in; wrong ones are refused.
    Duplicate keys go to ``warnings`` (the write's field validation decides what they
    become) when given and the request asked for field validation."""
    content_type = request.headers.get("Content-Type")
    # Custom resources have no protobuf form (their objects are not Go structs).
    protobuf = info.strategy.decodes_into_struct
    # Refuse an unknown media type before reading what may be megabytes.
    negotiation.body_kind(content_type, protobuf=protobuf)
    raw = await negotiation.read_body(request)
    decoded = await negotiation.decode(
        raw,
        content_type,
        protobuf=protobuf,
        duplicates=warnings is not None and wants_duplicates(request),
    )
    if warnings is not None:
        warnings.extend(decoded.duplicates)
    return check_object(
        decoded.value, kind=kind or info.kind, group_version=group_version or info.group_version
    )


def wants_duplicates(request: web.Request) -> bool:
    """Duplicate keys are looked for when the client asked for Strict or Warn: the
    fleet's agents do not ask, and their Lease and status writes are spared the scan
    (kube-apiserver's default, Warn, would scan them too)."""
    return request.query.get("fieldValidation") in ("Strict", "Warn")


def check_object(obj: Any, *, kind: str, group_version: str) -> Obj:
    if not isinstance(obj, dict):
        raise status.bad_request(
            f"the body of the request must be a JSON object of kind {kind}, got {type(obj).__name__}"
        )
    body_version = obj.get("apiVersion")
    body_kind = obj.get("kind")
    if body_version and body_version != group_version:
        raise status.bad_request(
            f"the API version in the data ({body_version}) does not match the expected API version ({group_version})"
        )
    if body_kind and body_kind != kind:
        raise status.bad_request(
            f"the kind in the data ({body_kind}) does not match the expected kind ({kind})"
        )
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise status.bad_request("metadata: the value must be an object")
    obj["apiVersion"] = group_version
    obj["kind"] = kind
    obj.setdefault("metadata", {})
    return obj


def warning_headers(ctx: Context) -> CIMultiDict[str] | None:
    """Unknown fields found with ``fieldValidation=Strict`` are an error; with ``Warn``
    each comes back as its own ``Warning: 299 - "<text>"`` header (text escaped as an
    HTTP quoted-string, as kube-apiserver writes it); ``Ignore`` drops them silently.
    Admission webhooks' warnings come back the same way, whatever the field validation."""
    texts = [*(ctx.warnings if ctx.field_validation == "Warn" else ()), *ctx.admission_warnings]
    if not texts:
        return None
    headers: CIMultiDict[str] = CIMultiDict()
    for text in texts:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        headers.add("Warning", f'299 - "{escaped}"')
    return headers
