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
    _stops: set[asyncio.Future[None]] = field(default_factory=set, repr=False, compare=False)
    _stopper: asyncio.Future[None] | None = field(default=None, repr=False, compare=False)
    version: dict[str, str] = field(default_factory=dict)
    metrics: RequestMetrics = field(default_factory=RequestMetrics)

    def stop_signal(self) -> asyncio.Future[None]:
        """A future of one open watch's own, done when :attr:`stopping` is set; hand it
        back to :meth:`release` when the watch ends. One task waits for the event for all
        of them. (Not one future that every watch waits on: removing a done callback
        from it rebuilds its list of every watch's callbacks, at each wake of each
        watch, which grows with the square of the watches.)"""
        future = asyncio.get_running_loop().create_future()
        if self.stopping.is_set():
            future.set_result(None)
            return future
        self._stops.add(future)
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(self._stop_all())
        return future

    def release(self, signal: asyncio.Future[None]) -> None:
        self._stops.discard(signal)

    async def _stop_all(self) -> None:
        await self.stopping.wait()
        stops, self._stops = self._stops, set()
        for signal in stops:
            if not signal.done():
                signal.set_result(None)


STATE: web.AppKey[ServerState] = web.AppKey("pyocm_state", ServerState)
