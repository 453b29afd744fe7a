"""Connections: handshake, header and idle timeouts, and a cap on how many are open.

kube-apiserver's Go server gives a client 32 s (ReadHeaderTimeout, which Go also applies
to the TLS handshake) to finish its handshake and then each request's headers, and
closes connections idle for 90 s. The hub accepts connections itself and hands each to
the loop (``connect_accepted_socket``) for a TLS handshake with a deadline, so it holds
every connection from its first moment: the cap counts handshakes under way, and a
connection over the cap is closed before its handshake costs anything. At the cap, the
oldest connection that never authenticated makes room, so a flood of silent sockets
cannot lock the admin out or use up the descriptors the database needs; failing that, the
oldest authenticated connection that is idle (no request in progress: its keep-alive
client simply reconnects), since any valid credential (a bootstrap token, any agent's
certificate) would otherwise let a few idle connections lock everyone else out. Only
when every connection is serving a request (watches) is the newcomer refused.

After the handshake aiohttp's RequestHandler serves the connection. ``GuardedHandler``
adds one timer while the connection has not authenticated: it closes the connection when
a request's headers have not arrived within ``read_header_timeout`` or when it stays idle
for ``unauthenticated_idle_timeout`` after a response. The first request with a valid
credential cancels it: an authenticated connection idles under aiohttp's keep-alive
timer alone, and gets the timer back only while a request's headers are arriving (Go
applies ReadHeaderTimeout to every request): armed when the first bytes of a request
come and do not complete its headers, cancelled when they are complete. A request that
arrives whole, the usual case, costs two attribute checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import math
import resource
import socket
import ssl
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from cryptography import x509

from pyocm.apiserver.authentication.authenticator import ClientCertificate, client_certificate
from pyocm.apiserver.config import ServerConfig

log = logging.getLogger("pyocm.apiserver")

#: Descriptors kept back from client connections: the database and its journal, the
#: logs, the in-process controllers' own connections, the admin's kubectl.
FD_RESERVE = 256
#: The connection-limit warning is logged at most once per interval.
WARN_INTERVAL = 60.0
#: Connections accepted per wake-up, so a burst cannot hold the loop for long.
ACCEPT_BATCH = 64
#: Seconds accepting pauses when the process has no descriptor left for a connection.
ACCEPT_PAUSE = 0.5
#: Authenticated connections looked at, at most, for an idle one to close at the cap.
#: Busy ones (watches) go to the back, so each search looks at others.
IDLE_SCAN = 256


@dataclass(frozen=True)
class Limits:
    tls_handshake_timeout: float
    read_header_timeout: float
    unauthenticated_idle_timeout: float
    max_connections: int

    @classmethod
    def of(cls, config: ServerConfig) -> Limits:
        return cls(
            tls_handshake_timeout=config.tls_handshake_timeout,
            read_header_timeout=config.read_header_timeout,
            unauthenticated_idle_timeout=config.unauthenticated_idle_timeout,
            max_connections=config.max_connections or default_max_connections(),
        )


def default_max_connections() -> int:
    """The open-file limit less a reserve: 19,744 under the fleet's limit of 20,000."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    return max(soft - FD_RESERVE, 64)


class _Connection:
    """One accepted connection: its handshake while it runs, then its handler."""

    __slots__ = ("authenticated", "handler", "handshake")

    def __init__(self) -> None:
        self.authenticated = False
        self.handler: GuardedHandler | None = None
        self.handshake: asyncio.Task[None] | None = None

    def idle(self) -> bool:
        """Served, and waiting for its next request (none in progress)."""
        return self.handshake is None and self.handler is not None and self.handler.waiting()

    def abort(self) -> None:
        if self.handshake is not None:
            self.handshake.cancel()  # uvloop closes the socket of a cancelled handshake
        elif self.handler is not None and self.handler.transport is not None:
            self.handler.transport.abort()


class Listener:
    """Accepts connections on a bound, listening socket and hands them, through a TLS
    handshake with a deadline, to aiohttp.

    Accepting here rather than in ``loop.create_server`` is what lets the hub count a
    connection from its first moment and close one it cannot afford at once."""

    def __init__(self, *, server: web.Server, ssl_context: ssl.SSLContext, limits: Limits) -> None:
        self._server = server
        self._ssl = ssl_context
        self._limits = limits
        self._open: dict[_Connection, None] = {}
        #: Connections that never authenticated, oldest first: the ones a cap closes.
        self._unauthenticated: dict[_Connection, None] = {}
        #: Connections that authenticated, oldest first but for those found busy.
        self._authenticated: dict[_Connection, None] = {}
        self._sock: socket.socket | None = None
        self._resume: asyncio.TimerHandle | None = None
        self._closed_for_room = 0
        self._closed_idle = 0
        self._refused = 0
        self._warned_at = -math.inf

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def start(self, sock: socket.socket) -> None:
        self._sock = sock
        asyncio.get_running_loop().add_reader(sock.fileno(), self._on_readable)

    async def close(self) -> None:
        """Stop accepting and end the handshakes under way; aiohttp's runner closes the
        connections it serves."""
        if self._sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
        if self._resume is not None:
            self._resume.cancel()
        handshakes = [conn.handshake for conn in self._open if conn.handshake is not None]
        for task in handshakes:
            task.cancel()
        await asyncio.gather(*handshakes, return_exceptions=True)

    def _on_readable(self) -> None:
        sock = self._sock
        for _ in range(ACCEPT_BATCH):
            if sock is None:
                return
            try:
                client, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # out of descriptors: say so, and let some free up
                self._accept_failed(err)
                return
            self._admit(client)

    def _accept_failed(self, err: OSError) -> None:
        loop = asyncio.get_running_loop()
        if self._sock is None:
            return
        loop.remove_reader(self._sock.fileno())
        self._resume = loop.call_later(ACCEPT_PAUSE, self._resume_accepting)
        self._warn(f"cannot accept connections: {err.strerror}")

    def _resume_accepting(self) -> None:
        self._resume = None
        if self._sock is not None:
            asyncio.get_running_loop().add_reader(self._sock.fileno(), self._on_readable)

    def _admit(self, client: socket.socket) -> None:
        if len(self._open) >= self._limits.max_connections and not self._make_room():
            client.close()
            return
        client.setblocking(False)
        conn = _Connection()
        self._open[conn] = None
        self._unauthenticated[conn] = None
        task = asyncio.get_running_loop().create_task(self._handshake(conn, client))
        task.add_done_callback(functools.partial(self._handshake_done, conn, client))
        conn.handshake = task

    def _make_room(self) -> bool:
        """At the cap: close the oldest connection that never authenticated, else the
        oldest authenticated one that is idle; refuse when every one is busy."""
        oldest = next(iter(self._unauthenticated), None)
        if oldest is not None:
            self._closed_for_room += 1
        else:
            oldest = self._oldest_idle()
            if oldest is not None:
                self._closed_idle += 1
            else:
                self._refused += 1
        if oldest is not None:
            self.release(oldest)
            oldest.abort()
        self._warn("connection limit reached")
        return oldest is not None

    def _oldest_idle(self) -> _Connection | None:
        found = None
        busy: list[_Connection] = []
        for conn in itertools.islice(self._authenticated, IDLE_SCAN):
            if conn.idle():
                found = conn
                break
            busy.append(conn)
        for conn in busy:  # to the back: the next search looks at others first
            del self._authenticated[conn]
            self._authenticated[conn] = None
        return found

    def _warn(self, reason: str) -> None:
        now = asyncio.get_running_loop().time()
        if now - self._warned_at < WARN_INTERVAL:
            return
        self._warned_at = now
        log.warning(
            "%s (%d open, --max-connections %d): closed %d connections that had not "
            "authenticated and %d idle authenticated ones, and refused %d since the last "
            "warning",
            reason,
            len(self._open),
            self._limits.max_connections,
            self._closed_for_room,
            self._closed_idle,
            self._refused,
        )
        self._closed_for_room = self._closed_idle = self._refused = 0

    def release(self, conn: _Connection) -> None:
        self._open.pop(conn, None)
        self._unauthenticated.pop(conn, None)
        self._authenticated.pop(conn, None)

    def trust(self, conn: _Connection) -> None:
        conn.authenticated = True
        self._unauthenticated.pop(conn, None)
        if conn in self._open:
            self._authenticated[conn] = None

    async def _handshake(self, conn: _Connection, client: socket.socket) -> None:
        await asyncio.get_running_loop().connect_accepted_socket(
            lambda: self._handler(conn),
            client,
            ssl=self._ssl,
            ssl_handshake_timeout=self._limits.tls_handshake_timeout,
        )

    def _handshake_done(
        self, conn: _Connection, client: socket.socket, task: asyncio.Task[None]
    ) -> None:
        """A callback, not a ``finally``: a handshake cancelled before it started never
        runs its coroutine, and its socket must be closed all the same."""
        conn.handshake = None
        if not task.cancelled() and task.exception() is None:
            return
        if not task.cancelled():  # failed or timed out: the client's problem
            log.debug("TLS handshake failed: %r", task.exception())
        self.release(conn)
        client.close()

    def _handler(self, conn: _Connection) -> GuardedHandler:
        server = self._server
        conn.handler = GuardedHandler(
            server,
            loop=asyncio.get_running_loop(),
            connection=conn,
            listener=self,
            limits=self._limits,
            **server._kwargs,  # the options aiohttp's runner gives every handler
        )
        return conn.handler


class GuardedHandler(web.RequestHandler):
    """aiohttp's handler with one timer: for connections that never authenticated, and
    for the headers of each request on those that did."""

    __slots__ = (
        "_certificate",
        "_certificate_read",
        "_connection",
        "_guard",
        "_guard_at",
        "_limits",
        "_listener",
    )

    def __init__(
        self,
        server: web.Server,
        *,
        connection: _Connection,
        listener: Listener,
        limits: Limits,
        **kwargs: Any,
    ) -> None:
        super().__init__(server, **kwargs)
        self._connection = connection
        self._listener = listener
        self._limits = limits
        self._guard: asyncio.TimerHandle | None = None
        self._guard_at = 0.0
        self._certificate: ClientCertificate | None = None
        self._certificate_read = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm(self._limits.read_header_timeout)

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        self._disarm()
        self._listener.release(self._connection)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._connection.authenticated:
            return  # the connection's own timer runs
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            # Bytes of a request whose headers are not complete yet: they have
            # read_header_timeout from now, however slowly the rest comes.
            if self._guard is None:
                self._arm(self._limits.read_header_timeout)
        elif self._guard is not None:
            self._disarm()  # the headers are complete

    def waiting(self) -> bool:
        """Waiting for a request: idle, or its headers not complete yet."""
        waiter = self._waiter
        return waiter is not None and not waiter.done()

    def certificate(self, issuer: x509.Certificate) -> ClientCertificate | None:
        """The client certificate, read once: it cannot change within a connection (the
        hub allows no renegotiation), and reading it costs a decode of the certificate.
        ``issuer`` is the client CA, the same for every request."""
        if not self._certificate_read:
            self._certificate = _read_certificate(self.transport, issuer)
            self._certificate_read = True
        return self._certificate

    def authenticated(self) -> None:
        """A request carried a valid credential: the connection is trusted from now on."""
        if not self._connection.authenticated:
            self._listener.trust(self._connection)
            self._disarm()

    def finish_response(  # type: ignore[override]
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> Coroutine[Any, Any, tuple[web.StreamResponse, bool]]:
        # Trusted connections take aiohttp's path unchanged: no extra coroutine per request.
        if self._connection.authenticated:
            return super().finish_response(request, resp, start_time)
        return self._finish_untrusted(request, resp, start_time)

    async def _finish_untrusted(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        try:
            return await super().finish_response(request, resp, start_time)
        finally:
            if not self._connection.authenticated:
                self._arm(self._limits.unauthenticated_idle_timeout)

    def _arm(self, seconds: float) -> None:
        loop = self._loop
        self._guard_at = at = loop.time() + seconds
        if self._guard is not None and self._guard.when() > at:
            self._disarm()
        if self._guard is None:
            self._guard = loop.call_at(at, self._expire)

    def _disarm(self) -> None:
        if self._guard is not None:
            self._guard.cancel()
            self._guard = None

    def _expire(self) -> None:
        self._guard = None
        if self._force_close:
            return
        if self._loop.time() < self._guard_at:
            self._guard = self._loop.call_at(self._guard_at, self._expire)
            return
        # Waiting for a request (idle, or its headers still arriving): close. A request
        # being served is left alone; its response arms the idle timer again (on a
        # connection that never authenticated; an authenticated one's is cancelled when
        # the headers complete).
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            # Abort, as Go closes the socket: a client that ignores TLS close_notify
            # would otherwise hold the descriptor for the TLS shutdown timeout.
            if self.transport is not None:
                self.transport.abort()
            self.force_close()


def _read_certificate(
    transport: asyncio.BaseTransport | None, issuer: x509.Certificate
) -> ClientCertificate | None:
    if transport is None:
        return None
    tls = transport.get_extra_info("ssl_object")
    if tls is None:
        return None
    return client_certificate(tls.getpeercert(), tls.getpeercert(binary_form=True), issuer=issuer)


def certificate(request: web.BaseRequest, issuer: x509.Certificate) -> ClientCertificate | None:
    """The request's client certificate, as its connection first read it, checked
    against ``issuer``, the client CA."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        return handler.certificate(issuer)
    return _read_certificate(request.transport, issuer)


def authenticated(request: web.BaseRequest) -> None:
    """Mark the request's connection as trusted (called once its user is known)."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        handler.authenticated()


_Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]

#: Go's net/http answer to anything but HTTP/1.x, after which it closes the connection.
_VERSION_NOT_SUPPORTED = (
    b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"505 HTTP Version Not Supported: unsupported protocol version"
)


def only_http1(handler: _Handler) -> _Handler:
    """Answer HTTP/0.9 and HTTP/2+ request lines as Go's server does (505, then close)
    instead of in the request's own version; HTTP/1.x requests pass straight through."""

    def serve(request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        if request.version.major == 1:
            return handler(request)
        return _reject_version(request)

    return serve


async def _reject_version(request: web.BaseRequest) -> web.StreamResponse:
    transport = request.transport
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.write(_VERSION_NOT_SUPPORTED)
    request.protocol.force_close()
    # aiohttp finds the connection closed and writes nothing of this response.
    return web.Response(status=505)
