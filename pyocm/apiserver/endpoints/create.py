"""POST: create an object."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from pyocm.apiserver.endpoints import body, options, responses
from pyocm.apiserver.state import ServerState

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    opts = options.write_options(request.query)
    ctx = target.context(
        dry_run=opts.dry_run,
        field_validation=opts.field_validation,
        field_manager=options.manager_name(opts.field_manager, request.headers.get("User-Agent")),
    )
    obj = await body.read_object(request, target.info, warnings=ctx.warnings)
    created = await state.store.create(target.info, obj, ctx)
    return responses.json_response(created, code=201, headers=body.warning_headers(ctx))
