"""A small client of etcd's v3 HTTP/JSON gateway (grpc-gateway), over aiohttp.

etcd serves every v3 RPC as ``POST /v3/<service>/<method>`` with the request as JSON:
bytes fields (keys, values) are base64, 64-bit integers (revisions) are strings, and
fields at their default value are left out of answers. A watch is one long POST whose
answer is a stream of JSON lines, each ``{"result": WatchResponse}``. An error is
``{"error", "message", "code"}`` with a gRPC status code. This needs no grpc or protobuf
dependency and is natively async (see /work/shared/reference/libraries.md §4).

Several endpoints: a call goes to the current one; a connection error moves to the next.
A read is tried on every endpoint before it fails; a write only moves on when the
connection failed before the request was sent, since etcd may have applied it otherwise.
Errors are :class:`~pyocm.apiserver.storage.errors.StorageError` values; messages name an
endpoint by host and port only.
"""

from __future__ import annotations

import base64
import contextlib
import ssl
from collections.abc import AsyncGenerator
from typing import Any

import aiohttp
import orjson

from pyocm.apiserver.storage import errors

#: gRPC status codes etcd answers with (google.golang.org/grpc/codes).
OUT_OF_RANGE = 11  # "mvcc: required revision has been compacted"
UNAVAILABLE = 14  # "etcdserver: no leader", "etcdserver: leader changed"
DEADLINE_EXCEEDED = 4  # "etcdserver: request timed out"
#: Codes after which another member may answer.
_ELSEWHERE = frozenset({UNAVAILABLE, DEADLINE_EXCEEDED})

JSON = dict[str, Any]


class EtcdError(errors.Unavailable):
    """etcd refused a request; ``code`` is its gRPC status code."""

    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(f"etcd: {message}")
        self.code = code


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def revision_of(message: JSON) -> int:
    """The revision in an answer's header (0 when left out)."""
    return int(message.get("header", {}).get("revision", 0))


class Gateway:
    """Calls to one etcd cluster through its members' gateways."""

    def __init__(
        self,
        endpoints: list[str],
        *,
        ssl_context: ssl.SSLContext | None,
        request_timeout: float,
    ) -> None:
        if not endpoints:
            raise ValueError("etcd needs at least one endpoint")
        scheme = "https" if ssl_context is not None else "http"
        self._endpoints = [f"{scheme}://{endpoint}" for endpoint in endpoints]
        self._names = list(endpoints)  # host:port, for messages
        self._current = 0
        self._ssl = ssl_context
        self._timeout = request_timeout
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=128, ssl=self._ssl or False)
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def call(
        self, path: str, body: JSON, *, write: bool = False, timeout: float | None = None
    ) -> JSON:
        """POST ``body`` to ``path`` and return the answer.

        Raises ``EtcdError`` for etcd's refusals and ``Unavailable`` when no member
        answers (for a write: or when its outcome is unknown)."""
        data = orjson.dumps(body)
        limit = aiohttp.ClientTimeout(total=timeout or self._timeout)
        failure: errors.Unavailable | None = None
        for _ in range(len(self._endpoints)):
            index = self._current
            try:
                async with self._client().post(
                    self._endpoints[index] + path, data=data, timeout=limit
                ) as response:
                    payload = await response.read()
            except aiohttp.ClientConnectorError as err:
                failure = self._lost(index, err)
                continue
            except (aiohttp.ClientError, TimeoutError) as err:
                failure = self._lost(index, err)
                if write:
                    raise errors.Unavailable(
                        f"etcd at {self._names[index]} did not answer a write"
                        " (it may have been applied)"
                    ) from None
                continue
            try:
                return _decode(response.status, payload)
            except EtcdError as err:
                if write or err.code not in _ELSEWHERE:
                    raise
                failure = self._lost(index, err)
        raise failure or errors.Unavailable("etcd has no endpoint")

    async def watch(self, request: JSON) -> AsyncGenerator[JSON, None]:
        """One watch: every WatchResponse etcd streams for ``request`` (a
        WatchCreateRequest), until the connection ends. Raises ``Unavailable`` when no
        member takes the watch or the stream breaks."""
        body = orjson.dumps({"create_request": request})
        limit = aiohttp.ClientTimeout(total=None, sock_connect=self._timeout)
        for attempt in range(len(self._endpoints)):
            index = self._current
            try:
                async with self._client().post(
                    self._endpoints[index] + "/v3/watch", data=body, timeout=limit
                ) as response:
                    if response.status != 200:
                        _decode(response.status, await response.read())
                    async with contextlib.aclosing(_lines(response.content)) as lines:
                        async for line in lines:
                            yield _result(line)
                return
            except aiohttp.ClientConnectorError as err:
                failure = self._lost(index, err)
                if attempt + 1 == len(self._endpoints):
                    raise failure from None
            except (aiohttp.ClientError, TimeoutError) as err:
                raise self._lost(index, err) from None

    def _lost(self, index: int, err: BaseException) -> errors.Unavailable:
        """Move on from the endpoint at ``index`` (unless another call already did)."""
        if self._current == index:
            self._current = (index + 1) % len(self._endpoints)
        if isinstance(err, errors.Unavailable):
            return err
        reason = type(err).__name__ if isinstance(err, TimeoutError) else _reason(err)
        return errors.Unavailable(f"etcd at {self._names[index]} is unreachable: {reason}")


def _reason(err: BaseException) -> str:
    """What went wrong, without the URL aiohttp puts in some messages."""
    if isinstance(err, aiohttp.ClientConnectorError):
        return err.strerror or type(err.os_error).__name__
    return type(err).__name__


def _decode(status: int, payload: bytes) -> JSON:
    try:
        message = orjson.loads(payload)
    except orjson.JSONDecodeError:
        raise errors.Unavailable(f"etcd answered HTTP {status} without JSON") from None
    if not isinstance(message, dict):
        raise errors.Unavailable(f"etcd answered HTTP {status} with unexpected JSON")
    if status != 200 or "error" in message:
        raise EtcdError(str(message.get("message") or status), code=int(message.get("code", 0)))
    return message


def _result(line: bytes) -> JSON:
    message = _decode(200, line)
    result = message.get("result")
    if not isinstance(result, dict):
        raise errors.Unavailable("etcd sent a watch message without a result")
    return result


async def _lines(content: aiohttp.StreamReader) -> AsyncGenerator[bytes, None]:
    """Newline-separated messages of any length (aiohttp's readline caps a line's
    size, and a watch event carries a whole value, up to etcd's request limit)."""
    buffer = bytearray()
    searched = 0
    async for chunk in content.iter_any():
        buffer += chunk
        while (end := buffer.find(b"\n", searched)) >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            searched = 0
            if line.strip():
                yield line
        searched = len(buffer)
    if buffer.strip():
        yield bytes(buffer)
