"""The Balance counts kept from PlacementDecision changes, and the placement conditions'
rules in upstream's order."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from pyocm.placement.scheduling.prioritize import counts_elsewhere
from pyocm.placement.status import Outcome, misconfigured, satisfied
from pyocm.placement.usage import DecisionUsage
from pyocm.runtime.informer import Change

Obj = dict[str, Any]


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Any] = []

    def add_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def change(self, old: Obj | None, new: Obj | None) -> None:
        for handler in self.handlers:
            handler(Change(old, new))


def decision(*clusters: str) -> Obj:
    return {"status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}}


def test_elsewhere_answers_as_counts_elsewhere_does() -> None:
    """The histogram's answer is the one the plain subtraction over every count gives,
    over random decisions and random own counts (including ones the cache lags)."""
    rng = random.Random(7)
    names = [f"c{i}" for i in range(12)]
    for _ in range(300):
        informer = FakeInformer()
        usage = DecisionUsage(informer)  # type: ignore[arg-type]
        stored: list[Obj] = []
        for _ in range(rng.randrange(6)):
            stored.append(decision(*rng.choices(names, k=rng.randrange(5))))
            informer.change(None, stored[-1])
        if stored and rng.random() < 0.5:
            informer.change(stored.pop(rng.randrange(len(stored))), None)
        own = Counter(rng.choices(names, k=rng.randrange(4)))
        lazy, biggest = usage.elsewhere(own)
        plain, plain_biggest = counts_elsewhere(dict(usage.counts), own)
        assert biggest == plain_biggest
        assert {n: lazy.get(n, 0) for n in names} == {n: plain.get(n, 0) for n in names}


def test_counts_follow_adds_updates_and_deletes() -> None:
    informer = FakeInformer()
    usage = DecisionUsage(informer)  # type: ignore[arg-type]
    first, second = decision("a", "b", "a"), decision("b")
    informer.change(None, first)
    informer.change(None, second)
    assert dict(usage.counts) == {"a": 2, "b": 2}
    informer.change(first, decision("c"))
    assert dict(usage.counts) == {"b": 1, "c": 1}
    informer.change(second, None)
    informer.change(None, {"status": {"decisions": "not a list"}})
    assert dict(usage.counts) == {"c": 1}


def outcome(**changes: Any) -> Outcome:
    values: dict[str, Any] = {
        "spec_cluster_sets": ["x", "y"],
        "eligible_cluster_sets": ["s"],
        "bindings": 1,
        "available": 2,
        "selected": 2,
        "unscheduled": 0,
    }
    return Outcome(**{**values, **changes})


def test_satisfied_rules_in_order() -> None:
    assert satisfied(outcome(bindings=0, eligible_cluster_sets=[])).reason == (
        "NoManagedClusterSetBindings"
    )
    found = satisfied(outcome(eligible_cluster_sets=[]))
    assert (found.reason, found.message) == (
        "NoIntersection",
        "None of ManagedClusterSets [x,y] is bound to placement namespace",
    )
    found = satisfied(outcome(available=0, eligible_cluster_sets=["a", "b"]))
    assert found.message == "All ManagedClusterSets [a,b] have no member ManagedCluster"
    assert satisfied(outcome(selected=0, unscheduled=3)).reason == "NoManagedClusterMatched"
    assert satisfied(outcome()).status == "True"
    found = satisfied(outcome(unscheduled=3))
    assert (found.status, found.reason, found.message) == (
        "False",
        "NotAllDecisionsScheduled",
        "3 cluster decisions unscheduled",
    )


def test_misconfigured_message() -> None:
    assert misconfigured("TaintToleration:bad").status == "True"
    assert misconfigured(None).reason == "Succeedconfigured"
