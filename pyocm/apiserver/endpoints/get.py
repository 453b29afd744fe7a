"""GET of one object and of collections."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from pyocm.apiserver.endpoints import options, responses
from pyocm.apiserver.state import ServerState

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target


async def serve_get(request: web.Request, state: ServerState, target: Target) -> web.Response:
    obj = await state.store.get(target.info, namespace=target.namespace, name=target.name)
    target.check_label_scope(obj)
    return responses.json_response(responses.Shape.of(request, target.info).object(obj))


async def serve_list(request: web.Request, state: ServerState, target: Target) -> web.Response:
    query = options.list_options(request.query, target.info, required_labels=target.label_scope)
    revision, items = await state.store.list(
        target.info, namespace=target.namespace, labels=query.labels, fields=query.fields
    )
    if query.min_revision and query.min_revision > revision:
        await options.wait_for_revision(state, target.info, query.min_revision)
        revision, items = await state.store.list(
            target.info, namespace=target.namespace, labels=query.labels, fields=query.fields
        )
    body = responses.Shape.of(request, target.info).list(
        kind=target.info.kind,
        api_version=target.info.group_version,
        revision=revision,
        items=items,
    )
    return responses.json_response(body)
