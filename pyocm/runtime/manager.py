"""Runs a set of controllers over shared informers, optionally only while leading.

Controllers ask the manager for informers; two asking for the same kind, namespace and
selectors share one list+watch and one cache. Informers may watch several APIs: a work
or add-on agent watches the hub and its managed cluster at once, and one controller's
watches map changes from either to keys of its one root kind::

    works = manager.informer(kinds.MANIFEST_WORK, namespace=cluster)          # the hub
    applied = manager.informer(kinds.CONFIGMAP, api=spoke, labels=selector)  # the spoke
    controller = manager.controller("work", reconcile)
    controller.watch(works)
    controller.watch(applied, enqueue_owner(kinds.APPLIED_MANIFEST_WORK))

:meth:`Manager.run` starts the informers,
then the controllers, and stops them all (no task left behind) when cancelled or when
leadership is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pyocm.base.clock import Clock, RealClock
from pyocm.kube.kinds import Kind
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Controller
from pyocm.runtime.informer import Informer
from pyocm.runtime.leaderelection import LeaderElector

log = logging.getLogger(__name__)
Runnable = Callable[[], Coroutine[Any, Any, None]]


class LeadershipLost(RuntimeError):
    """The manager's lease went to another holder (or could not be renewed in time)."""


class Manager:
    def __init__(
        self, api: Api, *, clock: Clock | None = None, resync: float | None = None
    ) -> None:
        self.api = api
        self.clock = clock or RealClock()
        self._resync = resync
        # Keyed by the API's identity too: the same kind on the hub and on a managed
        # cluster are two caches.
        self._informers: dict[tuple[int, Kind, str | None, str | None, str | None], Informer] = {}
        self._controllers: list[Controller] = []
        self._runnables: list[tuple[str, Runnable]] = []
        self._active = False

    def informer(
        self,
        kind: Kind,
        *,
        api: Api | None = None,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Informer:
        """The shared informer of ``kind`` on ``api`` (the manager's own by default)."""
        api = api or self.api
        key = (id(api), kind, namespace, labels, fields)
        found = self._informers.get(key)
        if found is None:
            found = Informer(
                api,
                kind,
                namespace=namespace,
                labels=labels,
                fields=fields,
                resync=self._resync,
                clock=self.clock,
            )
            self._informers[key] = found
        return found

    def controller(
        self, name: str, reconcile: Callable[[str], Awaitable[object]], *, workers: int = 1
    ) -> Controller:
        made = Controller(name, reconcile, workers=workers, clock=self.clock)  # type: ignore[arg-type]
        self._controllers.append(made)
        return made

    def controllers_named(self, name: str) -> list[Controller]:
        """The controllers added under ``name`` (to wake them from another's event)."""
        return [c for c in self._controllers if c.name == name]

    def add(self, name: str, runnable: Runnable) -> None:
        """Run ``runnable`` (a periodic job, say) alongside the controllers."""
        self._runnables.append((name, runnable))

    @property
    def synced(self) -> bool:
        """Whether every informer has listed once (the controllers act on whole caches)."""
        return all(informer.has_synced for informer in self._informers.values())

    @property
    def ready(self) -> bool:
        """A readiness probe's answer: a replica waiting for the lease is ready (it stands
        by, as controller-runtime's are); one running its controllers once its caches
        have synced."""
        return not self._active or self.synced

    async def wait_synced(self) -> None:
        await asyncio.gather(*(informer.wait_synced() for informer in self._informers.values()))

    async def run(self, *, elector: LeaderElector | None = None) -> None:
        """Run until cancelled; with ``elector``, only while holding its lease.

        Losing the lease raises :class:`LeadershipLost` after every controller has
        stopped, as client-go's controllers exit: another replica may already be acting,
        so nothing of this term (caches, queues, backoffs) may carry into a next one.
        """
        if elector is None:
            await self._run_all()
            return
        await elector.acquire()
        log.info("became leader as %s", elector.identity)
        work = asyncio.create_task(self._run_all())
        held = asyncio.create_task(elector.hold())
        try:
            await asyncio.wait({work, held}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, held):
                task.cancel()
            # gather keeps a cancellation of run() itself propagating.
            await asyncio.gather(work, held, return_exceptions=True)
            await elector.release()
        if not work.cancelled() and work.exception() is not None:
            raise work.exception()  # type: ignore[misc]
        raise LeadershipLost(f"lost the lease as {elector.identity}")

    async def _run_all(self) -> None:
        self._active = True
        tasks = [
            asyncio.create_task(informer.run(), name=f"informer {informer.kind}")
            for informer in self._informers.values()
        ]
        try:
            await self.wait_synced()
            tasks += [asyncio.create_task(c.run(), name=c.name) for c in self._controllers]
            tasks += [asyncio.create_task(run(), name=name) for name, run in self._runnables]
            await asyncio.gather(*tasks)
        finally:
            self._active = False
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
