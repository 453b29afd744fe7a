"""Work-queue and reconcile metrics, read back from the process registry."""

from __future__ import annotations

import re

from pyocm.base import metrics
from pyocm.base.clock import FakeClock
from pyocm.base.queue import WorkQueue


def sample(metric: str, /, **labels: str) -> float:
    """One sample of the registry's text output."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in metrics.render().decode().splitlines():
        found = re.fullmatch(rf"{metric}\{{(.*)\}} (\S+)", line)
        if found and ",".join(sorted(found[1].split(","))) == wanted:
            return float(found[2])
    raise AssertionError(f"no sample {metric}{{{wanted}}}")


async def test_a_queue_counts_adds_depth_retries_and_times_in_virtual_time() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock, stats=metrics.queue_stats("test-queue"))
    queue.add("a")
    queue.add("a")  # deduplicated: not another add
    queue.add("b")
    assert sample("workqueue_adds_total", name="test-queue") == 2
    assert sample("workqueue_depth", name="test-queue") == 2
    clock.advance(2)
    key = await queue.get()
    clock.advance(0.5)
    queue.done(key)
    queue.add_rate_limited("c")
    assert sample("workqueue_depth", name="test-queue") == 1
    assert sample("workqueue_retries_total", name="test-queue") == 1
    assert sample("workqueue_queue_duration_seconds_count", name="test-queue") == 1
    assert sample("workqueue_queue_duration_seconds_sum", name="test-queue") == 2
    assert sample("workqueue_queue_duration_seconds_bucket", name="test-queue", le="1.0") == 0
    assert sample("workqueue_queue_duration_seconds_bucket", name="test-queue", le="10.0") == 1
    assert sample("workqueue_work_duration_seconds_sum", name="test-queue") == 0.5
    queue.shut_down()
    assert sample("workqueue_depth", name="test-queue") == 0


def test_reconciles_are_counted_by_result_and_timed() -> None:
    stats = metrics.reconcile_stats("test-controller")
    stats.record("success", 0.02)
    stats.record("error", 0.2)
    stats.record("requeue_after", 3.0)
    for result in ("success", "error", "requeue_after"):
        assert sample(
            "controller_runtime_reconcile_total", controller="test-controller", result=result
        ) == 1
    assert sample("controller_runtime_reconcile_total", controller="test-controller", result="requeue") == 0
    assert sample("controller_runtime_reconcile_errors_total", controller="test-controller") == 1
    assert sample("controller_runtime_reconcile_time_seconds_count", controller="test-controller") == 3
    assert sample(
        "controller_runtime_reconcile_time_seconds_bucket", controller="test-controller", le="0.025"
    ) == 1
    assert sample(
        "controller_runtime_reconcile_time_seconds_bucket", controller="test-controller", le="+Inf"
    ) == 3
