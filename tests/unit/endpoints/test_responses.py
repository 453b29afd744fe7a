"""Answers are written whole, then let go: idle keep-alive connections hold no bodies."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from pyocm.apiserver.endpoints.responses import json_response


async def test_an_answer_lets_go_of_its_body_once_written() -> None:
    sent: list[web.Response] = []

    async def handler(request: web.Request) -> web.Response:
        response = json_response({"kind": "Lease", "spec": {"renewTime": "now"}}, code=201)
        sent.append(response)
        return response

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        async with aiohttp.ClientSession() as session:
            for _ in range(2):  # the second request reuses the kept-alive connection
                async with session.get(f"http://127.0.0.1:{port}/") as answer:
                    assert answer.status == 201
                    assert answer.headers["Content-Type"] == "application/json"
                    assert await answer.json() == {"kind": "Lease", "spec": {"renewTime": "now"}}
                assert sent[-1].body is None
    finally:
        await runner.cleanup()
