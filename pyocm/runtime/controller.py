"""A level-based controller: watched changes become keys, workers reconcile keys.

A controller has one root kind. Its reconcile function gets a key of that kind, reads
the state of the world (from informer caches or the API), makes it right, and returns
a :class:`Result`; it never sees the event that woke it, so missed or merged events
cannot make it wrong. A raised exception retries the key with backoff; a Conflict from
a concurrent writer is retried shortly, without backoff. Unexpected exceptions are logged
with their traceback (they are bugs); :class:`Waiting` and API errors are states of the
world and get one line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pyocm.base import metrics
from pyocm.base.clock import Clock, RealClock
from pyocm.base.queue import WorkQueue
from pyocm.kube.status import ApiError
from pyocm.runtime.cache import key_of
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
log = logging.getLogger(__name__)
CONFLICT_RETRY = 0.05


class Waiting(Exception):
    """The reconcile cannot finish until something else changes: an object it needs does
    not exist yet (``kubectl apply -f dir/`` creates a referrer a moment before what it
    names), or holds something it cannot act on until someone fixes it. An expected
    state, not a bug: the controller logs the message as one line, without a traceback,
    and retries the key with backoff as for any failure (upstream's controllers return
    such errors from sync and the queue retries them, logged as one line)."""


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for next: nothing, or another look after some seconds."""

    requeue_after: float | None = None


Reconcile = Callable[[str], Awaitable[Result | None]]
Mapper = Callable[[Obj], Iterable[str]]


def own_key(obj: Obj) -> list[str]:
    """The mapper for the root kind: the object's own key."""
    return [key_of(obj)]


class Controller:
    def __init__(
        self, name: str, reconcile: Reconcile, *, workers: int = 1, clock: Clock | None = None
    ) -> None:
        self.name = name
        self._reconcile = reconcile
        self._workers = workers
        self.queue = WorkQueue(clock=clock or RealClock(), stats=metrics.queue_stats(name))
        self._stats = metrics.reconcile_stats(name)
        self._informers: list[Informer] = []

    def watch(
        self,
        informer: Informer,
        mapper: Mapper = own_key,
        *,
        predicate: Callable[[Change], bool] | None = None,
        delay: float = 0,
    ) -> None:
        """Enqueue ``mapper(obj)`` for every change ``informer`` sees (that ``predicate`` passes).

        With ``delay``, a key is reconciled that many seconds after the first change that
        asked for it, so a burst of changes (a fleet joining) costs one reconcile."""

        def handle(change: Change) -> None:
            if predicate is not None and not predicate(change):
                return
            objs = (
                [change.obj]
                if change.old is None or change.new is None
                else [change.old, change.new]
            )
            for obj in objs:
                for key in mapper(obj):
                    self.queue.add_after(key, delay)

        informer.add_handler(handle)
        self._informers.append(informer)

    def enqueue(self, key: str, *, after: float = 0) -> None:
        self.queue.add_after(key, after)

    async def run(self) -> None:
        """Wait for the watched informers' caches, then work until cancelled."""
        for informer in self._informers:
            await informer.wait_synced()
        workers = [
            asyncio.create_task(self._work(), name=f"{self.name}-{i}") for i in range(self._workers)
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            self.queue.shut_down()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _work(self) -> None:
        await self.queue.serve(self.process)

    async def process(self, key: str) -> None:
        """Reconcile one key, schedule what its outcome asks for, and count it
        (``controller_runtime_reconcile_*``)."""
        started = time.perf_counter()
        outcome = await self._outcome(key)
        self._stats.record(outcome, time.perf_counter() - started)

    async def _outcome(self, key: str) -> str:
        try:
            result = await self._reconcile(key)
        except asyncio.CancelledError:
            raise
        except ApiError as err:
            if err.code == 409:
                # Someone wrote first and the cache has not caught up: look again soon,
                # without growing the key's backoff (conflicts are not failures).
                log.debug("%s: %s: conflict, retrying", self.name, key)
                self.queue.add_after(key, CONFLICT_RETRY)
                return "error"
            log.warning("%s: %s: %s (%s)", self.name, key, err.message, err.reason)
            self.queue.add_rate_limited(key)
            return "error"
        except Waiting as err:
            log.warning("%s: %s: %s", self.name, key, err)
            self.queue.add_rate_limited(key)
            return "error"
        except Exception as err:
            log.warning("%s: %s: %s: %s", self.name, key, type(err).__name__, err, exc_info=True)
            self.queue.add_rate_limited(key)
            return "error"
        self.queue.forget(key)
        if result is not None and result.requeue_after is not None:
            self.queue.add_after(key, result.requeue_after)
            return "requeue_after"
        return "success"
