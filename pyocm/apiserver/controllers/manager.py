"""Starts and stops the server's own controllers together.

On shared storage (several API server replicas on one etcd) they start as followers:
indexes and queues kept current, nothing reconciled, until :meth:`Controllers.lead`
(this replica took the controllers' Lease); :meth:`Controllers.follow` hands the work
back when the Lease is lost. On its own a server leads from the start.
"""

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

    async def start(self, *, leading: bool = True) -> None:
        for controller in self._all:
            controller.loop.held = not leading
            await controller.start()

    @property
    def leading(self) -> bool:
        return all(controller.loop.working for controller in self._all)

    def lead(self) -> None:
        """Work every controller's queue (this replica holds the Lease)."""
        for controller in self._all:
            controller.loop.held = False
            controller.loop.start()

    async def follow(self) -> None:
        """Stop working the queues, keep them current (another replica leads)."""
        for controller in self._all:
            controller.loop.held = True
            await controller.loop.pause()

    async def stop(self) -> None:
        for controller in self._all:
            await controller.loop.stop()
