"""Selection: ranking by total score then name, numberOfClusters, unscheduled, as upstream's
``schedule_test.go``. spreadPolicy (a pyocm extension) is tested in test_spread.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import AddOnPlacementScore
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.placement.scheduling.select import Selection, prioritize_and_select, rank

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def cluster(name: str, **labels: str) -> ManagedCluster:
    return models.view(ManagedCluster, {"metadata": {"name": name, "labels": labels}})


def placement(**spec: Any) -> Placement:
    return models.view(Placement, {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})


def no_scores(cluster: str, resource_name: str) -> AddOnPlacementScore | None:
    return None


def select(
    spec: Placement,
    clusters: list[ManagedCluster],
    *,
    decided: frozenset[str] = frozenset(),
    elsewhere: dict[str, int] | None = None,
) -> Selection:
    counts = elsewhere or {}
    return prioritize_and_select(
        spec,
        clusters,
        decided=decided,
        selected_elsewhere=counts,
        max_selected_elsewhere=max(counts.values(), default=0),
        scores=no_scores,
        now=NOW,
    )


THREE = [cluster("cluster3"), cluster("cluster1"), cluster("cluster2")]


@pytest.mark.parametrize(
    ("number", "selected", "unscheduled"),
    [
        (None, ["cluster1", "cluster2", "cluster3"], 0),
        (0, [], 0),
        (2, ["cluster1", "cluster2"], 0),
        (3, ["cluster1", "cluster2", "cluster3"], 0),
        (5, ["cluster1", "cluster2", "cluster3"], 2),
    ],
)
def test_number_of_clusters(number: int | None, selected: list[str], unscheduled: int) -> None:
    spec = placement() if number is None else placement(numberOfClusters=number)
    result = select(spec, THREE)
    assert (result.names, result.unscheduled) == (selected, unscheduled)
    assert result.scores == {"cluster1": 100, "cluster2": 100, "cluster3": 100}
    assert result.misconfigured is None


def test_schedule_to_the_cluster_with_least_decisions() -> None:
    result = select(placement(numberOfClusters=1), THREE, elsewhere={"cluster1": 1, "cluster2": 1})
    assert result.names == ["cluster3"]
    assert result.scores == {"cluster1": -100, "cluster2": -100, "cluster3": 100}


def test_steady_keeps_the_decided_cluster_even_with_more_decisions_elsewhere() -> None:
    # upstream's "do not schedule to other cluster even with least decisions"
    result = select(
        placement(numberOfClusters=1),
        THREE,
        decided=frozenset({"cluster3"}),
        elsewhere={"cluster1": 1, "cluster2": 2, "cluster3": 1},
    )
    assert result.names == ["cluster3"]
    assert result.scores == {"cluster1": 0, "cluster2": -100, "cluster3": 100}
    assert [(r.name, r.scores) for r in result.prioritizers] == [
        ("Balance", {"cluster3": 0, "cluster1": 0, "cluster2": -100}),
        ("Steady", {"cluster3": 100, "cluster1": 0, "cluster2": 0}),
    ]


def test_part_of_decisions_scheduled() -> None:
    result = select(placement(numberOfClusters=4), THREE[1:], decided=frozenset({"cluster1"}))
    assert (result.names, result.unscheduled) == (["cluster1", "cluster2"], 2)


def test_ties_break_by_name_and_higher_scores_come_first() -> None:
    assert [c["metadata"]["name"] for c in rank(THREE, {"cluster2": 5})] == [
        "cluster2",
        "cluster1",
        "cluster3",
    ]
    assert [c["metadata"]["name"] for c in rank(THREE, {"cluster1": -1})] == [
        "cluster2",
        "cluster3",
        "cluster1",
    ]


def test_misconfigured_selects_nothing() -> None:
    spec = placement(
        prioritizerPolicy={
            "mode": "Exact",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Nope"}, "weight": 1}
            ],
        }
    )
    result = select(spec, THREE)
    assert (result.selected, result.unscheduled, result.scores) == ([], 0, {})
    assert result.misconfigured is not None
    assert result.misconfigured.condition_message == ":incorrect builtin prioritizer: Nope"
