"""Selecting clusters through the label index gives what matching every cluster gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pyocm.kube import selectors
from pyocm.placement.scheduling.clusterindex import MemoryIndex, selected
from pyocm.placement.scheduling.filters import may_pass_predicates

KEYS = ("env", "zone", "tier")
VALUES = ("a", "b", "c", "1", "7")


def random_cluster(rng: random.Random, index: int) -> Any:
    labels = {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.7}
    return {"metadata": {"name": f"c{index:03d}", "labels": labels}}


def random_selector(rng: random.Random) -> dict[str, Any]:
    operators = ["In", "NotIn", "Exists", "DoesNotExist"]
    expressions = []
    for _ in range(rng.randrange(3)):
        operator = rng.choice(operators)
        values = rng.sample(VALUES, rng.randrange(1, 3)) if operator in ("In", "NotIn") else []
        expressions.append({"key": rng.choice(KEYS), "operator": operator, "values": values})
    match_labels = {rng.choice(KEYS): rng.choice(VALUES)} if rng.random() < 0.5 else {}
    return {"matchLabels": match_labels, "matchExpressions": expressions}


def test_selected_matches_as_the_selector_does() -> None:
    rng = random.Random(11)
    for _ in range(200):
        clusters = [random_cluster(rng, i) for i in range(40)]
        index = MemoryIndex(clusters)
        selector = selectors.from_label_selector(random_selector(rng))
        expected = {
            c["metadata"]["name"] for c in clusters if selector.matches(c["metadata"]["labels"])
        }
        assert selected(selector, index) == expected, str(selector)


def test_nothing_selects_nothing_and_everything_everything() -> None:
    index = MemoryIndex([random_cluster(random.Random(1), i) for i in range(5)])
    assert selected(selectors.NOTHING, index) == set()
    assert selected(selectors.EVERYTHING, index) == set(index.names())


def placement(*label_selectors: dict[str, Any], cel: str | None = None) -> Any:
    predicates = [{"requiredClusterSelector": {"labelSelector": s}} for s in label_selectors]
    if cel is not None:
        predicates.append({"requiredClusterSelector": {"celSelector": {"celExpressions": [cel]}}})
    return {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"predicates": predicates}}


CLUSTERS = [
    {"metadata": {"name": "a", "labels": {"zone": "z1"}}},
    {"metadata": {"name": "b", "labels": {"zone": "z2"}}},
    {"metadata": {"name": "c", "labels": {"zone": "z3"}}},
]
ALL = frozenset({"a", "b", "c"})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (placement({"matchLabels": {"zone": "z1"}}), {"a"}),
        # predicates are ORed: the union of what their labels select
        (placement({"matchLabels": {"zone": "z1"}}, {"matchLabels": {"zone": "z3"}}), {"a", "c"}),
        # a predicate without a label selector lets every cluster through to its claims/CEL
        (placement({"matchLabels": {"zone": "z1"}}, cel="true"), ALL),
        # no predicates: everything
        ({"metadata": {"name": "p"}, "spec": {}}, ALL),
        # one that does not compile: everything, so the filters report it as before
        (placement({"matchLabels": {"zone": "z1"}}, cel="this is not CEL"), ALL),
        (placement({"matchExpressions": [{"key": "zone", "operator": "Bad"}]}), ALL),
    ],
)
def test_may_pass_predicates(spec: Any, expected: set[str]) -> None:
    assert may_pass_predicates(spec, ALL, MemoryIndex(CLUSTERS)) == expected


def test_may_pass_predicates_keeps_to_the_available_names() -> None:
    placed = placement({"matchLabels": {"zone": "z1"}}, {"matchLabels": {"zone": "z2"}})
    assert may_pass_predicates(placed, frozenset({"b", "c"}), MemoryIndex(CLUSTERS)) == {"b"}
