"""The scheduling controller's pass as a whole: requeues, the CEL evaluation kept off the
event loop under a wall-clock cap, over the in-memory world of test_requeue."""

from __future__ import annotations

from typing import Any

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
