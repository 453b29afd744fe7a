"""Time as a dependency: the real clock, and a virtual one for tests.

Everything in the runtime that waits (backoff, requeue-after, resync, leases) asks a
:class:`Clock`, so tests drive hours of controller behaviour in milliseconds with
:class:`FakeClock` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Wall time (aware UTC), monotonic seconds, and sleeping."""

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """The system clock and ``asyncio.sleep``."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """Virtual time that only moves when a test calls :meth:`advance`.

    Sleepers are kept in a heap by deadline (ties in call order); ``advance`` wakes every
    sleeper whose deadline has passed, in deadline order. Woken tasks resume on the
    following loop iterations; ``await settle()`` lets them run.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._elapsed = 0.0
        self._order = itertools.count()
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            # A zero sleep still yields, as asyncio.sleep(0) does, so loops stay fair.
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._order), future))
        await future

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose deadline has now passed."""
        self._elapsed += max(0.0, seconds)
        while self._sleepers and self._sleepers[0][0] <= self._elapsed:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    @property
    def sleepers(self) -> int:
        """How many sleeps are pending (cancelled ones drop out at the next advance)."""
        return sum(1 for _, _, future in self._sleepers if not future.done())

    async def settle(self, rounds: int = 20) -> None:
        """Yield to the loop ``rounds`` times so woken tasks (and what they wake) run."""
        for _ in range(rounds):
            await asyncio.sleep(0)
