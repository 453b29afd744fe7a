"""GET of one object and of collections."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from pyocm.apiserver.endpoints import options, pagination, responses
from pyocm.apiserver.registry.store import pinned_name
from pyocm.apiserver.state import ServerState
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target


async def serve_get(request: web.Request, state: ServerState, target: Target) -> web.Response:
    obj = await state.store.get(target.info, namespace=target.namespace, name=target.name)
    target.check_label_scope(obj)
    return responses.json_response(responses.Shape.of(request, target.info).object(obj))


async def serve_list(request: web.Request, state: ServerState, target: Target) -> web.Response:
    query = options.list_options(request.query, target.info, required_labels=target.label_scope)
    page = pagination.page_request(request.query)
    exact = query.resource_version_match == "Exact" and query.min_revision
    revision = page.revision or (query.min_revision if exact else 0)
    if (
        not page.revision
        and not exact
        and query.min_revision > state.store.backend.current_revision()
    ):
        await options.wait_for_revision(state, target.info, query.min_revision)
    try:
        found = await state.store.list_page(
            target.info,
            namespace=target.namespace,
            labels=query.labels,
            fields=query.fields,
            revision=revision,
            after=page.after,
            limit=page.limit,
            name=pinned_name(target.info, target.namespace, query.fields),
        )
    except status.ApiError as err:
        if page.revision and err.code == 410:
            raise status.gone(pagination.EXPIRED) from None
        raise
    metadata = pagination.list_metadata(found, selected=bool(query.labels or query.fields))
    body = responses.Shape.of(request, target.info).list(
        kind=target.info.kind,
        api_version=target.info.group_version,
        metadata=metadata,
        items=found.items,
    )
    return responses.json_response(body)
