"""What the security tests share: a caller with no credential at all, or with any
certificate or bearer token the test makes up, against a real hub over real TLS."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest_asyncio

from pyocm.testing import HubProcess

#: A request is "not served" when it fails at the TLS layer or gets one of these.
TLS_FAILURES = (aiohttp.ClientError, ssl.SSLError, ConnectionError)


class Caller:
    """Raw HTTPS to the hub, verifying the hub's CA, presenting whatever it was given.

    ``request`` answers (status, decoded body); JSON bodies are sent as given."""

    def __init__(
        self,
        hub: HubProcess,
        *,
        cert: tuple[Path, Path] | None = None,
        authorization: str | None = None,
    ) -> None:
        self.ssl = ssl.create_default_context(cadata=hub.ca_pem.decode())
        if cert is not None:
            self.ssl.load_cert_chain(*cert)
        headers = {"Authorization": authorization} if authorization is not None else {}
        self.session = aiohttp.ClientSession(base_url=hub.url, headers=headers)

    async def close(self) -> None:
        await self.session.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = orjson.dumps(body) if body is not None else None
        sent = {"Content-Type": content_type} if data is not None else {}
        sent.update(headers or {})
        async with self.session.request(
            method, path, data=data, params=params, headers=sent, ssl=self.ssl
        ) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                return resp.status, raw.decode(errors="replace")


@pytest_asyncio.fixture
async def anonymous(hub: HubProcess) -> AsyncIterator[Caller]:
    """A caller with no client certificate and no Authorization header."""
    caller = Caller(hub)
    yield caller
    await caller.close()


def is_unauthorized(code: int, body: Any) -> bool:
    """kube's 401: a Status with reason Unauthorized, and nothing else in it."""
    return (
        code == 401
        and isinstance(body, dict)
        and body.get("kind") == "Status"
        and body.get("reason") == "Unauthorized"
        and "items" not in body
    )
