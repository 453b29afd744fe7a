"""The hub's TLS as clients meet it."""

from __future__ import annotations

import asyncio
import ssl

from pyocm.pki import kubeconfig
from pyocm.testing import HubProcess


async def test_the_hub_speaks_tls13_and_issues_no_session_tickets(hub: HubProcess) -> None:
    # No Kubernetes client resumes TLS sessions, and writing a ticket made OpenSSL 3.0
    # decode the whole session again: it was 40 % of the hub's cost of a new connection.
    ctx = kubeconfig.client_ssl_context(kubeconfig.load_kubeconfig(hub.kubeconfig))
    ctx.set_alpn_protocols(["h2", "http/1.1"])  # as client-go offers them
    reader, writer = await asyncio.open_connection("127.0.0.1", hub.port, ssl=ctx)
    try:
        writer.write(b"GET /version HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n")
        answer = await reader.read()  # tickets, when sent, come before the answer
        assert answer.startswith(b"HTTP/1.1 200")
        tls: ssl.SSLObject = writer.get_extra_info("ssl_object")
        assert tls.version() == "TLSv1.3"
        assert tls.selected_alpn_protocol() == "http/1.1"
        assert tls.session is not None and not tls.session.has_ticket
    finally:
        writer.close()
