"""Edges of the protocol answered as kube-apiserver (Go's net/http) answers them."""

from __future__ import annotations

import socket
import ssl

from pyocm.testing import Client, HubProcess

GO_505 = (
    b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"505 HTTP Version Not Supported: unsupported protocol version"
)


def _exchange(hub: HubProcess, request: bytes) -> bytes:
    """Send raw bytes over TLS and read until the server closes the connection."""
    ctx = ssl.create_default_context(cadata=hub.ca_pem.decode())
    ctx.check_hostname = False
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", hub.port), timeout=10)) as sock:
        sock.sendall(request)
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionError, ssl.SSLError):
                break
            if not chunk:
                break
            data += chunk
    return data


def test_http_0_9_is_refused_as_go_refuses_it(hub: HubProcess) -> None:
    assert _exchange(hub, b"GET / HTTP/0.9\r\n\r\n") == GO_505


def test_http_2_request_lines_are_refused_too(hub: HubProcess) -> None:
    assert _exchange(hub, b"GET / HTTP/2.0\r\nHost: hub\r\n\r\n") == GO_505


async def test_watch_is_false_only_for_0_and_false(admin: Client) -> None:
    """apimachinery's Convert_Slice_string_To_bool: any other value, "no" included, is true."""
    path = "/api/v1/namespaces/default/configmaps"
    for value in ("no", "yesplease", "f"):
        async with admin.session.get(
            path, params={"watch": value, "timeoutSeconds": "1"}, ssl=admin._ssl
        ) as resp:
            assert resp.status == 200
            assert resp.headers.get("Transfer-Encoding") == "chunked", value
            await resp.read()
    for value in ("0", "false", "FALSE"):
        status, body = await admin.get(path, params={"watch": value})
        assert status == 200 and body["kind"] == "ConfigMapList", value


async def test_a_negative_timeout_ends_the_watch_at_once(admin: Client) -> None:
    """kube-apiserver's watch deadline is now + timeoutSeconds: a negative one has passed."""
    path = "/api/v1/namespaces/default/configmaps"
    async with admin.session.get(
        path,
        params={"watch": "true", "timeoutSeconds": "-1", "labelSelector": "never=matches"},
        ssl=admin._ssl,
        timeout=__import__("aiohttp").ClientTimeout(total=15),
    ) as resp:
        assert resp.status == 200
        assert await resp.read() == b""
