"""What the security tests share: a caller with no credential at all, or with any
certificate or bearer token the test makes up, against a real hub over real TLS."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio

from pyocm.testing import Client, HubProcess

#: A request is "not served" when it fails at the TLS layer or gets one of these.
TLS_FAILURES = (aiohttp.ClientError, ssl.SSLError, ConnectionError)


class Caller(Client):
    """Raw HTTPS to the hub, verifying the hub's CA, presenting whatever it was given:
    no credential, any client certificate, any Authorization header."""

    def __init__(
        self,
        hub: HubProcess,
        *,
        cert: tuple[Path, Path] | None = None,
        authorization: str | None = None,
    ) -> None:
        context = ssl.create_default_context(cadata=hub.ca_pem.decode())
        if cert is not None:
            context.load_cert_chain(*cert)
        self._init(server=hub.url, ssl_context=context, authorization=authorization)
        self.open()


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
