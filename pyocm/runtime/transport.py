"""The wire under :class:`~pyocm.runtime.client.Api`: one aiohttp session to one server.

TLS and credentials come from lightkube (kubeconfig parsing, client certificates,
tokens, exec plugins, see :mod:`~pyocm.runtime.kubeauth`); requests go out through
aiohttp, which costs about a quarter of httpx's CPU per request (0.20 ms against
0.86 ms for a GET on this machine). That matters twice: for the hub's own controllers,
and for a simulator driving thousands of agents. Connection failures surface as
:class:`~pyocm.runtime.errors.ApiConnectionError`; failure answers are decoded into
:class:`~pyocm.kube.status.ApiError` by :meth:`Transport.request` (streams decode their
own, see :mod:`~pyocm.runtime.watchstream`). Nothing is retried here: a controller's
work queue, or the caller, decides whether a failed write is worth repeating.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml
from lightkube.config import client_adapter
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from pyocm.base import requestmetrics as metrics
from pyocm.runtime.errors import ApiConnectionError, api_error
from pyocm.runtime.kubeauth import Login

#: How long an idle connection is kept for reuse (client-go's IdleConnTimeout).
IDLE_TIMEOUT = 90.0


def load_config(path: str | os.PathLike[str], *, context: str | None = None) -> SingleConfig:
    """The context ``context`` (the current one unless named) of a kubeconfig file."""
    if not Path(path).is_file():
        raise ApiConnectionError(f"kubeconfig {os.fspath(path)!r} does not exist")
    try:
        loaded = KubeConfig.from_file(path)
    except (ConfigError, KeyError, TypeError, ValueError, yaml.YAMLError) as err:
        raise ApiConnectionError(f"kubeconfig {os.fspath(path)!r} is not valid: {err}") from None
    return pick_context(loaded, context)


def pick_context(config: KubeConfig, context: str | None) -> SingleConfig:
    try:
        picked = config.get(context_name=context)
    except ConfigError as err:
        raise ApiConnectionError(f"kubeconfig: {err}") from None
    if picked is None:
        raise ApiConnectionError(
            f"kubeconfig has no context {context!r}"
            if context
            else "kubeconfig has no current context"
        )
    return picked


class Transport:
    """Requests to one API server with one kubeconfig context's TLS and credentials.

    Each phase of a request (a connection from the pool, connecting, every read) gets
    ``timeout`` seconds, not the request as a whole; a stream (:meth:`open` with
    ``stream=True``) may go quiet for as long as the server likes."""

    def __init__(
        self,
        config: SingleConfig,
        *,
        timeout: float,
        user_agent: str,
        max_connections: int | None,
    ) -> None:
        if config.user is None:
            raise ApiConnectionError("kubeconfig context names no user")
        self.server = str(config.cluster.server)
        self._base = self.server.rstrip("/")
        self._ssl = client_adapter.verify_cluster(
            config.cluster, config.user, config.abs_file, trust_env=False
        )
        self._auth = client_adapter.user_auth(config.user)
        self._headers = {"User-Agent": user_agent, "Accept": "application/json"}
        self._max_connections = max_connections
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=timeout, sock_read=timeout
        )
        self._stream_timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=timeout, sock_read=None
        )
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        if self._session is not None:
            await self._session.close()

    def _http(self) -> aiohttp.ClientSession:
        """The session, made on first use (aiohttp wants a running event loop)."""
        if self._closed:
            raise ApiConnectionError(f"the client of {self.server} is closed")
        if self._session is None:
            # Idle connections are kept for 90 s as client-go does, so once-a-minute lease
            # renewals and status reports do not pay a new TLS handshake each time.
            connector = aiohttp.TCPConnector(
                ssl=self._ssl,
                limit=self._max_connections or 100,
                keepalive_timeout=IDLE_TIMEOUT,
            )
            self._session = aiohttp.ClientSession(
                connector=connector, headers=self._headers, timeout=self._timeout
            )
        return self._session

    async def request(
        self,
        method: str,
        target: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request and return the decoded JSON answer, raising
        :class:`~pyocm.kube.status.ApiError` for a failure answer. ``headers`` are sent
        as well (``Impersonate-User`` for one request, say)."""
        content = None
        sent = dict(headers or {})
        if body is not None:
            content = orjson.dumps(body)
            sent["Content-Type"] = content_type
        async with self.open(method, target, params=params, data=content, headers=sent) as answer:
            status, reason, data = answer.status, answer.reason, await answer.read()
        if status >= 300:
            raise api_error(status, data, reason)
        return orjson.loads(data) if data else {}

    @contextlib.asynccontextmanager
    async def open(
        self,
        method: str,
        target: str,
        *,
        params: Mapping[str, str] | None = None,
        data: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        stream: bool = False,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """The response once its headers are in (sent again when the credential's flow
        has a fresher one after a 401); transport failures become ApiConnectionError,
        including those met while the caller reads the body."""
        started = time.perf_counter()
        code = 0
        login = Login(self._auth)
        try:
            auth = await login.headers()
            while True:
                response = await self._http().request(
                    method,
                    self._base + target,
                    params=params,
                    data=data,
                    headers={**(headers or {}), **auth},
                    timeout=self._stream_timeout if stream else self._timeout,
                )
                async with response:
                    if response.status == 401 and (fresher := await login.retry_after_401()):
                        auth = fresher
                        continue
                    yield response
                    # Counted once the caller is done with the body (a watch: once it ends).
                    code = response.status
                    break
        except aiohttp.ClientConnectorCertificateError as err:
            raise ApiConnectionError(
                f"cannot verify {self.server}: its serving certificate is not signed by the CA "
                f"the kubeconfig trusts ({_verify_message(err)})"
            ) from err
        except aiohttp.ClientConnectorError as err:
            raise ApiConnectionError(
                f"cannot connect to {self.server}: {err.os_error or err}"
            ) from err
        except TimeoutError as err:
            raise ApiConnectionError(
                f"{self.server} did not answer {method} {target} in time"
            ) from err
        except aiohttp.ClientError as err:
            raise ApiConnectionError(f"{method} {target} on {self.server} failed: {err}") from err
        finally:
            if metrics.observing():
                metrics.observe(method, target, code, time.perf_counter() - started)
            await login.close()


def _verify_message(err: aiohttp.ClientConnectorCertificateError) -> str:
    cause = err.certificate_error
    if isinstance(cause, ssl.SSLCertVerificationError) and cause.verify_message:
        return str(cause.verify_message)
    return str(cause)
