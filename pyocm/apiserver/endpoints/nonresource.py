"""Paths that are not resources: version, health checks, metrics and OpenAPI.

Health follows kube-apiserver's ``healthz`` package: ``/healthz``, ``/livez`` and
``/readyz`` run their checks and answer ``ok`` (every check listed with ``?verbose``,
and always when one fails, its reason withheld); ``/<endpoint>/<check>`` runs one check
by name and says why it failed; any other path under them is 404.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from pyocm.apiserver import metrics
from pyocm.apiserver.endpoints import openapi, responses
from pyocm.apiserver.endpoints.requestinfo import RequestInfo
from pyocm.apiserver.state import ServerState
from pyocm.base import metrics as process_metrics
from pyocm.kube import status

#: An empty OpenAPI v2 document in protobuf form (zero bytes): kubectl apply treats every
#: kind as schema-less and skips client-side validation instead of failing. The media
#: type must be the ``.v1.0`` form; the ``@v1.0`` form breaks Go's mime parser.
OPENAPI_V2_PROTO = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

log = logging.getLogger(__name__)

#: A check raises (any exception) when it fails.
Check = Callable[[ServerState], Awaitable[None]]
#: kube-apiserver's --etcd-healthcheck-timeout and --etcd-readycheck-timeout.
STORAGE_CHECK_TIMEOUT = 2.0
_HEALTH = ("/healthz", "/livez", "/readyz")
_TEXT = {"X-Content-Type-Options": "nosniff"}


async def serve(request: web.Request, state: ServerState, info: RequestInfo) -> web.StreamResponse:
    path = info.path.rstrip("/") or "/"
    if request.method not in ("GET", "HEAD"):
        raise status.method_not_allowed(request.method, "")
    if path == "/version":
        return responses.json_response(state.version)
    if path == "/metrics":
        # The server's request metrics, then the work queues and reconcilers of every
        # controller in this process (the server's own, and the hub's when in-process).
        body = state.metrics.render().encode() + process_metrics.render()
        return web.Response(body=body, headers={"Content-Type": metrics.CONTENT_TYPE})
    if is_health(path):
        return await health(request, state, path)
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


def is_health(path: str) -> bool:
    """Whether ``path`` is a health endpoint or lies under one (served or 404 here)."""
    return path in _HEALTH or path.startswith(tuple(h + "/" for h in _HEALTH))


async def health(request: web.Request, state: ServerState, path: str) -> web.Response:
    """Answer a path for which :func:`is_health` holds; never anything else."""
    if request.method not in ("GET", "HEAD"):
        raise status.method_not_allowed(request.method, "")
    endpoint, _, name = path.strip("/").partition("/")
    checks = _checks(state, endpoint)
    if not name:
        return await _run_all(request, state, endpoint, checks)
    check = checks.get(name)
    if check is None:
        raise status.path_not_found()
    try:
        await check(state)
    except Exception as err:  # a check fails by raising; kube names the error here
        return web.Response(text=f"internal server error: {err}\n", status=500, headers=_TEXT)
    return web.Response(text="ok", headers=_TEXT)


def _checks(state: ServerState, endpoint: str) -> dict[str, Check]:
    """The checks of one endpoint, in the order kube lists them. Liveness asks only
    that the store answers: a full disk is a reason to take the hub out of rotation
    (readiness), not to restart it, which would not free a byte."""
    storage = state.store.backend.name
    if endpoint != "readyz":
        return {"ping": _ping, storage: _storage_answers}
    return {"ping": _ping, storage: _storage_writable, "shutdown": _not_shutting_down}


async def _run_all(
    request: web.Request, state: ServerState, endpoint: str, checks: dict[str, Check]
) -> web.Response:
    excluded = set(request.query.getall("exclude", []))
    lines, failed = [], []
    for name, check in checks.items():
        if name in excluded:
            excluded.discard(name)
            lines.append(f"[+]{name} excluded: ok\n")
            continue
        try:
            await check(state)
        except Exception as err:  # withheld from the public answer, kept for the log
            log.debug("%s check %s failed: %s", endpoint, name, err)
            lines.append(f"[-]{name} failed: reason withheld\n")
            failed.append(name)
        else:
            lines.append(f"[+]{name} ok\n")
    if excluded:
        quoted = ",".join(f'"{name}"' for name in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:
        text = "".join(lines) + f"{endpoint} check failed\n"
        return web.Response(text=text, status=500, headers=_TEXT)
    if "verbose" not in request.query:
        return web.Response(text="ok", headers=_TEXT)
    return web.Response(text="".join(lines) + f"{endpoint} check passed\n", headers=_TEXT)


async def _ping(state: ServerState) -> None:
    """The server answers."""


async def _storage_answers(state: ServerState) -> None:
    """A read of the store, as kube's etcd check reads a key."""
    await _in_time(state.store.backend.get("/health"))


async def _storage_writable(state: ServerState) -> None:
    await _in_time(state.store.backend.check())


async def _in_time(work: Awaitable[object]) -> None:
    try:
        async with asyncio.timeout(STORAGE_CHECK_TIMEOUT):
            await work
    except TimeoutError:
        raise TimeoutError(f"storage gave no answer within {STORAGE_CHECK_TIMEOUT:g}s") from None


async def _not_shutting_down(state: ServerState) -> None:
    if state.stopping.is_set():
        raise RuntimeError("the server is shutting down")
