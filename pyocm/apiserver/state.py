"""Everything a request handler needs, assembled once by :mod:`pyocm.apiserver.server`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.metrics import RequestMetrics

if TYPE_CHECKING:
    from pyocm.apiserver.authentication.authenticator import Authenticator
    from pyocm.apiserver.authorization.index import RbacIndex
    from pyocm.apiserver.config import ServerConfig
    from pyocm.apiserver.registry.catalog import Catalog
    from pyocm.apiserver.registry.store import Store
    from pyocm.pki.ca import CertificateAuthority


@dataclass
class ServerState:
    config: ServerConfig
    store: Store
    catalog: Catalog
    authenticator: Authenticator
    rbac: RbacIndex
    ca: CertificateAuthority
    sa_private_key: Any
    issuer: str
    #: Set when the server shuts down: open watches end.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _stopped: asyncio.Future[None] | None = field(default=None, repr=False, compare=False)
    version: dict[str, str] = field(default_factory=dict)
    metrics: RequestMetrics = field(default_factory=RequestMetrics)

    def stopped(self) -> asyncio.Future[None]:
        """One future for every open watch to wait on (not a task per watch): done when
        :attr:`stopping` is set. Callers must not cancel it."""
        if self._stopped is None:
            self._stopped = asyncio.ensure_future(self._wait_stopping())
        return self._stopped

    async def _wait_stopping(self) -> None:
        await self.stopping.wait()


STATE: web.AppKey[ServerState] = web.AppKey("pyocm_state", ServerState)
