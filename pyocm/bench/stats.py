"""Percentiles as every benchmark here reports them."""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted, non-empty ``ordered``, nearest rank."""
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latencies(values: Iterable[float]) -> str:
    """``n=… p50=… ms p99=… ms max=… ms`` for durations in seconds."""
    ordered = sorted(values)
    if not ordered:
        return "n=0"
    return (
        f"n={len(ordered)} p50={statistics.median(ordered) * 1000:.0f} ms "
        f"p99={percentile(ordered, 0.99) * 1000:.0f} ms max={ordered[-1] * 1000:.0f} ms"
    )
