"""The hub's /metrics also carries its controllers' work queues and reconciles."""

from __future__ import annotations

from pyocm.testing import Client
from tests.e2e.test_metrics import metrics
from tests.support import eventually

Samples = list[tuple[str, dict[str, str], float]]


def of(found: Samples, metric: str, /, **labels: str) -> float:
    """The sum of the samples of ``metric`` whose labels include ``labels``."""
    return sum(v for n, ls, v in found if n == metric and labels.items() <= ls.items())


async def test_the_servers_own_controllers_report_queues_and_reconciles(admin: Client) -> None:
    async def reported() -> bool:
        found = await metrics(admin)
        name = "clusterrole-aggregation"  # reconciled once at start, whatever else happens
        assert of(found, "workqueue_adds_total", name=name) >= 1
        assert of(found, "workqueue_depth", name=name) >= 0
        assert of(found, "workqueue_work_duration_seconds_count", name=name) >= 1
        assert of(found, "controller_runtime_reconcile_total", controller=name, result="success") >= 1
        assert of(found, "controller_runtime_reconcile_time_seconds_count", controller=name) >= 1
        return True

    await eventually(reported)
