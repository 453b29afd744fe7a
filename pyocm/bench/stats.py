"""Percentiles as every benchmark here reports them, and the hub's own latency histograms."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping

_BUCKET = re.compile(r"^apiserver_request_duration_seconds_bucket\{(?P<labels>[^}]*)\} (?P<n>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


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


def request_buckets(metrics: str, **labels: str) -> dict[str, float]:
    """Cumulative counts by ``le`` bound of the hub's request-duration histogram, summed
    over the series whose labels include ``labels`` (from ``/metrics`` text)."""
    buckets: dict[str, float] = {}
    for line in metrics.splitlines():
        match = _BUCKET.match(line)
        if match is None:
            continue
        found = dict(_LABEL.findall(match["labels"]))
        if labels.items() <= found.items():
            le = found["le"]
            buckets[le] = buckets.get(le, 0.0) + float(match["n"])
    return buckets


def bucketed(before: Mapping[str, float], after: Mapping[str, float], *, within: float) -> str:
    """``n=… p50≤… ms p99≤… ms, …% within … ms`` for the requests between two readings
    of one histogram: quantiles are known only to the bucket they fall in."""
    bounds = sorted((float(le), le) for le in after)
    counts = [after[le] - before.get(le, 0.0) for _, le in bounds]
    total = counts[-1] if counts else 0.0
    if not total:
        return "n=0"

    def bound(q: float) -> str:
        at = next(i for i, n in enumerate(counts) if n >= q * total)
        limit = bounds[at][0]
        if limit == float("inf"):
            return f"> {bounds[at - 1][0] * 1000:g} ms" if at else "unknown"
        return f"≤ {limit * 1000:g} ms"

    inside = next((n for (b, _), n in zip(bounds, counts, strict=True) if b == within), None)
    if inside is None:
        raise ValueError(f"{within} s is not a bucket bound of this histogram")
    return (
        f"n={total:.0f} p50 {bound(0.5)}, p99 {bound(0.99)};"
        f" {100 * inside / total:.1f} % within {within * 1000:g} ms"
    )
