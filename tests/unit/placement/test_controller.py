"""The scheduling controller's pass as a whole: requeues, the CEL evaluation kept off the
event loop under a wall-clock cap, over the in-memory world of test_requeue."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

import pytest

from pyocm.runtime.controller import Result
from tests.unit.placement.test_requeue import (
    ADDED,
    EXPIRY,
    KEY,
    TOLERATED,
    busy,
    cluster,
    tolerating,
    world,
)


async def test_a_bad_group_strategy_still_requeues_for_an_expiring_toleration() -> None:
    # Upstream divides into groups after Schedule, whose requeue time stands.
    found = world(cluster("a", taints=[busy(ADDED)]), tolerations=tolerating(TOLERATED))
    assert await found.scheduling.reconcile(KEY) is None  # decides "a"
    assert found.chosen() == ["a"]
    stored = found.informers.placements.store.get(KEY)
    assert stored is not None
    stored["spec"]["decisionStrategy"]["groupStrategy"]["clustersPerDecisionGroup"] = "x%"
    deleted: list[str] = []

    async def delete(_kind: Any, name: str, **_options: Any) -> None:
        deleted.append(name)  # a bad group strategy writes no pages: the old one goes

    found.hub.delete = delete  # type: ignore[attr-defined]
    assert await found.scheduling.reconcile(KEY) == Result(requeue_after=EXPIRY)
    wrote = found.informers.placements.store.get(KEY)
    assert wrote is not None
    reasons = {c["type"]: c["reason"] for c in wrote["status"]["conditions"]}
    assert reasons["PlacementMisconfigured"] == "Misconfigured"
    assert deleted == ["p-decision-1"]


HEAVY = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(a, " * 3 + "a > 0" + ")" * 3


async def test_cel_runs_off_the_event_loop_under_a_wall_clock_cap() -> None:
    # 8,000 steps per cluster are well within cel-go's limits (milliseconds there);
    # here they take seconds: the loop must keep serving and the pass must stop.
    found = world(cluster("a"), cluster("b"), cluster("c"), tolerations=[])
    stored = found.informers.placements.store.get(KEY)
    assert stored is not None
    stored["spec"]["predicates"] = [
        {"requiredClusterSelector": {"celSelector": {"celExpressions": [HEAVY]}}}
    ]
    found.scheduling.cel_time_limit = 0.3
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    started = time.monotonic()
    try:
        assert await found.scheduling.reconcile(KEY) is None
    finally:
        ticking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticking
    assert time.monotonic() - started < 1.5
    assert gaps and max(gaps) < 0.2  # the loop was never held for long
    assert found.chosen() == []  # cut short: as a CEL run-time failure, no match


async def test_a_spread_placement_selects_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Spreading picks one cluster at a time; over many topology domains that takes
    # long enough to matter to the API served on the loop.
    from pyocm.placement.scheduling import spread

    threads: list[bool] = []
    original = spread.select_clusters

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(spread, "select_clusters", recording)
    found = world(cluster("a"), cluster("b"), tolerations=[])
    assert await found.scheduling.reconcile(KEY) is None
    stored = found.informers.placements.store.get(KEY)
    assert stored is not None
    stored["spec"]["spreadPolicy"] = {
        "spreadConstraints": [{"topologyKey": "fleet", "topologyKeyType": "Label"}]
    }
    assert await found.scheduling.reconcile(KEY) is None
    assert threads == [True, False]  # without a spread policy on the loop, with one off it
    assert found.chosen() == ["a", "b"]
