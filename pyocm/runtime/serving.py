"""Serving a small aiohttp application beside a process's real work: the metrics and
health listener of every command, and the webhook server."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def serve(
    app: web.Application, *, host: str | None, port: int, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[list[str]]:
    """Serve ``app`` on ``host`` (None: every interface) and ``port`` (0: a free one)
    while inside; yields each bound address as ``HOST:PORT`` (IPv6 hosts bracketed)."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, ssl_context=ssl_context).start()
        yield [_address(bound) for bound in runner.addresses]
    finally:
        await runner.cleanup()


def _address(bound: object) -> str:
    host, port = bound[:2] if isinstance(bound, tuple) else (str(bound), 0)
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
