"""Prioritizers' scores and weights, with the expected values of upstream's plugin tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import AddOnPlacementScore
from pyocm.api.models.cluster_v1beta1 import Placement, PlacementDecision
from pyocm.kube import timefmt
from pyocm.placement.scheduling import prioritize as p

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def cluster(
    name: str, resource: str = "", allocatable: str = "", capacity: str = ""
) -> ManagedCluster:
    obj: dict[str, Any] = {"metadata": {"name": name}}
    if resource:
        obj["status"] = {"allocatable": {resource: allocatable}, "capacity": {resource: capacity}}
    return models.view(ManagedCluster, obj)


def placement(mode: str | None = None, *configs: dict[str, Any]) -> Placement:
    policy: dict[str, Any] = {"configurations": list(configs)}
    if mode is not None:
        policy["mode"] = mode
    return models.view(
        Placement,
        {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"prioritizerPolicy": policy}},
    )


def built_in(name: str, weight: int) -> dict[str, Any]:
    return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}


def add_on(resource: str, score: str, weight: int) -> dict[str, Any]:
    coordinate = {"type": "AddOn", "addOn": {"resourceName": resource, "scoreName": score}}
    return {"scoreCoordinate": coordinate, "weight": weight}


def score_object(value: int, valid_until: datetime | None = None) -> AddOnPlacementScore:
    status: dict[str, Any] = {"scores": [{"name": "score1", "value": value}]}
    if valid_until is not None:
        status["validUntil"] = timefmt.format_time(valid_until)
    return models.view(AddOnPlacementScore, {"metadata": {"name": "test"}, "status": status})


def lookup_from(found: dict[tuple[str, str], AddOnPlacementScore]) -> p.ScoreLookup:
    def lookup(cluster: str, resource_name: str) -> AddOnPlacementScore | None:
        return found.get((cluster, resource_name))

    return lookup


def inputs(
    *,
    decided: frozenset[str] = frozenset(),
    elsewhere: dict[str, int] | None = None,
    found: dict[tuple[str, str], AddOnPlacementScore] | None = None,
) -> p.ScoringInputs:
    counts = elsewhere or {}
    return p.ScoringInputs(
        decided, counts, max(counts.values(), default=0), lookup_from(found or {}), NOW
    )


NAMES = ["cluster1", "cluster2", "cluster3"]


@pytest.mark.parametrize(
    ("elsewhere", "expected"),
    [
        ({}, {"cluster1": 100, "cluster2": 100, "cluster3": 100}),
        ({"cluster1": 1}, {"cluster1": -100, "cluster2": 100, "cluster3": 100}),
        # two other placements: cluster1 in both, cluster2 and cluster3 in one each
        (
            {"cluster1": 2, "cluster2": 1, "cluster3": 1},
            {"cluster1": -100, "cluster2": 0, "cluster3": 0},
        ),
        # a third of the busiest: 2*int(100*(0.5-1/3)) = 2*16
        ({"cluster1": 3, "cluster2": 1}, {"cluster1": -100, "cluster2": 32, "cluster3": 100}),
    ],
)
def test_balance(elsewhere: dict[str, int], expected: dict[str, int]) -> None:
    assert p.balance_scores(NAMES, elsewhere, max(elsewhere.values(), default=0)) == expected


def test_balance_max_counts_clusters_not_among_the_candidates() -> None:
    assert p.balance_scores(["cluster1"], {"cluster1": 1, "other": 4}, 4) == {"cluster1": 50}


def test_steady() -> None:
    assert p.steady_scores(NAMES, frozenset({"cluster1", "gone"})) == {
        "cluster1": 100,
        "cluster2": 0,
        "cluster3": 0,
    }


@pytest.mark.parametrize(
    ("resource", "values", "expected"),
    [
        ("memory", ["20", "60", "100"], [-100, 0, 100]),
        ("memory", ["50", "50", "50"], [100, 100, 100]),
        ("memory", ["0", "0", "0"], [100, 100, 100]),
        ("cpu", ["10", "6", "2"], [100, 0, -100]),
        ("cpu", ["5", "5", "5"], [100, 100, 100]),
        # quantities in their units: 1500m is 1.5 cpu; 1Gi is 1024Mi
        ("cpu", ["1500m", "1", "2"], [0, -100, 100]),
        ("memory", ["1Gi", "512Mi", "768Mi"], [100, -100, 0]),
    ],
)
def test_allocatable(resource: str, values: list[str], expected: list[int]) -> None:
    clusters = [cluster(n, resource, v, "100") for n, v in zip(NAMES, values, strict=True)]
    assert p.allocatable_scores(clusters, resource) == dict(zip(NAMES, expected, strict=True))


def test_allocatable_needs_both_allocatable_and_capacity() -> None:
    no_capacity = models.view(
        ManagedCluster, {"metadata": {"name": "c4"}, "status": {"allocatable": {"cpu": "99"}}}
    )
    clusters = [
        cluster("cluster1", "cpu", "2", "4"),
        cluster("cluster2", "cpu", "4", "4"),
        cluster("cluster3"),
        no_capacity,
    ]
    assert p.allocatable_scores(clusters, "cpu") == {"cluster1": -100, "cluster2": 100}
    assert p.allocatable_scores([cluster(n) for n in NAMES], "cpu") == {}


def test_add_on_scores_absent_present_and_expired() -> None:
    found = {
        ("cluster1", "test"): score_object(30, valid_until=NOW - timedelta(seconds=1)),
        ("cluster2", "test"): score_object(40, valid_until=NOW + timedelta(hours=1)),
        ("cluster3", "test"): score_object(50),
        ("cluster3", "other"): score_object(99),
    }
    scores, warning = p.add_on_scores(
        [*NAMES, "cluster4"], "test", "score1", lookup_from(found), NOW
    )
    assert scores == {"cluster1": 0, "cluster2": 40, "cluster3": 50, "cluster4": 0}
    assert warning == p.PluginWarning(
        "AddOn/test/score1", "AddOnPlacementScores cluster1/test expired"
    )


def test_add_on_scores_unknown_score_name_is_zero() -> None:
    scores, warning = p.add_on_scores(
        ["cluster1"], "test", "nope", lookup_from({("cluster1", "test"): score_object(30)}), NOW
    )
    assert (scores, warning) == ({"cluster1": 0}, None)


def memory_clusters() -> list[ManagedCluster]:
    return [
        cluster("cluster1", "memory", "100", "100"),
        cluster("cluster2", "memory", "50", "100"),
        cluster("cluster3", "memory", "0", "100"),
    ]


def test_additive_merges_the_spec_into_the_defaults() -> None:
    found = {
        (n, "demo"): models.view(
            AddOnPlacementScore, {"status": {"scores": [{"name": "demo", "value": v}]}}
        )
        for n, v in zip(NAMES, [30, 40, 50], strict=True)
    }
    spec = placement(
        "Additive",
        built_in("Balance", 3),
        built_in("ResourceAllocatableMemory", 1),
        add_on("demo", "demo", 1),
    )
    scoring = p.score_clusters(spec, memory_clusters(), inputs(found=found))
    assert [(r.name, r.weight, r.scores) for r in scoring.results] == [
        ("Balance", 3, {"cluster1": 100, "cluster2": 100, "cluster3": 100}),
        ("Steady", 1, {"cluster1": 0, "cluster2": 0, "cluster3": 0}),
        ("ResourceAllocatableMemory", 1, {"cluster1": 100, "cluster2": 0, "cluster3": -100}),
        ("AddOn/demo/demo", 1, {"cluster1": 30, "cluster2": 40, "cluster3": 50}),
    ]
    assert scoring.totals == {"cluster1": 430, "cluster2": 340, "cluster3": 250}
    assert scoring.warning is None


def test_exact_uses_only_the_spec() -> None:
    spec = placement("Exact", built_in("Balance", 3), built_in("ResourceAllocatableMemory", 1))
    scoring = p.score_clusters(spec, memory_clusters(), inputs(decided=frozenset({"cluster3"})))
    assert [(r.name, r.weight) for r in scoring.results] == [
        ("Balance", 3),
        ("ResourceAllocatableMemory", 1),
    ]
    assert scoring.totals == {"cluster1": 400, "cluster2": 300, "cluster3": 200}


def test_default_policy_and_weight_zero_and_negative() -> None:
    assert [(w.coordinate.name, w.weight) for w in p.weights(placement())] == [
        ("Balance", 1),
        ("Steady", 1),
    ]
    spec = placement("", built_in("Steady", 0), built_in("Balance", -2))
    assert [(w.coordinate.name, w.weight) for w in p.weights(spec)] == [("Balance", -2)]
    # In Exact mode an unknown prioritizer of weight 0 is never looked at.
    assert p.weights(placement("Exact", built_in("Nope", 0))) == []


def test_the_same_add_on_twice_counts_twice() -> None:
    found = {
        ("cluster1", "demo"): models.view(
            AddOnPlacementScore, {"status": {"scores": [{"name": "s", "value": 10}]}}
        )
    }
    spec = placement("Exact", add_on("demo", "s", 1), add_on("demo", "s", 2))
    assert p.score_clusters(spec, [cluster("cluster1")], inputs(found=found)).totals == {
        "cluster1": 30
    }


def test_expired_add_on_score_is_the_warning() -> None:
    found = {("cluster1", "demo"): score_object(30, valid_until=NOW - timedelta(minutes=1))}
    scoring = p.score_clusters(
        placement("Exact", add_on("demo", "score1", 1)), [cluster("cluster1")], inputs(found=found)
    )
    assert scoring.totals == {"cluster1": 0}
    assert scoring.warning == p.PluginWarning(
        "AddOn/demo/score1", "AddOnPlacementScores cluster1/demo expired"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (placement("Exactly"), ":incorrect prioritizer policy mode: Exactly"),
        (placement("Exact", built_in("Spread", 1)), ":incorrect builtin prioritizer: Spread"),
        (placement("Additive", {"weight": 1}), ":scoreCoordinate field is required"),
        (
            placement("Exact", {"scoreCoordinate": {"type": "AddOn"}, "weight": 1}),
            ":addOn should not be empty",
        ),
    ],
)
def test_misconfigured_messages(spec: Placement, message: str) -> None:
    with pytest.raises(p.Misconfigured) as caught:
        p.score_clusters(spec, [cluster("cluster1")], inputs())
    assert caught.value.condition_message == message


def decision(*clusters: str) -> PlacementDecision:
    return models.view(
        PlacementDecision,
        {"status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}},
    )


def test_counts_elsewhere_leave_out_this_placements_own() -> None:
    # upstream's "do not schedule to other cluster even with least decisions"
    others = [decision("cluster2", "cluster3"), decision("cluster1", "cluster2")]
    own = [decision("cluster3")]
    every = p.decision_counts([*others, *own])
    counts, biggest = p.counts_elsewhere(every, p.decision_counts(own))
    assert (dict(counts), biggest) == ({"cluster1": 1, "cluster2": 2, "cluster3": 1}, 2)
    assert p.balance_scores(NAMES, counts, biggest) == {
        "cluster1": 0,
        "cluster2": -100,
        "cluster3": 0,
    }
    assert p.counts_elsewhere(p.decision_counts(own), p.decision_counts(own))[1] == 0


def test_counts_elsewhere_never_go_below_zero() -> None:
    # The decisions cache may not yet hold what this placement just wrote.
    every = p.decision_counts([decision("cluster1")])
    own = p.decision_counts([decision("cluster1", "cluster2")])
    counts, biggest = p.counts_elsewhere(every, own)
    assert (dict(counts), biggest) == ({"cluster1": 0, "cluster2": 0}, 0)


def test_score_event_message() -> None:
    assert p.score_event_message({}) == ""
    assert p.score_event_message({"b": -100, "a": 200}) == "a:200 b:-100 "
    many = {f"cluster{i:04d}": 100 for i in range(200)}
    message = p.score_event_message(many)
    assert message.endswith("......") and len(message) <= 1006
    assert message.startswith("cluster0000:100 cluster0001:100 ")
