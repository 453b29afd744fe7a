"""A work queue of object keys with client-go's guarantees.

* A key waiting in the queue is there once, however often it is added (deduplication).
* A key is handed to one worker at a time: added again while being processed, it waits
  in ``dirty`` and goes back into the queue when that worker calls :meth:`done`.
* :meth:`add_after` delays an add; of several pending delays for a key, the earliest
  wins. :meth:`add_rate_limited` delays by a per-key exponential backoff that
  :meth:`forget` resets.

Level-based controllers rely on the first two: whatever happened to an object while
its key waited, one reconcile sees the latest state.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from pyocm.base.clock import Clock, RealClock
from pyocm.base.metrics import QueueStats


class ShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down and drained of waiters."""


class WorkQueue:
    def __init__(
        self,
        *,
        clock: Clock | None = None,
        base_delay: float = 0.005,
        max_delay: float = 300.0,
        stats: QueueStats | None = None,
    ) -> None:
        """``stats``, when given, gets client-go's work-queue numbers (depth, adds,
        retries, time queued, time worked); :func:`pyocm.base.metrics.queue_stats`."""
        self._clock = clock or RealClock()
        self._stats = stats
        #: When each key was added (waiting) or handed out (processing), for ``stats``.
        self._added_at: dict[str, float] = {}
        self._started_at: dict[str, float] = {}
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._ready = asyncio.Event()
        self._shutting_down = False
        self._delayed: dict[str, tuple[float, asyncio.Task[None]]] = {}
        self._failures: dict[str, int] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: str) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self._stats is not None:
            self._stats.adds += 1
            self._stats.depth += 1
            self._added_at[key] = self._clock.monotonic()
        if key not in self._processing:
            self._queue.append(key)
            self._ready.set()

    async def get(self) -> str:
        """The next key; the caller must call :meth:`done` with it when finished."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        if self._stats is not None:
            now = self._clock.monotonic()
            self._stats.depth -= 1
            self._stats.queue_seconds.observe(now - self._added_at.pop(key, now))
            self._started_at[key] = now
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if self._stats is not None and key in self._started_at:
            self._stats.work_seconds.observe(self._clock.monotonic() - self._started_at.pop(key))
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()

    async def serve(self, process: Callable[[str], Awaitable[None]]) -> None:
        """One worker: hand each key to ``process`` until the queue shuts down, marking
        it done whatever ``process`` did (raised, or was cancelled)."""
        while True:
            try:
                key = await self.get()
            except ShutDown:
                return
            try:
                await process(key)
            finally:
                self.done(key)
            # A key whose processing never suspended (nothing to write) would otherwise
            # lead straight to the next: a backlog would hold the event loop, and with it
            # every API request the process serves, until it drained.
            await asyncio.sleep(0)

    def add_after(self, key: str, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        deadline = self._clock.monotonic() + delay
        pending = self._delayed.get(key)
        if pending is not None:
            if pending[0] <= deadline:
                return
            pending[1].cancel()
        task = asyncio.get_running_loop().create_task(self._add_later(key, deadline))
        self._delayed[key] = (deadline, task)

    async def _add_later(self, key: str, deadline: float) -> None:
        # The deadline is fixed when the add is asked for, not when this task first runs.
        await self._clock.sleep(deadline - self._clock.monotonic())
        self._delayed.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: str) -> None:
        """Add after this key's next backoff: base_delay doubling per failure, capped."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        if self._stats is not None:
            self._stats.retries += 1
        self.add_after(key, min(self._base_delay * (2**failures), self._max_delay))

    def forget(self, key: str) -> None:
        """Reset the key's backoff (after a success)."""
        self._failures.pop(key, None)

    def requeues(self, key: str) -> int:
        return self._failures.get(key, 0)

    def shut_down(self) -> None:
        """Stop accepting keys; waiting workers get :class:`ShutDown`; delayed adds are dropped."""
        self._shutting_down = True
        for _, task in self._delayed.values():
            task.cancel()
        self._delayed.clear()
        if self._stats is not None:
            self._stats.depth -= len(self._queue)
        self._queue.clear()
        self._ready.set()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down
