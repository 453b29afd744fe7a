"""The worker loop of the server's own controllers, over the project's one work queue.

These controllers are part of the server (as kube-controller-manager's are part of a
cluster), so they read and write through the generic store directly. Their keys go
through :class:`pyocm.base.queue.WorkQueue` (deduplicated while queued, one worker per
key at a time, earliest delayed add wins); a failed key is retried after a fixed delay.

With several API server replicas on one etcd, every replica keeps its controllers'
indexes and queues current (storage commits feed them in every process) but only the
one holding the controllers' Lease works its queues: :meth:`KeyedLoop.pause` and
:meth:`KeyedLoop.start` hand the work over without losing a key.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.base import metrics
from pyocm.base.clock import Clock
from pyocm.base.queue import WorkQueue
from pyocm.kube import status

SYSTEM = UserInfo(name="system:kube-controller-manager", groups=(MASTERS,))
log = logging.getLogger("pyocm.apiserver.controllers")


class KeyedLoop:
    """Runs ``reconcile(key)`` for queued keys, ``workers`` keys at a time (never one key
    twice at once). ``reconcile`` returns seconds after which to look again, or None. A
    key whose reconcile raises is tried again ``retry_after`` seconds later, except on
    NotFound (the object is gone)."""

    def __init__(
        self,
        name: str,
        reconcile: Callable[[str], Awaitable[float | None]],
        *,
        clock: Clock | None = None,
        retry_after: float = 1.0,
        workers: int = 1,
    ) -> None:
        self.name = name
        self.queue = WorkQueue(clock=clock, stats=metrics.queue_stats(name))
        self._stats = metrics.reconcile_stats(name)
        self._reconcile = reconcile
        self._retry_after = retry_after
        self._workers = workers
        self._task: asyncio.Task[None] | None = None
        #: The keys being reconciled, put back in the queue when the workers are paused.
        self._current: set[str] = set()
        #: While held, :meth:`start` does not start the worker (a replica that does not
        #: lead sets it before its controllers start).
        self.held = False

    def add(self, key: str) -> None:
        self.queue.add(key)

    def add_after(self, key: str, delay: float) -> None:
        self.queue.add_after(key, delay)

    def start(self) -> None:
        """Work the queue (again, after :meth:`pause`), unless :attr:`held`."""
        if not self.held and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run(), name=self.name)

    @property
    def working(self) -> bool:
        return self._task is not None and not self._task.done()

    async def pause(self) -> None:
        """Stop working the queue but keep it filling: a key cancelled in flight goes back
        in, so whoever works the queue next reconciles it from the start."""
        if self._task is None:
            return
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None
        for key in self._current:
            self.queue.add(key)
        self._current.clear()

    async def stop(self) -> None:
        """Drop queued and delayed keys and end the worker (cancelling a reconcile in
        flight: the next start reads the state afresh)."""
        self.queue.shut_down()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        await asyncio.gather(*(self.queue.serve(self._process) for _ in range(self._workers)))

    async def _process(self, key: str) -> None:
        started = time.perf_counter()
        self._current.add(key)
        outcome = await self._outcome(key)
        self._current.discard(key)
        self._stats.record(outcome, time.perf_counter() - started)

    async def _outcome(self, key: str) -> str:
        """Reconcile ``key``, schedule what that asks for; the result label."""
        try:
            again = await self._reconcile(key)
        except status.ApiError as err:
            if err.reason == "NotFound":
                return "success"  # the object is gone: nothing is left to do
            log.info("%s: %s: %s", self.name, key, err.message)
            self.queue.add_after(key, self._retry_after)
            return "error"
        except Exception:
            log.exception("%s: reconciling %s failed", self.name, key)
            self.queue.add_after(key, self._retry_after)
            return "error"
        if again is not None:
            self.queue.add_after(key, again)
            return "requeue_after"
        return "success"
