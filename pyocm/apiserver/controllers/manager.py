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


class Controller(Protocol):
    loop: KeyedLoop

    async def start(self) -> None: ...


class Controllers:
    def __init__(self, state: ServerState) -> None:
        self._all: list[Controller] = [
            NamespaceController(state),
            GarbageCollector(state),
            CsrSigner(state),
            CsrCleaner(state),
            AggregationController(state),
            EventTtl(state),
        ]

    async def start(self) -> None:
        for controller in self._all:
            await controller.start()

    async def stop(self) -> None:
        for controller in self._all:
            await controller.loop.stop()
