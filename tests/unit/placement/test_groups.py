"""Decision groups and PlacementDecision pages, with upstream's scheduling controller tests'
expected groups, names and labels."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.placement.scheduling.groups import (
    DecisionGroup,
    decision_groups,
    decision_pages,
    group_length,
    group_statuses,
)
from pyocm.placement.scheduling.prioritize import Misconfigured


def cluster(name: str, claims: dict[str, str] | None = None, **labels: str) -> ManagedCluster:
    obj: dict[str, Any] = {"metadata": {"name": name, "labels": labels}}
    if claims:
        obj["status"] = {"clusterClaims": [{"name": k, "value": v} for k, v in claims.items()]}
    return models.view(ManagedCluster, obj)


def placement(per_group: int | str | None = None, *groups: dict[str, Any]) -> Placement:
    strategy: dict[str, Any] = {"decisionGroups": list(groups)}
    if per_group is not None:
        strategy["clustersPerDecisionGroup"] = per_group
    spec = {"decisionStrategy": {"groupStrategy": strategy}}
    return models.view(Placement, {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})


def by_label(name: str, **match: str) -> dict[str, Any]:
    return {"groupName": name, "groupClusterSelector": {"labelSelector": {"matchLabels": match}}}


def shape(groups: list[DecisionGroup]) -> list[tuple[str, list[str]]]:
    return [(g.name, list(g.clusters)) for g in groups]


FOUR = [
    cluster("cluster4", cloud="Azure"),
    cluster("cluster1", cloud="Amazon"),
    cluster("cluster3", cloud="Azure"),
    cluster("cluster2", cloud="Amazon"),
]


def test_canary_group_one_per_group() -> None:
    grouping = decision_groups(placement(1, by_label("canary", cloud="Azure")), FOUR)
    assert shape(grouping.groups) == [
        ("canary", ["cluster3"]),
        ("canary", ["cluster4"]),
        ("", ["cluster1"]),
        ("", ["cluster2"]),
    ]
    pages = decision_pages("p", grouping.groups)
    assert [(pg.name, pg.labels, pg.decisions()) for pg in pages[:1]] == [
        (
            "p-decision-1",
            {
                "cluster.open-cluster-management.io/placement": "p",
                "cluster.open-cluster-management.io/decision-group-name": "canary",
                "cluster.open-cluster-management.io/decision-group-index": "0",
            },
            [{"clusterName": "cluster3", "reason": ""}],
        )
    ]
    assert group_statuses(grouping.groups, pages) == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "canary",
            "decisions": ["p-decision-1"],
            "clusterCount": 1,
        },
        {
            "decisionGroupIndex": 1,
            "decisionGroupName": "canary",
            "decisions": ["p-decision-2"],
            "clusterCount": 1,
        },
        {
            "decisionGroupIndex": 2,
            "decisionGroupName": "",
            "decisions": ["p-decision-3"],
            "clusterCount": 1,
        },
        {
            "decisionGroupIndex": 3,
            "decisionGroupName": "",
            "decisions": ["p-decision-4"],
            "clusterCount": 1,
        },
    ]


def test_multiple_groups_by_selector_earlier_groups_take_first() -> None:
    groups = [
        by_label("group1", cloud="Amazon"),
        by_label("group2", cloud="Amazon"),
        by_label("group3", cloud="Azure"),
    ]
    grouping = decision_groups(placement(None, *groups), FOUR)
    # group2 matches only clusters group1 already took: it makes no group at all
    assert shape(grouping.groups) == [
        ("group1", ["cluster1", "cluster2"]),
        ("group3", ["cluster3", "cluster4"]),
    ]
    assert grouping.misconfigured is None


def test_claim_selector_and_label_selector_are_anded() -> None:
    clusters = [
        cluster("a", {"region": "us"}, env="prod"),
        cluster("b", {"region": "eu"}, env="prod"),
        cluster("c", {"region": "us"}, env="dev"),
    ]
    selector = {
        "labelSelector": {"matchLabels": {"env": "prod"}},
        "claimSelector": {
            "matchExpressions": [{"key": "region", "operator": "In", "values": ["us"]}]
        },
    }
    grouping = decision_groups(
        placement(None, {"groupName": "us-prod", "groupClusterSelector": selector}), clusters
    )
    assert shape(grouping.groups) == [("us-prod", ["a"]), ("", ["b", "c"])]


def test_percentage_per_group() -> None:
    grouping = decision_groups(placement("25%"), FOUR[:3])
    assert shape(grouping.groups) == [("", ["cluster1"]), ("", ["cluster3"]), ("", ["cluster4"])]


def test_nothing_selected_is_one_empty_group_and_page() -> None:
    grouping = decision_groups(placement(None, by_label("canary", cloud="Azure")), [])
    assert shape(grouping.groups) == [("", [])]
    pages = decision_pages("p", grouping.groups)
    assert [(pg.name, pg.decisions()) for pg in pages] == [("p-decision-1", [])]
    assert group_statuses(grouping.groups, pages) == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "",
            "decisions": ["p-decision-1"],
            "clusterCount": 0,
        }
    ]


@pytest.mark.parametrize(
    ("value", "total", "length"),
    [
        (None, 10, 10),
        (3, 10, 3),
        (0, 10, 10),
        (-1, 10, 10),
        (11, 10, 10),
        ("100%", 10, 10),
        ("25%", 10, 3),  # ceil(2.5)
        ("1%", 10, 1),
        ("0%", 10, 10),
        ("150%", 10, 10),
        ("12.5%", 8, 1),
        ("NaN%", 10, 10),
        ("25%", 0, 0),
    ],
)
def test_group_length(value: int | str | None, total: int, length: int) -> None:
    assert group_length(value, total) == length


@pytest.mark.parametrize("value", ["5", "abc%", "%", "1e999%", "1_0%"])
def test_not_a_percentage_is_misconfigured(value: str) -> None:
    with pytest.raises(Misconfigured) as caught:
        group_length(value, 10)
    assert caught.value.condition_message == f":{value} invalid type: string is not a percentage"


def test_bad_percentage_makes_no_groups() -> None:
    grouping = decision_groups(placement("abc"), FOUR)
    assert grouping.groups == []
    assert grouping.misconfigured is not None
    assert (
        grouping.misconfigured.condition_message == ":abc invalid type: string is not a percentage"
    )
    assert decision_pages("p", grouping.groups) == []


def test_bad_selector_keeps_the_groups_made_before_it() -> None:
    bad = {
        "groupName": "bad",
        "groupClusterSelector": {
            "labelSelector": {"matchExpressions": [{"key": "cloud", "operator": "Like"}]}
        },
    }
    grouping = decision_groups(placement(None, by_label("group1", cloud="Amazon"), bad), FOUR)
    assert shape(grouping.groups) == [("group1", ["cluster1", "cluster2"])]
    assert grouping.misconfigured is not None
    assert (
        grouping.misconfigured.condition_message == ':"Like" is not a valid label selector operator'
    )


def test_pages_hold_at_most_100_decisions_and_number_across_groups() -> None:
    names = [f"c{i:03d}" for i in range(250)]
    groups = [DecisionGroup("big", tuple(names[:201])), DecisionGroup("", tuple(names[201:]))]
    pages = decision_pages("p", groups)
    assert [(pg.name, pg.group_index, pg.group_name, len(pg.clusters)) for pg in pages] == [
        ("p-decision-1", 0, "big", 100),
        ("p-decision-2", 0, "big", 100),
        ("p-decision-3", 0, "big", 1),
        ("p-decision-4", 1, "", 49),
    ]
    assert pages[0].clusters[0] == "c000" and pages[1].clusters[0] == "c100"
    statuses = group_statuses(groups, pages)
    assert [(s["decisions"], s["clusterCount"]) for s in statuses] == [
        (["p-decision-1", "p-decision-2", "p-decision-3"], 201),
        (["p-decision-4"], 49),
    ]


def test_ten_thousand_clusters_in_groups_of_one_percent() -> None:
    clusters = [cluster(f"c{i:05d}", zone=str(i % 3)) for i in range(10_000)]
    grouping = decision_groups(placement("1%", by_label("zone0", zone="0")), clusters)
    assert [len(g.clusters) for g in grouping.groups[:35]] == [100] * 33 + [34, 100]
    pages = decision_pages("p", grouping.groups)
    assert len(pages) == len(grouping.groups) == 101
    assert sum(len(pg.clusters) for pg in pages) == 10_000


def test_a_claim_without_name_or_value_reads_as_empty() -> None:
    claims = [{"name": "region"}, {"value": "orphan"}]
    odd = models.view(
        ManagedCluster, {"metadata": {"name": "odd"}, "status": {"clusterClaims": claims}}
    )
    selector = {
        "claimSelector": {
            "matchExpressions": [{"key": "region", "operator": "In", "values": [""]}]
        },
    }
    grouping = decision_groups(
        placement(None, {"groupName": "blank", "groupClusterSelector": selector}), [odd]
    )
    assert shape(grouping.groups) == [("blank", ["odd"])]
