"""When the work agent's controllers look at a key again: client-go's per-item
exponential rate limiter on :class:`~pyocm.base.backoff.Backoff`, and ``wait.Jitter``."""

from __future__ import annotations

import random
from collections.abc import Callable

from pyocm.base.backoff import Backoff


def jitter(
    duration: float, max_factor: float, *, rand: Callable[[], float] = random.random
) -> float:
    """``wait.Jitter``: ``duration`` plus up to ``max_factor`` of it, drawn uniformly."""
    return duration + rand() * max_factor * duration


class Failures:
    """``ItemExponentialFailureRateLimiter``: each :meth:`when` of a key waits
    ``backoff``'s next delay; :meth:`forget` starts the key over."""

    def __init__(self, backoff: Backoff) -> None:
        self.backoff = backoff
        self._counts: dict[str, int] = {}

    def when(self, key: str) -> float:
        count = self._counts.get(key, 0)
        self._counts[key] = count + 1
        return self.backoff.delay(count)

    def forget(self, key: str) -> None:
        self._counts.pop(key, None)

    def count(self, key: str) -> int:
        return self._counts.get(key, 0)


#: The manifest work controller's limiter, upstream's: 5 ms doubling to 1000 s.
APPLY_BACKOFF = Backoff(duration=0.005, cap=1000.0)
#: The AppliedManifestWork finalizer's, upstream's: 50 ms doubling to 60 s.
FINALIZE_BACKOFF = Backoff(duration=0.05, cap=60.0)
