"""Connections that never become requests are closed, and a flood cannot starve the hub.

kube-apiserver's Go server gives a client 32 s (ReadHeaderTimeout) for the TLS handshake
and again for each request's headers, and closes idle connections after 90 s. The hub
does the same with configurable limits (short ones here), keeps authenticated keep-alive
connections and watches open, and caps the connections it holds: at the cap, the oldest
connection that never authenticated makes room, so the admin still gets in.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.testing import Client, HubProcess
from tests.support import eventually

#: Generous bounds for closes the hub should make after 1-2 s timeouts.
CLOSED_WITHIN = 15.0


@pytest.fixture(scope="module")
def strict_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    args = [
        "--no-controllers",
        "--tls-handshake-timeout", "1",
        "--read-header-timeout", "1",
        "--unauthenticated-idle-timeout", "2",
    ]  # fmt: skip
    with HubProcess(tmp_path_factory.mktemp("strict-hub"), extra_args=args) as process:
        yield process


@pytest.fixture(scope="module")
def capped_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    args = ["--no-controllers", "--max-connections", "30"]
    with HubProcess(tmp_path_factory.mktemp("capped-hub"), extra_args=args) as process:
        yield process


def _tls_context(hub: HubProcess, cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=hub.ca_pem.decode())
    ctx.check_hostname = False
    if cert is not None:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    return ctx


def _admin_cert(hub: HubProcess, tmp_path: Path) -> tuple[Path, Path]:
    identity = hub.identity("security-admin", ("system:masters",))
    cert, key = tmp_path / "admin.crt", tmp_path / "admin.key"
    cert.write_bytes(identity.cert)
    key.write_bytes(identity.key)
    return cert, key


def _connect_tls(hub: HubProcess, cert: tuple[Path, Path] | None = None) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", hub.port), timeout=10)
    return _tls_context(hub, cert).wrap_socket(raw)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the peer closes ``sock`` within ``seconds`` (reading nothing else)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except (ConnectionError, ssl.SSLError):
        return True


def _get(sock: socket.socket, path: str) -> bytes:
    """One keep-alive GET on an open connection; the response's status line and headers."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: hub\r\n\r\n".encode())
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_a_connection_that_never_starts_its_handshake_is_closed(strict_hub: HubProcess) -> None:
    with socket.create_connection(("127.0.0.1", strict_hub.port), timeout=10) as sock:
        assert _closed_within(sock, CLOSED_WITHIN)


def test_a_connection_that_never_sends_a_request_is_closed(strict_hub: HubProcess) -> None:
    with _connect_tls(strict_hub) as sock:
        assert _closed_within(sock, CLOSED_WITHIN)


def _dribbled_until_closed(sock: ssl.SSLSocket) -> bool:
    """Send a header byte at a time until the hub closes the connection (or give up)."""
    deadline = time.monotonic() + CLOSED_WITHIN
    while time.monotonic() < deadline:
        try:
            sock.sendall(b"a")
        except (ConnectionError, ssl.SSLError):
            return True
        if _closed_within(sock, 0.2):
            return True
    return False


def test_headers_sent_a_byte_at_a_time_are_cut_off(strict_hub: HubProcess) -> None:
    """Slowloris: a request whose headers never end is closed at the header timeout."""
    with _connect_tls(strict_hub) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: hub\r\nX-Slow: ")
        assert _dribbled_until_closed(sock)


def test_an_idle_anonymous_connection_is_closed(strict_hub: HubProcess) -> None:
    with _connect_tls(strict_hub) as sock:
        assert _get(sock, "/healthz").startswith(b"HTTP/1.1 200")
        assert _closed_within(sock, CLOSED_WITHIN)


def test_an_authenticated_connection_is_kept_alive(
    strict_hub: HubProcess, tmp_path: Path
) -> None:
    with _connect_tls(strict_hub, _admin_cert(strict_hub, tmp_path)) as sock:
        assert _get(sock, "/version").startswith(b"HTTP/1.1 200")
        # Longer than every timeout for connections that never authenticated.
        assert not _closed_within(sock, 4.0)
        assert _get(sock, "/api/v1/namespaces/default").startswith(b"HTTP/1.1 200")


async def test_a_watch_outlives_the_connection_timeouts(strict_hub: HubProcess) -> None:
    async with Client(strict_hub.kubeconfig) as admin:
        path = "/api/v1/namespaces/default/configmaps"

        async def create_later() -> None:
            await asyncio.sleep(4.0)
            status, _ = await admin.post(path, {"metadata": {"name": "late"}, "data": {}})
            assert status == 201

        watching = admin.watch_lines(
            path,
            params={"timeoutSeconds": "30", "fieldSelector": "metadata.name=late"},
            limit=1,
            timeout=20,
        )
        events, _ = await asyncio.gather(watching, create_later())
    assert [event["type"] for event in events] == ["ADDED"]


def _open_silent(port: int, count: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]


def _count_closed(socks: list[socket.socket], *, at_least: int, within: float) -> int:
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + within
    while len(closed) < at_least and time.monotonic() < deadline:
        waiting = [sock for sock in socks if sock not in closed]
        readable, _, _ = select.select(waiting, [], [], 0.2)
        for sock in readable:
            if _closed_within(sock, 0.1):
                closed.add(sock)
    return len(closed)


async def test_at_the_cap_silent_connections_make_room_for_the_admin(
    capped_hub: HubProcess,
) -> None:
    flood = _open_silent(capped_hub.port, 60)
    try:
        # The cap (30) is reached: the oldest connections that never authenticated are
        # closed long before their handshake timeout (32 s) would close them.
        assert _count_closed(flood, at_least=30, within=CLOSED_WITHIN) >= 30
        async with Client(capped_hub.kubeconfig) as admin:
            status, _ = await admin.get("/readyz")
        assert status == 200
    finally:
        for sock in flood:
            sock.close()
    warnings = [line for line in capped_hub.log().splitlines() if "connection limit" in line]
    assert len(warnings) == 1, warnings  # logged once per interval, not per connection


def test_an_authenticated_connection_that_dribbles_its_next_headers_is_cut_off(
    strict_hub: HubProcess, tmp_path: Path
) -> None:
    """As Go's ReadHeaderTimeout: once a request's first byte arrives, its headers must
    come within the header timeout on every connection, trusted ones too (before, a
    connection that had authenticated once kept only the 120 s keep-alive)."""
    with _connect_tls(strict_hub, _admin_cert(strict_hub, tmp_path)) as sock:
        assert _get(sock, "/version").startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: hub\r\nX-Slow: ")
        assert _dribbled_until_closed(sock)


@pytest.fixture(scope="module")
def small_capped_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    args = ["--no-controllers", "--max-connections", "6"]
    with HubProcess(tmp_path_factory.mktemp("small-capped-hub"), extra_args=args) as process:
        yield process


async def test_at_the_cap_idle_authenticated_connections_make_room_for_the_admin(
    small_capped_hub: HubProcess, tmp_path: Path
) -> None:
    """Any valid credential (here a certificate of a user with no rights at all) used
    to make a connection safe from the cap: a few of them, idle, locked the admin out.
    Now the oldest idle one makes room (its client reconnects when it next needs to)."""
    hub = small_capped_hub
    nobody = hub.identity("nobody-at-all", ())
    cert, key = tmp_path / "nobody.crt", tmp_path / "nobody.key"
    cert.write_bytes(nobody.cert)
    key.write_bytes(nobody.key)
    held: list[ssl.SSLSocket] = []
    try:
        for _ in range(6):
            sock = _connect_tls(hub, (cert, key))
            held.append(sock)
            assert _get(sock, "/version").startswith(b"HTTP/1.1 200")
        async with Client(hub.kubeconfig) as admin:
            status, _ = await asyncio.wait_for(admin.get("/readyz"), 30)
        assert status == 200
        assert _closed_within(held[0], CLOSED_WITHIN), "the oldest idle one made room"
        assert _get(held[-1], "/version").startswith(b"HTTP/1.1 200"), "the newest kept"
    finally:
        for sock in held:
            sock.close()


async def test_at_the_cap_connections_serving_requests_are_not_closed(
    small_capped_hub: HubProcess, tmp_path: Path
) -> None:
    """Watches (requests in progress) are never closed to make room: when every
    connection is serving one, a newcomer is refused."""
    hub = small_capped_hub
    async with Client(hub.kubeconfig) as admin:
        serving = [asyncio.Event() for _ in range(6)]

        async def watch(answered: asyncio.Event) -> None:
            params = {"timeoutSeconds": "20", "fieldSelector": "metadata.name=none"}
            async with admin.watch("/api/v1/namespaces/default/configmaps", params=params) as resp:
                assert resp.status == 200
                answered.set()
                async for _ in resp.content:
                    pass

        watches = [asyncio.create_task(watch(answered)) for answered in serving]
        # Probe only once all six are served: a probe's connection during their
        # handshakes would be one of seven, and a handshake the oldest to close.
        await asyncio.wait_for(asyncio.gather(*(answered.wait() for answered in serving)), 30)
        await eventually(lambda: asyncio.to_thread(_refused, hub))
        assert not any(watch.done() for watch in watches), "no watch was closed"
        for watch_task in watches:
            watch_task.cancel()
        await asyncio.gather(*watches, return_exceptions=True)


def _refused(hub: HubProcess) -> bool:
    """Whether a new connection is closed before it can be served."""
    try:
        sock = _connect_tls(hub)
    except (ConnectionError, ssl.SSLError, OSError):
        return True
    with sock:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: hub\r\n\r\n")
            return sock.recv(1) == b""
        except (ConnectionError, ssl.SSLError):
            return True
