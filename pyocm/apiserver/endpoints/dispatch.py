"""The request path: request info → authentication → authorization → endpoint.

One catch-all aiohttp handler does the routing itself, because resources come and go
with CustomResourceDefinitions. Bodies are read only after authentication and
authorization have passed, as kube-apiserver does. Every failure leaves as a ``Status``
rendered by :mod:`pyocm.apiserver.endpoints.responses`; an unexpected exception is
logged here and answered as 500 InternalError without a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiohttp import web

from pyocm.apiserver import connections, metrics
from pyocm.apiserver.authentication import impersonation
from pyocm.apiserver.authentication import user as users
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.endpoints import discovery, nonresource, requestinfo, resources, responses
from pyocm.apiserver.state import STATE, ServerState
from pyocm.kube import status

log = logging.getLogger("pyocm.apiserver")

#: Served to anyone, even without credentials (kube's system:public-info-viewer).
CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


async def handle(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE]
    started = time.perf_counter()
    path = request.path
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/")
    try:
        info = requestinfo.parse(request.method, path, request.query)
        return await _handle(request, state, path, info, started=started)
    except status.ApiError as err:
        return responses.error_response(err)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("unexpected error serving %s %s", request.method, request.path)
        return responses.error_response(
            status.internal("an unexpected error occurred; see the server log")
        )


async def _serve_resource(
    request: web.Request,
    state: ServerState,
    info: requestinfo.RequestInfo,
    user: users.UserInfo,
    *,
    started: float,
) -> web.StreamResponse:
    """Serve an authorized resource request and record it in the metrics: as in
    kube-apiserver, where instrumentation sits after authentication and authorization,
    their 401 and 403 answers are not counted."""
    code: int | None = 500
    try:
        response = await resources.serve(request, state, info, user)
        code = response.status
        return response
    except status.ApiError as err:
        code = err.code
        raise
    except asyncio.CancelledError:
        code = None  # the client went away: nothing was answered
        raise
    finally:
        if code is not None:
            try:
                _observe(request, state, info, code, time.perf_counter() - started)
            except Exception:  # a metric must never cost an answer
                log.exception("recording metrics of %s %s", request.method, request.path)


def _observe(
    request: web.Request,
    state: ServerState,
    info: requestinfo.RequestInfo,
    code: int,
    seconds: float,
) -> None:
    """Record a request to a resource the server serves (and a subresource it has)."""
    served = state.catalog.get(info.api_group, info.api_version, info.resource)
    if served is None or (info.subresource and served.subresource(info.subresource) is None):
        return
    labels = metrics.labels_for(
        verb=info.verb,
        group=info.api_group,
        version=info.api_version,
        resource=info.resource,
        subresource=info.subresource,
        namespace=info.namespace,
        named=len(info.parts) > 1,
        dry_run="dryRun" in request.query,
        content_type=request.headers.get("Content-Type", ""),
    )
    state.metrics.observe(labels, code=code, seconds=seconds)


async def _handle(
    request: web.Request,
    state: ServerState,
    path: str,
    info: requestinfo.RequestInfo,
    *,
    started: float,
) -> web.StreamResponse:
    user = await state.authenticator.authenticate(
        certificate=connections.certificate(request, state.ca.certificate),
        authorization=request.headers.get("Authorization"),
    )
    if user is None:
        if nonresource.is_health(path):
            # Only the health checks, by name: any other path under them is 404 there.
            return await nonresource.health(request, state, path)
        if path.split("?")[0] in PUBLIC_PATHS:
            return await nonresource.serve(request, state, info)
        # Anonymous access is limited to configured endpoints, as kube-apiserver's
        # AnonymousAuthConfigurableEndpoints does: the health checks above, and reading
        # kube-public/cluster-info, which joining clusters fetch before they can verify
        # the hub (RBAC still decides, as for system:anonymous). Anything else is 401.
        if request.method != "GET" or path != CLUSTER_INFO:
            raise status.unauthorized()
        user = users.UserInfo(name=users.ANONYMOUS, groups=(users.UNAUTHENTICATED,))
    else:
        connections.authenticated(request)  # its connection keeps its keep-alive time
    if impersonation.requested(request.raw_headers):
        # As kube: between authentication and authorization, and for everything after.
        user = impersonation.impersonate(
            user,
            headers=request.headers,
            rbac=state.rbac,
            request_line=f"{request.method} {request.rel_url.raw_path}",
        )
    _authorize(state, user, info)
    if not info.resource_request:
        if discovery.handles(path):
            return await discovery.serve(request, state, path)
        return await nonresource.serve(request, state, info)
    return await _serve_resource(request, state, info, user, started=started)


def _authorize(state: ServerState, user: users.UserInfo, info: requestinfo.RequestInfo) -> None:
    attrs = attributes_for(user, info)
    decision = authorizer.authorize(state.rbac, attrs)
    if not decision.allowed:
        raise forbidden(attrs)


def attributes_for(user: users.UserInfo, info: requestinfo.RequestInfo) -> Attributes:
    if not info.resource_request:
        return Attributes(user=user, verb=info.verb, resource_request=False, path=info.path)
    namespace = info.namespace
    if info.resource == "namespaces" and not info.api_group and info.name:
        namespace = info.name
    return Attributes(
        user=user,
        verb=info.verb,
        resource_request=True,
        api_group=info.api_group,
        api_version=info.api_version,
        resource=info.resource,
        subresource=info.subresource,
        namespace=namespace,
        name=info.name,
    )


def forbidden(attrs: Attributes) -> status.ApiError:
    if not attrs.resource_request:
        return status.forbidden_error(message=f"forbidden: {attrs.describe()}")
    qualified = status.qualified(attrs.resource, attrs.api_group)
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    return status.forbidden_error(
        message=f"{subject} is forbidden: {attrs.describe()}",
        resource=attrs.resource,
        group=attrs.api_group,
        name=attrs.name,
    )
