"""Exponential backoff and retrying on the injectable clock.

:class:`Backoff` is client-go's ``wait.Backoff``: a first delay, a growth factor, a cap,
jitter and an optional number of steps. :func:`retry` is ``retry.OnError``: call, and
while the error is retriable and steps remain, pause by the backoff and call again.
Every pause goes through a :class:`~pyocm.base.clock.Clock`, so tests drive it in
virtual time.

Loops that keep their own failure count (an informer relisting, an agent rejoining)
use :meth:`Backoff.delay` directly: ``await clock.sleep(backoff.delay(failures - 1))``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from pyocm.base.clock import Clock

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Backoff:
    """Pauses of ``duration * factor**attempt``, at most ``cap``, each jittered.

    ``jitter`` is a fraction: each pause is drawn uniformly from ``delay * (1 - jitter)``
    to ``delay * (1 + jitter)``. Unlike client-go's one-sided jitter it keeps the mean
    pause at the nominal delay, which is what sets the rate a fleet of waiting agents
    reads at. As in client-go the jitter applies after the cap, so a fleet at the cap
    still spreads out. ``steps`` bounds the attempts :func:`retry` makes (None: no bound).
    """

    duration: float
    factor: float = 2.0
    cap: float | None = None
    jitter: float = 0.0
    steps: int | None = None

    def __post_init__(self) -> None:
        if self.duration < 0 or self.factor < 1 or not 0 <= self.jitter < 1:
            raise ValueError("backoff needs duration >= 0, factor >= 1, 0 <= jitter < 1")
        if self.steps is not None and self.steps < 1:
            raise ValueError("backoff steps must be at least 1")

    def nominal(self, attempt: int) -> float:
        """The pause after failed attempt ``attempt`` (0 for the first), before jitter."""
        try:
            delay = self.duration * self.factor**attempt
        except OverflowError:  # long past any cap
            delay = math.inf
        return delay if self.cap is None else min(delay, self.cap)

    def delay(self, attempt: int, *, rand: Callable[[], float] = random.random) -> float:
        """The pause after failed attempt ``attempt`` (0 for the first), jittered."""
        nominal = self.nominal(attempt)
        if not self.jitter:
            return nominal
        return nominal * (1 - self.jitter + 2 * self.jitter * rand())

    def delays(self, *, rand: Callable[[], float] = random.random) -> Iterator[float]:
        """The pauses between ``steps`` attempts (endless without ``steps``)."""
        attempt = 0
        while self.steps is None or attempt < self.steps - 1:
            yield self.delay(attempt, rand=rand)
            attempt += 1


#: client-go's ``retry.DefaultRetry``: five quick attempts, for writes that conflict.
DEFAULT_RETRY = Backoff(duration=0.01, factor=1.0, jitter=0.1, steps=5)
#: client-go's ``retry.DefaultBackoff``: four attempts growing fivefold, for flakier calls.
DEFAULT_BACKOFF = Backoff(duration=0.01, factor=5.0, jitter=0.1, steps=4)


async def retry(
    call: Callable[[], Awaitable[T]],
    *,
    retriable: Callable[[Exception], bool],
    clock: Clock,
    backoff: Backoff = DEFAULT_RETRY,
) -> T:
    """``await call()`` until it succeeds; an error ``retriable`` rejects, or the last
    step's error, propagates. ``call`` must redo its whole read-modify-write: retrying
    a write computed from a stale read would only conflict again."""
    pauses = backoff.delays()
    while True:
        try:
            return await call()
        except Exception as err:
            if not retriable(err):
                raise
            pause = next(pauses, None)
            if pause is None:
                raise
        await clock.sleep(pause)
