"""The process's own metrics of its work queues and reconcilers, named as
controller-runtime names them, in one Prometheus registry (:data:`REGISTRY`).

The hot paths only count: a queue or a reconciler bumps plain integers in a stats
object (a histogram is a bucket index and two additions, :class:`Buckets`), and the
Prometheus families are built from those numbers when someone scrapes. Stats are kept
per name for the life of the process, so counters never go back when a queue of that
name is replaced (an agent restarting its controllers).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.utils import floatToGoString

#: client-go's work-queue buckets: ten nanoseconds to a thousand seconds, by tens.
QUEUE_BUCKETS = tuple(float(f"1e{exponent}") for exponent in range(-8, 4))
#: controller-runtime's reconcile-time buckets (seconds).
RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
#: Prometheus' default buckets, which controller-runtime's webhook latency uses.
WEBHOOK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: The reconcile results controller-runtime counts.
RESULTS = ("success", "error", "requeue", "requeue_after")
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Buckets:
    """A histogram as plain numbers: per-bucket counts (not cumulative) and a sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def cumulative(self) -> list[tuple[str, float]]:
        """Prometheus' ``le`` buckets."""
        out, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            out.append((floatToGoString(bound), float(running)))  # type: ignore[no-untyped-call]
        return out


class QueueStats:
    """One work queue's numbers (all queues of one name share them)."""

    __slots__ = ("adds", "depth", "queue_seconds", "retries", "work_seconds")

    def __init__(self) -> None:
        self.depth = 0
        self.adds = 0
        self.retries = 0
        self.queue_seconds = Buckets(QUEUE_BUCKETS)
        self.work_seconds = Buckets(QUEUE_BUCKETS)


class ReconcileStats:
    """One controller's reconciles: how many by result, errors, and how long."""

    __slots__ = ("errors", "results", "seconds")

    def __init__(self) -> None:
        self.results = dict.fromkeys(RESULTS, 0)
        self.errors = 0
        self.seconds = Buckets(RECONCILE_BUCKETS)

    def record(self, result: str, seconds: float) -> None:
        self.results[result] += 1
        if result == "error":
            self.errors += 1
        self.seconds.observe(seconds)


class WebhookStats:
    """One webhook path's requests: by HTTP code, in flight, and how long each took."""

    __slots__ = ("codes", "in_flight", "seconds")

    def __init__(self) -> None:
        self.codes: dict[int, int] = {}
        self.in_flight = 0
        self.seconds = Buckets(WEBHOOK_BUCKETS)

    def record(self, code: int, seconds: float) -> None:
        self.codes[code] = self.codes.get(code, 0) + 1
        self.seconds.observe(seconds)


_queues: dict[str, QueueStats] = {}
_reconciles: dict[str, ReconcileStats] = {}
_webhooks: dict[str, WebhookStats] = {}


def queue_stats(name: str) -> QueueStats:
    """The stats of the work queue(s) called ``name`` (label ``name``)."""
    stats = _queues.get(name)
    if stats is None:
        stats = _queues[name] = QueueStats()
    return stats


def reconcile_stats(controller: str) -> ReconcileStats:
    """The stats of the controller(s) called ``controller`` (label ``controller``)."""
    stats = _reconciles.get(controller)
    if stats is None:
        stats = _reconciles[controller] = ReconcileStats()
    return stats


def webhook_stats(path: str) -> WebhookStats:
    """The stats of the webhook served at ``path`` (label ``webhook``, as controller-runtime)."""
    stats = _webhooks.get(path)
    if stats is None:
        stats = _webhooks[path] = WebhookStats()
    return stats


class _Collector:
    """Builds the families from the stats at scrape time."""

    def collect(self) -> Iterator[Metric]:
        yield from _queue_families()
        yield from _reconcile_families()
        if _webhooks:
            yield from _webhook_families()


def _queue_families() -> Iterator[Metric]:
    depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
    adds = CounterMetricFamily(
        "workqueue_adds", "Total number of adds handled by workqueue", labels=["name"]
    )
    retries = CounterMetricFamily(
        "workqueue_retries", "Total number of retries handled by workqueue", labels=["name"]
    )
    queued = HistogramMetricFamily(
        "workqueue_queue_duration_seconds",
        "How long in seconds an item stays in workqueue before being requested",
        labels=["name"],
    )
    worked = HistogramMetricFamily(
        "workqueue_work_duration_seconds",
        "How long in seconds processing an item from workqueue takes",
        labels=["name"],
    )
    for name, stats in sorted(_queues.items()):
        depth.add_metric([name], stats.depth)
        adds.add_metric([name], stats.adds)
        retries.add_metric([name], stats.retries)
        for family, buckets in ((queued, stats.queue_seconds), (worked, stats.work_seconds)):
            family.add_metric([name], buckets.cumulative(), sum_value=buckets.total)
    yield from (depth, adds, retries, queued, worked)


def _reconcile_families() -> Iterator[Metric]:
    total = CounterMetricFamily(
        "controller_runtime_reconcile",
        "Total number of reconciliations per controller",
        labels=["controller", "result"],
    )
    errors = CounterMetricFamily(
        "controller_runtime_reconcile_errors",
        "Total number of reconciliation errors per controller",
        labels=["controller"],
    )
    seconds = HistogramMetricFamily(
        "controller_runtime_reconcile_time_seconds",
        "Length of time per reconciliation per controller",
        labels=["controller"],
    )
    for name, stats in sorted(_reconciles.items()):
        for result, count in stats.results.items():
            total.add_metric([name, result], count)
        errors.add_metric([name], stats.errors)
        seconds.add_metric([name], stats.seconds.cumulative(), sum_value=stats.seconds.total)
    yield from (total, errors, seconds)


def _webhook_families() -> Iterator[Metric]:
    total = CounterMetricFamily(
        "controller_runtime_webhook_requests",
        "Total number of admission requests by HTTP status code.",
        labels=["code", "webhook"],
    )
    in_flight = GaugeMetricFamily(
        "controller_runtime_webhook_requests_in_flight",
        "Current number of admission requests being served.",
        labels=["webhook"],
    )
    latency = HistogramMetricFamily(
        "controller_runtime_webhook_latency_seconds",
        "Histogram of the latency of processing admission requests",
        labels=["webhook"],
    )
    for path, stats in sorted(_webhooks.items()):
        for code, count in sorted(stats.codes.items()):
            total.add_metric([str(code), path], count)
        in_flight.add_metric([path], stats.in_flight)
        latency.add_metric([path], stats.seconds.cumulative(), sum_value=stats.seconds.total)
    yield from (total, in_flight, latency)


#: The controllers' and agents' registry (the API server's request metrics are apart,
#: in pyocm.apiserver.metrics); a hub serves both on /metrics.
REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(_Collector())  # type: ignore[arg-type]


def render() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)
