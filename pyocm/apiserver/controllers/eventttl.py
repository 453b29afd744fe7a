"""Events expire an hour after they were last seen (kube-apiserver's --event-ttl)."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from pyocm.apiserver.controllers.base import SYSTEM, KeyedLoop
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import status, timefmt

EVENT_TTL = timedelta(hours=1)
SWEEP_SECONDS = 300.0


class EventTtl:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        info = state.catalog.get("", "v1", "events")
        assert info is not None
        self._info = info
        self._clock = clock or RealClock()
        self.loop = KeyedLoop("event-ttl", self._sweep, clock=self._clock)

    async def start(self) -> None:
        self.loop.start()
        self.loop.add("sweep")

    async def _sweep(self, key: str) -> float:
        _, events = await self._state.store.list(self._info, namespace="")
        cutoff = self._clock.now() - EVENT_TTL
        for event in events:
            stamp = (
                event.get("lastTimestamp")
                or event.get("eventTime")
                or event["metadata"].get("creationTimestamp")
            )
            try:
                seen = timefmt.parse_time(str(stamp))
            except ValueError:
                continue
            if seen < cutoff:
                with contextlib.suppress(status.ApiError):
                    await self._state.store.delete(
                        self._info,
                        name=event["metadata"]["name"],
                        ctx=Context(user=SYSTEM, namespace=event["metadata"].get("namespace", "")),
                        options=DeleteOptions(),
                    )
        return SWEEP_SECONDS
