"""Starts and stops the server's own controllers together."""

from __future__ import annotations

from typing import Protocol

from pyocm.apiserver.controllers.aggregation import AggregationController
from pyocm.apiserver.controllers.base import KeyedLoop
from pyocm.apiserver.controllers.csrsigner import CsrCleaner, CsrSigner
from pyocm.apiserver.controllers.eventttl import EventTtl
from pyocm.apiserver.controllers.gc import GarbageCollector
from pyocm.apiserver.controllers.namespaces import NamespaceController
from pyocm.apiserver.state import ServerState
from pyocm.base.clock import Clock


class Controller(Protocol):
    loop: KeyedLoop

    async def start(self) -> None: ...


class Controllers:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._all: list[Controller] = [
            NamespaceController(state, clock=clock),
            GarbageCollector(state, clock=clock),
            CsrSigner(state, clock=clock),
            CsrCleaner(state, clock=clock),
            AggregationController(state, clock=clock),
            EventTtl(state, clock=clock),
        ]

    async def start(self) -> None:
        for controller in self._all:
            await controller.start()

    async def stop(self) -> None:
        for controller in self._all:
            await controller.loop.stop()
