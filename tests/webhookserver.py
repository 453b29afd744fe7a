"""A webhook server for tests: aiohttp over TLS on 127.0.0.1, answering AdmissionReviews
by path with functions a test registers, and keeping every review it received."""

from __future__ import annotations

import asyncio
import base64
import ssl
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from pyocm.pki.ca import CertificateAuthority

Obj = dict[str, Any]
#: Given the review's request, the answer's ``response`` (uid and allowed filled in when
#: absent), or a whole body (bytes) to send as is.
Handler = Callable[[Obj], Awaitable[Obj | bytes] | Obj | bytes]


def allow() -> Obj:
    return {"allowed": True}


def deny(message: str = "", *, code: int | None = None, reason: str = "") -> Obj:
    result: Obj = {}
    if message:
        result["message"] = message
    if code is not None:
        result["code"] = code
    if reason:
        result["reason"] = reason
    return {"allowed": False, "status": result}


def patch(*operations: Obj) -> Obj:
    encoded = base64.b64encode(orjson.dumps(list(operations))).decode()
    return {"allowed": True, "patchType": "JSONPatch", "patch": encoded}


class WebhookServer:
    def __init__(self, *, hosts: tuple[str, ...] = ("127.0.0.1",)) -> None:
        self.ca = CertificateAuthority.create("webhook-test-ca", valid_for=timedelta(days=1))
        self.hosts = hosts
        self.handlers: dict[str, Handler] = {}
        self.reviews: dict[str, list[Obj]] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def on(self, path: str, handler: Handler) -> None:
        self.handlers[path] = handler
        self.reviews.setdefault(path, [])

    async def start(self) -> WebhookServer:
        cert, key = self.ca.issue_serving(hosts=list(self.hosts), valid_for=timedelta(days=1))
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "tls.crt").write_bytes(cert)
            (Path(tmp) / "tls.key").write_bytes(key)
            ctx.load_cert_chain(str(Path(tmp) / "tls.crt"), str(Path(tmp) / "tls.key"))
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=ctx)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.Response:
        review = await request.json()
        handler = self.handlers.get(request.path)
        if handler is None:
            return web.Response(status=404, text="no handler")
        self.reviews[request.path].append(review)
        answer = handler(review["request"])
        if asyncio.iscoroutine(answer):
            answer = await answer
        if isinstance(answer, bytes):
            return web.Response(body=answer, content_type="application/json")
        assert isinstance(answer, dict)
        response = {"uid": review["request"]["uid"], **answer}
        body = {"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}
        return web.json_response(body)
