"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's replicas.

GET answers the Scale of the object; PUT and PATCH (JSON, merge or strategic merge
patch) change ``spec.replicas`` of the object itself, through the store's guaranteed
update so concurrent writers are retried, and answer the new Scale. A Scale naming a
``metadata.resourceVersion`` must match the object's (409 otherwise), as
``kubectl scale --resource-version`` relies on. Nothing but the replica count changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.endpoints import body, negotiation, options, responses
from pyocm.apiserver.registry.builtin import knownfields
from pyocm.apiserver.registry.builtin.poddefaults import mapping
from pyocm.apiserver.registry.strategy import meta
from pyocm.apiserver.state import ServerState
from pyocm.kube import patches, selectors, status

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

Obj = dict[str, Any]
KIND = "Scale"
GROUP_VERSION = "autoscaling/v1"
_PATCH_TYPES = [negotiation.JSON_PATCH, negotiation.MERGE_PATCH, negotiation.STRATEGIC_PATCH]


def to_scale(obj: Obj) -> Obj:
    """The Scale of a Deployment, ReplicaSet or StatefulSet."""
    m = meta(obj)
    spec = mapping(obj, "spec")
    found = mapping(obj, "status")
    replicas = spec.get("replicas")
    try:
        selector = str(selectors.from_label_selector(spec.get("selector")))
    except selectors.SelectorError:
        selector = ""
    scale_status: Obj = {"replicas": found.get("replicas") or 0}
    if selector:
        scale_status["selector"] = selector
    return {
        "kind": KIND,
        "apiVersion": GROUP_VERSION,
        "metadata": {
            k: m[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in m
        },
        "spec": {"replicas": replicas} if replicas else {},
        "status": scale_status,
    }


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    info = target.info
    if target.request.verb == "get":
        obj = await state.store.get(info, namespace=target.namespace, name=target.name)
        target.check_label_scope(obj)
        return responses.json_response(to_scale(obj))
    opts = options.write_options(request.query)
    ctx = target.context(
        dry_run=opts.dry_run,
        field_validation=opts.field_validation,
        field_manager=options.manager_name(opts.field_manager, request.headers.get("User-Agent")),
    )
    change = await _change(request, target)

    def mutate(current: Obj) -> Obj:
        wanted = change(to_scale(current))
        _check(wanted, current, target)
        spec = current.get("spec")
        if not isinstance(spec, dict):
            spec = current["spec"] = {}
        spec["replicas"] = (wanted.get("spec") or {}).get("replicas") or 0
        return current

    stored = await state.store.guaranteed_update(info, name=target.name, ctx=ctx, mutate=mutate)
    return responses.json_response(to_scale(stored), headers=body.warning_headers(ctx))


async def _change(request: web.Request, target: Target) -> Any:
    """How the request turns the current Scale into the wanted one."""
    if target.request.verb == "update":
        sent = await body.read_object(request, target.info, kind=KIND, group_version=GROUP_VERSION)
        return lambda current: sent
    content_type = negotiation.media_type(request.headers.get("Content-Type"))
    if content_type not in _PATCH_TYPES:
        raise status.unsupported_media_type(content_type, _PATCH_TYPES)
    raw = await negotiation.read_body(request)
    document = (await negotiation.decode(raw, negotiation.JSON)).value

    def patched(current: Obj) -> Obj:
        try:
            if content_type == negotiation.JSON_PATCH:
                if not isinstance(document, list):
                    raise status.bad_request("a JSON patch must be a list of operations")
                result = patches.json_patch(current, document)
            elif isinstance(document, dict):
                # A Scale has no lists, so a strategic merge is a plain merge.
                result = patches.merge_patch(current, document)
            else:
                raise status.bad_request("a merge patch must be a JSON object")
        except patches.PatchError as err:
            raise status.ApiError(code=err.code, reason="Invalid", message=str(err)) from None
        return body.check_object(result, kind=KIND, group_version=GROUP_VERSION)

    return patched


def _check(scale: Obj, current: Obj, target: Target) -> None:
    """``ValidateScale`` and the Scale's resourceVersion precondition."""
    wanted_rv = str(meta(scale).get("resourceVersion") or "")
    if wanted_rv and wanted_rv != str(meta(current).get("resourceVersion") or ""):
        info = target.info
        raise status.conflict(resource=info.plural, group=info.group, name=target.name)
    found = knownfields.decode_error("autoscaling", "v1", KIND, scale)
    if found is not None:
        raise status.bad_request(
            f'{KIND} in version "v1" cannot be handled as a {KIND}: {found.go_message()}'
        )
    replicas = (scale.get("spec") or {}).get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        error = status.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        raise status.invalid_object(
            kind=KIND, group="autoscaling", name=target.name, errors=[error]
        )
