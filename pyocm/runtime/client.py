"""A dict-in, dict-out Kubernetes client for controllers and agents.

Connection, TLS and credentials come from lightkube (kubeconfig parsing, client
certificates, tokens, exec plugins); this module adds what controllers need on top:
REST paths built from a :class:`~pyocm.runtime.kinds.Kind` without discovery, objects as
plain dicts (the shape the API serves, no model round trip), subresources, watches that
surface ``410 Gone`` to the caller, and every failure answer turned into
:class:`~pyocm.kube.status.ApiError` once, here.

Nothing here knows pyocm's server: the same client drives a real kube-apiserver.
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx2
import orjson
from lightkube.config import client_adapter
from lightkube.config.kubeconfig import KubeConfig, SingleConfig

from pyocm.kube.status import ApiError
from pyocm.runtime import metrics
from pyocm.runtime.kinds import Kind

Obj = dict[str, Any]
PatchType = Literal["merge", "json", "strategic"]

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}


class ApiConnectionError(ConnectionError):
    """The API server could not be reached, or its identity could not be verified."""


#: How long an idle connection is kept for reuse (client-go's IdleConnTimeout).
IDLE_TIMEOUT = 90.0


class Api:
    """One connection to one API server.

    Build it with :meth:`from_kubeconfig` or :meth:`from_config`; close it with
    :meth:`close` or ``async with``.
    """

    def __init__(
        self,
        config: SingleConfig,
        *,
        timeout: float = 30.0,
        user_agent: str = "pyocm",
        max_connections: int | None = None,
    ) -> None:
        self._config = config
        params = client_adapter.ConnectionParams(timeout=httpx2.Timeout(timeout), trust_env=False)
        # lightkube builds TLS and authentication from the kubeconfig; the pool keeps idle
        # connections for 90 s as client-go does (httpx's 5 s default would make every
        # once-a-minute lease renewal and status report pay a new TLS handshake).
        pool = (
            {}
            if max_connections is None
            else {"max_connections": max_connections, "max_keepalive_connections": max_connections}
        )
        limits = httpx2.Limits(keepalive_expiry=IDLE_TIMEOUT, **pool)
        self._http = httpx2.AsyncClient(**params.httpx_params(config), limits=limits)
        self._http.headers["User-Agent"] = user_agent
        self._watch_timeout = httpx2.Timeout(timeout, read=None)

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str], *, context: str | None = None, timeout: float = 30.0
    ) -> Api:
        """Connect with the kubeconfig file at ``path`` (its current context unless named)."""
        if not Path(path).is_file():
            raise ApiConnectionError(f"kubeconfig {os.fspath(path)!r} does not exist")
        return cls(_pick(KubeConfig.from_file(path), context), timeout=timeout)

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        context: str | None = None,
        timeout: float = 30.0,
        max_connections: int | None = None,
    ) -> Api:
        """Connect with a kubeconfig given as a dict (such as ``build_kubeconfig``'s).

        ``max_connections`` caps the pool (requests beyond it wait for a free
        connection); a watch holds one connection for as long as it runs."""
        return cls(
            _pick(KubeConfig.from_dict(dict(config)), context),
            timeout=timeout,
            max_connections=max_connections,
        )

    @property
    def server(self) -> str:
        return str(self._config.cluster.server)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # Reads.

    async def get(
        self, kind: Kind, name: str, *, namespace: str | None = None, subresource: str | None = None
    ) -> Obj:
        return await self._object(
            "GET", path(kind, namespace=namespace, name=name, subresource=subresource)
        )

    async def list(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj:
        """The list object (``items`` plus ``metadata.resourceVersion``) of one page."""
        params = _query(
            labelSelector=labels,
            fieldSelector=fields,
            resourceVersion=resource_version,
            limit=limit,
            **{"continue": continue_token},
        )
        return await self._object("GET", path(kind, namespace=namespace), params=params)

    async def list_all(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Obj:
        """Every page of a list joined into one list object (resourceVersion of the first page)."""
        first = await self.list(kind, namespace=namespace, labels=labels, fields=fields, limit=500)
        items = list(first.get("items") or [])
        token = (first.get("metadata") or {}).get("continue")
        while token:
            page = await self.list(
                kind,
                namespace=namespace,
                labels=labels,
                fields=fields,
                limit=500,
                continue_token=token,
            )
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
        first["items"] = items
        first.setdefault("metadata", {}).pop("continue", None)
        return first

    async def watch(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
    ) -> AsyncGenerator[tuple[str, Obj], None]:
        """Yield ``(type, object)`` until the server ends the stream.

        ``BOOKMARK`` events are yielded so callers can advance their resourceVersion; an
        ``ERROR`` event (typically 410 Gone) is raised as :class:`ApiError`.
        """
        params = _query(
            watch="true",
            allowWatchBookmarks="true",
            labelSelector=labels,
            fieldSelector=fields,
            resourceVersion=resource_version,
            timeoutSeconds=timeout_seconds,
        )
        request = self._http.build_request(
            "GET", path(kind, namespace=namespace), params=params, timeout=self._watch_timeout
        )
        response = await self._send(request, stream=True)
        try:
            if response.status_code >= 300:
                await response.aread()
                raise _api_error(response)
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event.get("type") == "ERROR":
                    raise _status_error(event.get("object") or {}, fallback_code=500)
                yield str(event.get("type")), event.get("object") or {}
        except httpx2.HTTPError as err:
            raise ApiConnectionError(f"watch of {kind} on {self.server} broke: {err}") from err
        finally:
            await response.aclose()

    async def probe(self, target: str) -> tuple[int, str]:
        """GET a non-resource path (``/livez``, ``/healthz``); answer its status code and text."""
        response = await self._send(self._http.build_request("GET", target))
        return response.status_code, response.text[:512]

    async def server_version(self) -> Obj:
        return await self._object("GET", "/version")

    # Writes.

    async def create(
        self,
        kind: Kind,
        obj: Obj,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> Obj:
        """POST ``obj``; the namespace defaults to ``obj``'s own."""
        namespace = namespace or _meta(obj).get("namespace")
        target = path(kind, namespace=namespace, name=name, subresource=subresource)
        return await self._object("POST", target, body=obj)

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        """PUT ``obj`` (its ``metadata.resourceVersion`` makes the write conditional)."""
        meta = _meta(obj)
        target = path(
            kind, namespace=meta.get("namespace"), name=str(meta["name"]), subresource=subresource
        )
        return await self._object("PUT", target, body=obj)

    async def patch(
        self,
        kind: Kind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        type: PatchType = "merge",
        subresource: str | None = None,
    ) -> Obj:
        target = path(kind, namespace=namespace, name=name, subresource=subresource)
        return await self._object(
            "PATCH", target, body=patch, content_type=_PATCH_CONTENT_TYPES[type]
        )

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        propagation: Literal["Background", "Foreground", "Orphan"] | None = None,
        uid: str | None = None,
    ) -> Obj:
        """DELETE; ``uid`` is a precondition so a recreated namesake is never deleted."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            options["propagationPolicy"] = propagation
        if uid:
            options["preconditions"] = {"uid": uid}
        return await self._object(
            "DELETE", path(kind, namespace=namespace, name=name), body=options
        )

    # The wire.

    async def request(
        self,
        method: str,
        target: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        """Send one request and return the decoded JSON answer, raising :class:`ApiError`."""
        headers = {"Accept": "application/json"}
        content = None
        if body is not None:
            content = orjson.dumps(body)
            headers["Content-Type"] = content_type
        request = self._http.build_request(
            method, target, params=params, content=content, headers=headers
        )
        response = await self._send(request)
        if response.status_code >= 300:
            raise _api_error(response)
        return orjson.loads(response.content) if response.content else {}

    async def _object(self, method: str, target: str, **options: Any) -> Obj:
        answer = await self.request(method, target, **options)
        if not isinstance(answer, dict):
            raise ApiError(
                code=500, reason="InternalError", message=f"{method} {target} answered a non-object"
            )
        return answer

    async def _send(self, request: httpx2.Request, *, stream: bool = False) -> httpx2.Response:
        if not metrics.observing():
            return await self._send_now(request, stream=stream)
        started = time.perf_counter()
        code = 0
        try:
            response = await self._send_now(request, stream=stream)
            code = response.status_code
            return response
        finally:
            metrics.observe(request.method, request.url.path, code, time.perf_counter() - started)

    async def _send_now(self, request: httpx2.Request, *, stream: bool) -> httpx2.Response:
        try:
            return await self._http.send(request, stream=stream)
        except httpx2.ConnectError as err:
            raise ApiConnectionError(_connect_message(self.server, err)) from err
        except httpx2.TimeoutException as err:
            raise ApiConnectionError(
                f"{self.server} did not answer {request.method} {request.url.path} in time"
            ) from err
        except httpx2.HTTPError as err:
            raise ApiConnectionError(
                f"{request.method} {request.url.path} on {self.server} failed: {err}"
            ) from err


def path(
    kind: Kind,
    *,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of a collection, an object or an object's subresource."""
    parts = ["/api/v1" if not kind.group else f"/apis/{kind.group}/{kind.version}"]
    if kind.namespaced and namespace:
        parts.append(f"namespaces/{namespace}")
    parts.append(kind.plural)
    if name is not None:
        if not name:
            raise ValueError(f"an empty name addresses no {kind.kind}")
        parts.append(name)
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


def _pick(config: KubeConfig, context: str | None) -> SingleConfig:
    picked = config.get(context_name=context)
    if picked is None:
        raise ApiConnectionError(
            f"kubeconfig has no context {context!r}"
            if context
            else "kubeconfig has no current context"
        )
    return picked


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _query(**values: Any) -> dict[str, str]:
    return {key: str(value) for key, value in values.items() if value is not None and value != ""}


def _api_error(response: httpx2.Response) -> ApiError:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return _status_error(body, fallback_code=response.status_code)
    text = response.text.strip()[:200] or response.reason_phrase
    return ApiError(
        code=response.status_code,
        reason=_REASONS.get(response.status_code, "Unknown"),
        message=text,
    )


def _status_error(status: Obj, *, fallback_code: int) -> ApiError:
    code = int(status.get("code") or fallback_code)
    return ApiError(
        code=code,
        reason=str(status.get("reason") or _REASONS.get(code, "Unknown")),
        message=str(status.get("message") or ""),
        details=status.get("details") or None,
    )


def _connect_message(server: str, err: httpx2.ConnectError) -> str:
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (
                f"cannot verify {server}: its serving certificate is not signed by the CA "
                f"the kubeconfig trusts ({cause.verify_message})"
            )
        cause = cause.__cause__ or cause.__context__
    return f"cannot connect to {server}: {err}"


_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
