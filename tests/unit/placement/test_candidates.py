"""Candidate clusters (upstream's controllers/scheduling/helpers.go, ocm-behaviour §6.1)."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.placement.scheduling.candidates import CandidateError, candidates, is_skipped
from pyocm.placement.scheduling.clusterindex import MemoryIndex


def placement(*cluster_sets: str, namespace: str = "ns", **metadata: Any) -> Any:
    return {
        "metadata": {"name": "p", "namespace": namespace, **metadata},
        "spec": {"clusterSets": list(cluster_sets)} if cluster_sets else {},
    }


def binding(name: str, namespace: str = "ns") -> Any:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterSet": name}}


def cluster_set(name: str, selector: dict[str, Any] | None = None) -> Any:
    default = {"selectorType": "ExclusiveClusterSetLabel"}  # as the API server defaults it
    return {"metadata": {"name": name}, "spec": {"clusterSelector": selector or default}}


def cluster(name: str, set_name: str | None = None, **metadata: Any) -> Any:
    labels = {"cluster.open-cluster-management.io/clusterset": set_name} if set_name else {}
    return {"metadata": {"name": name, "labels": labels, **metadata}, "spec": {}}


CLUSTERS = [
    cluster("c3", "a"),
    cluster("c1", "a"),
    cluster("c2", "b"),
    cluster("gone", "a", deletionTimestamp="2024-01-01T00:00:00Z"),
    cluster("loner"),
]
INDEX = MemoryIndex(CLUSTERS)


def test_bindings_to_missing_sets_and_other_namespaces_do_not_count() -> None:
    found = candidates(
        placement(),
        bindings=[binding("a"), binding("missing"), binding("b", namespace="other")],
        cluster_sets=[cluster_set("a"), cluster_set("b")],
        clusters=INDEX,
    )
    assert (found.bindings, found.cluster_sets) == (["a"], ["a"])
    # members of the eligible set, sorted, the one being deleted left out
    assert sorted(found.names) == ["c1", "c3"]


@pytest.mark.parametrize(
    ("wanted", "eligible", "members"),
    [
        ((), ["a", "b"], ["c1", "c2", "c3"]),
        (("b",), ["b"], ["c2"]),
        (("b", "x"), ["b"], ["c2"]),
        (("x",), [], []),
    ],
)
def test_spec_cluster_sets_narrow_the_bound_sets(
    wanted: tuple[str, ...], eligible: list[str], members: list[str]
) -> None:
    found = candidates(
        placement(*wanted),
        bindings=[binding("b"), binding("a")],
        cluster_sets=[cluster_set("a"), cluster_set("b")],
        clusters=INDEX,
    )
    assert found.bindings == ["a", "b"]
    assert found.cluster_sets == eligible
    assert sorted(found.names) == members


def test_label_selector_sets_select_by_their_selector() -> None:
    global_set = cluster_set("global", {"selectorType": "LabelSelector", "labelSelector": {}})
    found = candidates(
        placement(), bindings=[binding("global")], cluster_sets=[global_set], clusters=INDEX
    )
    assert sorted(found.names) == ["c1", "c2", "c3", "loner"]


def test_a_malformed_eligible_set_is_an_error() -> None:
    bad = cluster_set("bad", {"selectorType": "Unknown"})
    with pytest.raises(CandidateError, match='failed to get clusters from ClusterSet "bad"'):
        candidates(placement(), bindings=[binding("bad")], cluster_sets=[bad], clusters=INDEX)


def test_skipped_placements() -> None:
    annotation = "cluster.open-cluster-management.io/experimental-scheduling-disable"
    assert not is_skipped(placement())
    assert is_skipped(placement(annotations={annotation: "true"}))
    assert not is_skipped(placement(annotations={annotation: "True"}))
    assert is_skipped(placement(deletionTimestamp="2024-01-01T00:00:00Z"))
