"""Resolve a resource request to its :class:`ResourceInfo` and the verb's endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.endpoints import (
    create,
    delete,
    get,
    patch,
    requestinfo,
    reviews,
    scale,
    scopes,
    tokenrequest,
    update,
    watch,
)
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage import errors as storage_errors
from pyocm.kube import status


@dataclass(frozen=True)
class Target:
    """A resolved resource request."""

    info: ResourceInfo
    request: requestinfo.RequestInfo
    user: UserInfo

    @property
    def namespace(self) -> str:
        return self.request.namespace

    @property
    def name(self) -> str:
        return self.request.name

    @property
    def label_scope(self) -> str:
        """A label selector the caller's reads are confined to ("" for none)."""
        return scopes.read_scope(self.info, self.user)

    def check_label_scope(self, obj: dict[str, object]) -> None:
        """Refuse, as RBAC would, a single object outside the caller's read scope."""
        scope = self.label_scope
        if scope and not scopes.in_scope(obj, scope):
            raise scopes.forbidden(self.info, self.user, self.request.verb, self.name)

    def context(
        self,
        *,
        dry_run: bool = False,
        field_validation: str = "Ignore",
        field_manager: str = "",
        applied: bool = False,
    ) -> Context:
        return Context(
            user=self.user,
            namespace=self.request.namespace if self.info.namespaced else "",
            subresource=self.request.subresource,
            dry_run=dry_run,
            field_validation=field_validation,
            field_manager=field_manager,
            applied=applied,
        )


async def serve(
    request: web.Request, state: ServerState, info: requestinfo.RequestInfo, user: UserInfo
) -> web.StreamResponse:
    resource = state.catalog.get(info.api_group, info.api_version, info.resource)
    if resource is None:
        resource = await _served_since(state, info)
    if resource is None or len(info.parts) > 3:
        raise status.path_not_found()
    target = Target(resource, info, user)
    _check_scope(target)
    if resource.virtual:
        return await reviews.serve(request, state, target)
    if info.subresource:
        sub = resource.subresource(info.subresource)
        if sub is None:
            raise status.path_not_found()
        if info.verb not in sub.verbs:
            raise status.method_not_allowed(request.method, f"{resource.plural}/{sub.name}")
        if sub.kind == "TokenRequest":
            return await tokenrequest.serve(request, state, target)
        if sub.kind == scale.KIND:
            return await scale.serve(request, state, target)
    elif info.verb not in resource.verbs:
        raise status.method_not_allowed(request.method, resource.plural)
    verb = info.verb
    if verb == "get":
        return await get.serve_get(request, state, target)
    if verb == "list":
        return await get.serve_list(request, state, target)
    if verb == "watch":
        return await watch.serve(request, state, target)
    if verb == "create":
        return await create.serve(request, state, target)
    if verb == "update":
        return await update.serve(request, state, target)
    if verb == "patch":
        return await patch.serve(request, state, target)
    if verb == "delete":
        return await delete.serve(request, state, target)
    if verb == "deletecollection":
        return await delete.serve_collection(request, state, target)
    raise status.method_not_allowed(request.method, resource.plural)


def _check_scope(target: Target) -> None:
    info, req = target.info, target.request
    if (
        not info.namespaced
        and req.namespace
        and not (info.plural == "namespaces" and not info.group)
    ):
        raise status.path_not_found()
    cross_namespace = req.verb in ("list", "watch", "deletecollection") or info.virtual
    if info.namespaced and not req.namespace and not cross_namespace:
        raise status.path_not_found()


async def _served_since(state: ServerState, info: requestinfo.RequestInfo) -> ResourceInfo | None:
    """The resource, if a CRD defining it was acknowledged before this request: another
    API server sharing the store may have taken it, and this one serves it once its
    watch of the store has brought it (at once with a store only it writes)."""
    try:
        await state.store.backend.catch_up()
    except storage_errors.StorageError:
        return None  # the store cannot say now: answer as the routes stand
    return state.catalog.get(info.api_group, info.api_version, info.resource)
