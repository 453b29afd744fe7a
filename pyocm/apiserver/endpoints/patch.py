"""PATCH with JSON merge patch, JSON patch, strategic merge patch (built-in kinds), or a
server-side apply (apply.py).

The patch is applied to the current object inside the store's guaranteed update, so a
concurrent writer makes it re-apply to the new state instead of failing, unless the
patch itself pins ``metadata.resourceVersion`` or ``metadata.uid``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.endpoints import apply, body, negotiation, options, responses
from pyocm.apiserver.state import ServerState
from pyocm.kube import jsonlimits, patches, smp, status

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

Obj = dict[str, Any]


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    content_type = negotiation.media_type(request.headers.get("Content-Type"))
    info = target.info
    schema = smp.schema_for(info.group_version, info.kind)
    # The media type is checked first, as kube-apiserver does.
    accepted = _patch_types(schema)
    if content_type not in accepted:
        raise status.unsupported_media_type(content_type, accepted)
    if content_type == negotiation.APPLY_PATCH:
        return await apply.serve(request, state, target)
    if "force" in request.query:
        raise status.ApiError(
            code=422,
            reason="Invalid",
            message="force: Forbidden: may not be specified for non-apply patch",
        )
    raw = await negotiation.read_body(request)
    opts = options.write_options(request.query)
    ctx = target.context(
        dry_run=opts.dry_run,
        field_validation=opts.field_validation,
        field_manager=options.manager_name(opts.field_manager, request.headers.get("User-Agent")),
    )
    decoded = await negotiation.decode(
        raw, negotiation.JSON, duplicates=body.wants_duplicates(request)
    )
    # kube-apiserver reports a patch's duplicate keys as strict decoding errors too.
    ctx.warnings.extend(decoded.duplicates)
    document = decoded.value

    def mutate(current: Obj) -> Obj:
        patched = _apply(content_type, current, document, schema)
        return body.check_object(patched, kind=info.kind, group_version=info.group_version)

    stored = await state.store.guaranteed_update(info, name=target.name, ctx=ctx, mutate=mutate)
    return responses.json_response(stored, headers=body.warning_headers(ctx))


def _patch_types(schema: smp.Schema | None) -> list[str]:
    """kube-apiserver's list and order; strategic merge patch for built-in kinds only."""
    if schema is None:
        return [negotiation.JSON_PATCH, negotiation.MERGE_PATCH, negotiation.APPLY_PATCH]
    return [
        negotiation.JSON_PATCH,
        negotiation.MERGE_PATCH,
        negotiation.STRATEGIC_PATCH,
        negotiation.APPLY_PATCH,
    ]


def _apply(content_type: str, current: Obj, document: Any, schema: smp.Schema | None) -> Any:
    try:
        if content_type == negotiation.JSON_PATCH:
            if not isinstance(document, list):
                raise status.bad_request("a JSON patch must be a list of operations")
            patched = patches.json_patch(current, document)
            # Only a JSON patch can nest deeper than both the object and the patch.
            jsonlimits.check_depth(patched)
            return patched
        if not isinstance(document, dict):
            raise status.bad_request("a merge patch must be a JSON object")
        if content_type == negotiation.MERGE_PATCH:
            return patches.merge_patch(current, document)
        assert schema is not None
        return smp.strategic_merge(current, document, schema=schema)
    except patches.PatchError as err:
        raise _patch_error(err.code, str(err)) from None
    except ValueError as err:
        raise _patch_error(422, str(err)) from None


def _patch_error(code: int, message: str) -> status.ApiError:
    """A patch that cannot apply is the client's error: 400 or 413 where kube-apiserver
    says so, else 422, including where apimachinery lets a strategic merge error through
    as a 500 (a server error would blame the hub for a bad patch)."""
    if code in (400, 413):
        reason = "BadRequest" if code == 400 else "RequestEntityTooLarge"
        return status.ApiError(code=code, reason=reason, message=message)
    return status.ApiError(code=422, reason="Invalid", message=message)
