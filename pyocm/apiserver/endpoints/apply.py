"""Server-side apply: ``PATCH`` with ``application/apply-patch+yaml``.

The body is the manager's whole intent for the object; serversideapply.py merges it
and keeps ``managedFields``. Applying to a missing object creates it (201). Conflicts
with other managers answer 409 naming each field and manager, unless ``force=true``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.endpoints import body, negotiation, options, responses
from pyocm.apiserver.endpoints.requestinfo import truthy
from pyocm.apiserver.registry.store import structure_of
from pyocm.apiserver.state import ServerState
from pyocm.kube import serversideapply, status, timefmt

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

Obj = dict[str, Any]


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    info = target.info
    manager = request.query.get("fieldManager", "")
    if not manager:
        raise status.ApiError(
            code=422,
            reason="Invalid",
            message="fieldManager: Required value: is required for apply patch",
        )
    decoded = await negotiation.decode_apply(
        await negotiation.read_body(request), duplicates=body.wants_duplicates(request)
    )
    config = decoded.value
    if not isinstance(config, dict):
        raise status.bad_request("an apply patch must be an object (the applied configuration)")
    body.check_object(config, kind=info.kind, group_version=info.group_version)
    named = (config.get("metadata") or {}).get("name")
    if named != target.name:
        raise status.bad_request(
            f"the name of the object ({named}) does not match the name on the URL ({target.name})"
        )
    opts = options.write_options(request.query)
    ctx = target.context(
        dry_run=opts.dry_run,
        field_validation=opts.field_validation,
        field_manager=manager,
        applied=True,
    )
    ctx.warnings.extend(decoded.duplicates)
    force = truthy(request.query.get("force", "false"))

    def applied(current: Obj | None) -> Obj:
        try:
            return serversideapply.apply(
                current,
                config,
                manager=manager,
                force=force,
                structure=structure_of(info),
                api_version=info.group_version,
                now=timefmt.now_rfc3339(),
                subresource=ctx.subresource,
            )
        except serversideapply.ConflictError as err:
            raise _conflict(err) from None

    try:
        stored = await state.store.guaranteed_update(
            info, name=target.name, ctx=ctx, mutate=applied
        )
    except status.ApiError as err:
        if err.code != 404 or ctx.subresource:
            raise
        created = applied(None)
        if info.namespaced:
            created.setdefault("metadata", {})["namespace"] = ctx.namespace
        stored = await state.store.create(info, created, ctx)
        return responses.json_response(stored, code=201, headers=body.warning_headers(ctx))
    return responses.json_response(stored, headers=body.warning_headers(ctx))


def _conflict(err: serversideapply.ConflictError) -> status.ApiError:
    return status.ApiError(
        code=409,
        reason="Conflict",
        message=str(err),
        details={
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": f'conflict with "{c.manager}" using {c.api_version}',
                    "field": c.field(),
                }
                for c in err.conflicts
            ]
        },
    )
