"""Paths that are not resources: version, health checks, metrics and OpenAPI."""

from __future__ import annotations

from aiohttp import web

from pyocm.apiserver import metrics
from pyocm.apiserver.endpoints import openapi, responses
from pyocm.apiserver.endpoints.requestinfo import RequestInfo
from pyocm.apiserver.state import ServerState
from pyocm.kube import status

#: An empty OpenAPI v2 document in protobuf form (zero bytes): kubectl apply treats every
#: kind as schema-less and skips client-side validation instead of failing. The media
#: type must be the ``.v1.0`` form; the ``@v1.0`` form breaks Go's mime parser.
OPENAPI_V2_PROTO = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

_HEALTH = ("/healthz", "/livez", "/readyz")


async def serve(request: web.Request, state: ServerState, info: RequestInfo) -> web.StreamResponse:
    path = info.path.rstrip("/") or "/"
    if request.method not in ("GET", "HEAD"):
        raise status.method_not_allowed(request.method, "")
    if path == "/version":
        return responses.json_response(state.version)
    if path == "/metrics":
        return web.Response(
            text=state.metrics.render(), headers={"Content-Type": metrics.CONTENT_TYPE}
        )
    if path in _HEALTH or path.startswith(tuple(h + "/" for h in _HEALTH)):
        return _health(state, path, verbose="verbose" in request.query)
    if path == "/openapi/v2":
        return (
            web.Response(body=b"", content_type=OPENAPI_V2_PROTO)
            if _wants_proto(request)
            else responses.json_response(openapi.swagger(state.catalog))
        )
    if path == "/openapi/v3":
        return responses.json_response(openapi.index(state.catalog))
    if path.startswith("/openapi/v3/"):
        group, version = _group_version(path.removeprefix("/openapi/v3/"))
        if not state.catalog.has_group_version(group, version):
            raise status.path_not_found()
        return responses.json_response(openapi.document(state.catalog, group, version))
    raise status.path_not_found()


def _group_version(rest: str) -> tuple[str, str]:
    parts = rest.split("/")
    if len(parts) == 2 and parts[0] == "api":
        return "", parts[1]
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1], parts[2]
    raise status.path_not_found()


def _wants_proto(request: web.Request) -> bool:
    return "protobuf" in request.headers.get("Accept", "")


def _health(state: ServerState, path: str, *, verbose: bool) -> web.Response:
    ready = not state.stopping.is_set()
    if path.startswith("/readyz") and not ready:
        return web.Response(
            text="[-]shutdown failed: reason withheld\nreadyz check failed\n", status=500
        )
    if verbose:
        name = path.strip("/").split("/")[0]
        return web.Response(text=f"[+]ping ok\n[+]etcd ok\n{name} check passed\n")
    return web.Response(text="ok")
