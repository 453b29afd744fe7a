"""DELETE of one object or of a collection."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.endpoints import negotiation, options, responses
from pyocm.apiserver.endpoints.body import warning_headers
from pyocm.apiserver.endpoints.requestinfo import truthy
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.state import ServerState
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

_POLICIES = ("Orphan", "Background", "Foreground")


async def delete_options(request: web.Request) -> DeleteOptions:
    """DeleteOptions from the body (JSON or YAML) and the query; the query wins, as in
    kube-apiserver, when both carry a value."""
    raw = await negotiation.read_body(request)
    body: dict[str, Any] = {}
    if raw.strip():
        decoded = negotiation.decode_object(raw, request.headers.get("Content-Type", ""))
        if not isinstance(decoded, dict):
            raise status.bad_request("the body of a delete request must be a DeleteOptions object")
        body = decoded
    query = request.query
    policy = query.get("propagationPolicy") or body.get("propagationPolicy") or ""
    if policy and policy not in _POLICIES:
        raise status.bad_request(
            f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan"'
        )
    orphan: bool | None = None
    if "orphanDependents" in query:
        orphan = truthy(query["orphanDependents"])
    elif isinstance(body.get("orphanDependents"), bool):
        orphan = body["orphanDependents"]
    if orphan is not None and policy:
        raise status.bad_request("orphanDependents and propagationPolicy cannot both be set")
    pre = body.get("preconditions") or {}
    if not isinstance(pre, dict):
        raise status.bad_request("preconditions: must be an object")
    opts = options.write_options(query, body)
    return DeleteOptions(
        uid=str(pre.get("uid") or ""),
        resource_version=str(pre.get("resourceVersion") or ""),
        propagation_policy=policy,
        orphan_dependents=orphan,
        dry_run=opts.dry_run,
    )


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    opts = await delete_options(request)
    ctx = target.context(dry_run=opts.dry_run)
    result = await state.store.delete(target.info, name=target.name, ctx=ctx, options=opts)
    code = 202 if not result.deleted and opts.orphan_dependents is False else 200
    return responses.json_response(result.obj, code=code, headers=warning_headers(ctx))


async def serve_collection(
    request: web.Request, state: ServerState, target: Target
) -> web.Response:
    opts = await delete_options(request)
    query = options.list_options(request.query, target.info)
    ctx = target.context(dry_run=opts.dry_run)
    _, items = await state.store.list(
        target.info, namespace=target.namespace, labels=query.labels, fields=query.fields
    )
    deleted = []
    for item in items:
        meta = item["metadata"]
        item_ctx = (
            dataclasses.replace(ctx, namespace=meta.get("namespace", ""))
            if target.info.namespaced
            else ctx
        )
        try:
            result = await state.store.delete(
                target.info, name=meta["name"], ctx=item_ctx, options=opts
            )
        except status.ApiError as err:
            if err.reason == "NotFound":
                continue
            raise
        deleted.append(result.obj)
    return responses.json_response(
        {
            "kind": f"{target.info.kind}List",
            "apiVersion": target.info.group_version,
            "metadata": {"resourceVersion": str(state.store.backend.current_revision())},
            "items": deleted,
        }
    )
