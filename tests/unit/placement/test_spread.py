"""spreadPolicy (a pyocm extension: upstream's scheduler ignores it), as OCM's spread-policy
enhancement proposes: its use cases and worked example, maxSkew with DoNotSchedule and
ScheduleAnyway, several constraints, Label and Claim keys, clusters lacking the key, and
placements without constraints getting upstream's selection."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import AddOnPlacementScore
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.placement.scheduling.select import Selection, prioritize_and_select, rank
from pyocm.placement.scheduling.spread import (
    LEVEL_BASE,
    MAX_LEVEL_SCORE,
    MAX_SPREAD_SCORE,
    SPREAD_WEIGHT,
    Constraint,
    Path,
    constraints_of,
    has_spread,
    path_of,
    select_clusters,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)
Obj = dict[str, Any]


def cluster(name: str, claims: dict[str, str] | None = None, **labels: str) -> ManagedCluster:
    obj: Obj = {"metadata": {"name": name, "labels": labels}}
    if claims is not None:
        obj["status"] = {"clusterClaims": [{"name": k, "value": v} for k, v in claims.items()]}
    return models.view(ManagedCluster, obj)


def term(key: str, *, claim: bool = False, max_skew: int | None = None, hard: bool = False) -> Obj:
    """A spread constraint; maxSkew and whenUnsatisfiable left unset unless given."""
    found: Obj = {"topologyKey": key, "topologyKeyType": "Claim" if claim else "Label"}
    if max_skew is not None:
        found["maxSkew"] = max_skew
    if hard:
        found["whenUnsatisfiable"] = "DoNotSchedule"
    return found


def placement(*terms: Obj, **spec: Any) -> Placement:
    if terms:
        spec["spreadPolicy"] = {"spreadConstraints": list(terms)}
    return models.view(Placement, {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})


def no_scores(cluster: str, resource_name: str) -> AddOnPlacementScore | None:
    return None


def select(spec: Placement, clusters: list[ManagedCluster]) -> Selection:
    """The whole selection, with the default prioritizers (Balance and Steady, which score
    every cluster alike here: none is decided anywhere)."""
    return prioritize_and_select(
        spec,
        clusters,
        decided=frozenset(),
        selected_elsewhere={},
        max_selected_elsewhere=0,
        scores=no_scores,
        now=NOW,
    )


def pick(
    spec: Placement,
    clusters: list[ManagedCluster],
    totals: dict[str, int] | None = None,
    limit: int | None = None,
) -> list[str]:
    """The spread's picks, in order, given each cluster's prioritizer total."""
    scores = totals or {}
    chosen = select_clusters(spec, rank(clusters, scores), scores, limit=limit)
    return [c["metadata"]["name"] for c in chosen]


def zones(**members: str) -> list[ManagedCluster]:
    """Clusters by name, each labelled ``zone=<value>``."""
    return [cluster(name, zone=zone) for name, zone in members.items()]


#: Use case 3's fleet: zone a offers three clusters, zone b one.
THREE_AND_ONE = zones(a1="a", a2="a", a3="a", b1="b")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, False),
        ({"spreadPolicy": {}}, False),
        ({"spreadPolicy": {"spreadConstraints": []}}, False),
        ({"spreadPolicy": {"spreadConstraints": [term("zone")]}}, True),
    ],
)
def test_has_spread(spec: Obj, expected: bool) -> None:
    assert has_spread(placement(**spec)) is expected


def test_constraints_take_the_crd_defaults() -> None:
    assert constraints_of(placement(term("zone"))) == [Constraint("zone", False, 1, False)]
    explicit = placement(term("zone", claim=True, max_skew=3, hard=True))
    assert constraints_of(explicit) == [Constraint("zone", True, 3, True)]


def test_only_constraints_change_upstreams_selection() -> None:
    def names(**spec: Any) -> list[str]:
        result = select(placement(numberOfClusters=2, **spec), THREE_AND_ONE)
        # The decisions' scores stay the prioritizers' totals.
        assert result.scores == dict.fromkeys(["a1", "a2", "a3", "b1"], 100)
        return result.names

    upstream = ["a1", "a2"]
    assert names() == upstream
    assert names(spreadPolicy={}) == upstream
    assert names(spreadPolicy={"spreadConstraints": []}) == upstream
    assert names(spreadPolicy={"spreadConstraints": [term("zone")]}) == ["a1", "b1"]


def test_even_spread_across_zones() -> None:
    # Use case 2: four clusters across two zones of three: two from each.
    clusters = zones(a1="a", a2="a", a3="a", b1="b", b2="b", b3="b")
    assert select(placement(term("zone"), numberOfClusters=4), clusters).names == [
        "a1",
        "b1",
        "a2",
        "b2",
    ]


@pytest.mark.parametrize(
    ("constraint", "expected", "unscheduled"),
    [
        # Use case 3: the skew stays within 1 by choosing fewer clusters; zone b, all
        # chosen, still counts as the least-chosen domain.
        (term("zone", max_skew=1, hard=True), ["a1", "b1", "a2"], 1),
        (term("zone", hard=True), ["a1", "b1", "a2"], 1),  # maxSkew defaults to 1
        (term("zone", max_skew=2, hard=True), ["a1", "b1", "a2", "a3"], 0),
        # ScheduleAnyway keeps scheduling past maxSkew, still spreading.
        (term("zone", max_skew=1), ["a1", "b1", "a2", "a3"], 0),
    ],
)
def test_max_skew_and_when_unsatisfiable(
    constraint: Obj, expected: list[str], unscheduled: int
) -> None:
    clusters = zones(a1="a", a2="a", a3="a", a4="a", b1="b")
    result = select(placement(constraint, numberOfClusters=4), clusters)
    assert (result.names, result.unscheduled) == (expected, unscheduled)


def test_number_of_clusters_unset() -> None:
    # DoNotSchedule: as many as the skew allows (use case 3 without a number).
    result = select(placement(term("zone", hard=True)), THREE_AND_ONE)
    assert (result.names, result.unscheduled) == (["a1", "b1", "a2"], 0)
    # ScheduleAnyway: every cluster, as upstream.
    result = select(placement(term("zone")), THREE_AND_ONE)
    assert (sorted(result.names), result.unscheduled) == (["a1", "a2", "a3", "b1"], 0)


def test_joint_spread_nests_zones_in_regions() -> None:
    # Use case 4: first across regions, then across the zones of each region. Zone "1a"
    # of east and of west are two domains.
    clusters = [
        cluster("ea1", region="east", zone="1a"),
        cluster("ea2", region="east", zone="1a"),
        cluster("eb1", region="east", zone="1b"),
        cluster("eb2", region="east", zone="1b"),
        cluster("wa1", region="west", zone="1a"),
        cluster("wa2", region="west", zone="1a"),
        cluster("wa3", region="west", zone="1a"),
    ]
    spec = placement(term("region"), term("zone"), numberOfClusters=4)
    assert select(spec, clusters).names == ["ea1", "wa1", "eb1", "wa2"]


def test_the_enhancements_worked_example() -> None:
    # Regions spread softly, zones within maxSkew 1. After c1, c2 would put zone
    # east/1a two above east/1b; c4 and c5 are in the less-chosen region, and c5 has the
    # higher prioritizer score.
    clusters = [
        cluster("c1", region="us-east", zone="us-east-1a"),
        cluster("c2", region="us-east", zone="us-east-1a"),
        cluster("c3", region="us-east", zone="us-east-1b"),
        cluster("c4", region="us-west", zone="us-west-1a"),
        cluster("c5", region="us-west", zone="us-west-1a"),
    ]
    totals = {"c1": 50, "c2": 50, "c3": 0, "c4": 0, "c5": 50}
    spec = placement(term("region"), term("zone", max_skew=1, hard=True))
    assert pick(spec, clusters, totals, limit=2) == ["c1", "c5"]
    assert pick(spec, clusters, totals) == ["c1", "c5", "c3", "c4", "c2"]


@pytest.mark.parametrize(
    ("region_skew", "expected", "unscheduled"),
    [
        (1, ["e1a1", "w1", "e1b1"], 1),
        (2, ["e1a1", "w1", "e1b1", "e1a2"], 0),
    ],
)
def test_every_do_not_schedule_constraint_bounds_its_skew(
    region_skew: int, expected: list[str], unscheduled: int
) -> None:
    clusters = [
        cluster("e1a1", region="east", zone="a"),
        cluster("e1a2", region="east", zone="a"),
        cluster("e1b1", region="east", zone="b"),
        cluster("w1", region="west", zone="a"),
    ]
    spec = placement(
        term("region", max_skew=region_skew, hard=True),
        term("zone", max_skew=1, hard=True),
        numberOfClusters=4,
    )
    result = select(spec, clusters)
    assert (result.names, result.unscheduled) == (expected, unscheduled)


@pytest.mark.parametrize(("a2_total", "second"), [(399, "b1"), (400, "a2"), (401, "a2")])
def test_schedule_anyway_weighs_the_spread_twice_against_the_prioritizers(
    a2_total: int, second: str
) -> None:
    # After a1, b1's spread score is 100 and a2's -100: weighted 2, b1 gains 400 on a2
    # (at 400 they tie, and a2 comes first by name).
    clusters = zones(a1="a", a2="a", b1="b")
    totals = {"a1": 1000, "a2": a2_total, "b1": 0}
    assert pick(placement(term("zone")), clusters, totals, limit=2) == ["a1", second]
    # DoNotSchedule is not outweighed.
    assert pick(placement(term("zone", hard=True)), clusters, totals, limit=2) == ["a1", "b1"]


def test_ties_break_by_name() -> None:
    clusters = zones(b2="b", a2="a", b1="b", a1="a")
    assert pick(placement(term("zone")), clusters, limit=3) == ["a1", "b1", "a2"]


def test_claim_and_label_keys_are_read_from_their_own_place() -> None:
    # Every cluster is labelled zone.test=x; their claims of that name differ.
    clusters = [
        cluster("x1", {"zone.test": "x"}, **{"zone.test": "x"}),
        cluster("x2", {"zone.test": "x"}, **{"zone.test": "x"}),
        cluster("y1", {"zone.test": "y"}, **{"zone.test": "x"}),
    ]
    assert pick(placement(term("zone.test", claim=True)), clusters, limit=2) == ["x1", "y1"]
    assert pick(placement(term("zone.test")), clusters, limit=2) == ["x1", "x2"]
    by_claim = placement(term("zone.test", claim=True, hard=True))
    assert pick(by_claim, clusters) == ["x1", "y1", "x2"]


def test_a_cluster_lacking_the_key_comes_last_or_never() -> None:
    clusters = [cluster("a0"), cluster("a1", zone="a"), cluster("b1", zone="b")]
    # ScheduleAnyway: after every cluster that has the key, though first by name.
    assert pick(placement(term("zone")), clusters, limit=2) == ["a1", "b1"]
    assert pick(placement(term("zone")), clusters, limit=3) == ["a0", "a1", "b1"]
    # DoNotSchedule: never, however many are wanted.
    result = select(placement(term("zone", hard=True), numberOfClusters=3), clusters)
    assert (result.names, result.unscheduled) == (["a1", "b1"], 1)


def test_a_tuple_stops_at_the_first_missing_key() -> None:
    clusters = [
        cluster("e0", region="east"),  # no zone: in region east, in no zone
        cluster("ea", region="east", zone="a"),
        cluster("wa", region="west", zone="a"),
        cluster("x0", zone="a"),  # no region: so in no zone either
    ]
    soft = placement(term("region"), term("zone"))
    assert pick(soft, clusters, limit=2) == ["ea", "wa"]
    assert pick(soft, clusters, limit=3) == ["ea", "wa", "e0"]
    # A DoNotSchedule zone needs both keys: e0 and x0 are never chosen.
    hard_zone = placement(term("region"), term("zone", hard=True))
    assert pick(hard_zone, clusters) == ["ea", "wa"]


@pytest.mark.parametrize(
    ("zone_skew", "expected", "unscheduled"),
    [
        (1, ["e1-0", "w1-0", "e2-0", "e1-1", "e2-1"], 4),
        (2, ["e1-0", "w1-0", "e2-0", "e1-1", "e2-1", "e1-2", "e2-2"], 2),
    ],
)
def test_do_not_schedule_skew_is_against_every_domain_at_its_depth(
    zone_skew: int, expected: list[str], unscheduled: int
) -> None:
    # The API's maxSkew doc: the skew is against "the global minimum ... for the
    # topologies within the same TopologyKey". Zone w1 of region west, chosen once, so
    # bounds zones e1 and e2 of region east (siblings of each other only) at 1 + maxSkew,
    # though each offers four clusters.
    clusters = [cluster(f"{z}-{i}", region="east", zone=z) for z in ("e1", "e2") for i in range(4)]
    clusters.append(cluster("w1-0", region="west", zone="w1"))
    terms = (term("region"), term("zone", max_skew=zone_skew, hard=True))
    assert pick(placement(*terms), clusters) == expected
    result = select(placement(*terms, numberOfClusters=9), clusters)
    assert (result.names, result.unscheduled) == (expected, unscheduled)


# The reference for the randomized test below: spread.py's first, simple selection (after
# the global-minimum skew), which recomputes every span and scores every candidate tuple
# per pick. spread.py keeps what a pick changes instead; the two must agree.


def reference_select(
    spec: Placement,
    ranked: Sequence[ManagedCluster],
    totals: Mapping[str, int],
    *,
    limit: int | None,
) -> list[ManagedCluster]:
    terms = constraints_of(spec)
    if not terms:
        return list(ranked if limit is None else ranked[:limit])
    if not any(t.hard for t in terms) and (limit is None or limit >= len(ranked)):
        return list(ranked)
    groups: dict[Path, deque[ManagedCluster]] = {}
    for c in ranked:
        path = path_of(c, terms)
        if not any(t.hard for t in terms[len(path) :]):
            groups.setdefault(path, deque()).append(c)
    domains = RefDomains(groups)
    chosen: list[ManagedCluster] = []
    while groups and (limit is None or len(chosen) < limit):
        best = reference_best(groups, domains, terms, totals)
        if best is None:
            break
        group = groups[best]
        chosen.append(group.popleft())
        if not group:
            del groups[best]
        domains.add(best)
    return chosen


@dataclass(frozen=True)
class RefSpan:
    low: int
    high: int

    def level_score(self, count: int) -> int:
        if self.high == self.low:
            return 0
        return MAX_LEVEL_SCORE * (self.high - count) // (self.high - self.low)


class RefDomains:
    def __init__(self, paths: Iterable[Path]) -> None:
        self.counts: dict[Path, int] = {}
        self.children: dict[Path, list[Path]] = {}
        for path in paths:
            for depth in range(1, len(path) + 1):
                domain = path[:depth]
                if domain not in self.counts:
                    self.counts[domain] = 0
                    self.children.setdefault(path[: depth - 1], []).append(domain)

    def add(self, path: Path) -> None:
        for depth in range(1, len(path) + 1):
            self.counts[path[:depth]] += 1

    def least(self, depth: int) -> int:
        return min(c for d, c in self.counts.items() if len(d) == depth)

    def spans(self) -> dict[Path, RefSpan]:
        return {
            parent: RefSpan(min(self.counts[d] for d in kids), max(self.counts[d] for d in kids))
            for parent, kids in self.children.items()
        }


def reference_best(
    groups: Mapping[Path, deque[ManagedCluster]],
    domains: RefDomains,
    terms: Sequence[Constraint],
    totals: Mapping[str, int],
) -> Path | None:
    spans = domains.spans()

    def within_skew(path: Path) -> bool:
        for depth, t in enumerate(terms[: len(path)], start=1):
            if t.hard and domains.counts[path[:depth]] + 1 - domains.least(depth) > t.max_skew:
                return False
        return True

    def spread_score(path: Path) -> int:
        score = 0
        for depth in range(1, len(terms) + 1):
            digit = 0
            if depth <= len(path):
                digit = 1 + spans[path[: depth - 1]].level_score(domains.counts[path[:depth]])
            score = score * LEVEL_BASE + digit
        return score

    allowed = [p for p in groups if within_skew(p)]
    if not allowed:
        return None
    scores = {p: spread_score(p) for p in allowed}
    low, high = min(scores.values()), max(scores.values())

    def normalize(score: int) -> int:
        if high == low:
            return 0
        return 2 * MAX_SPREAD_SCORE * (score - low) // (high - low) - MAX_SPREAD_SCORE

    def key(path: Path) -> tuple[int, str]:
        name = groups[path][0]["metadata"]["name"]
        return (-(totals.get(name, 0) + SPREAD_WEIGHT * normalize(scores[path])), name)

    return min(allowed, key=key)


KEYS = ("region", "zone", "rack")


def random_fleet(rng: random.Random) -> tuple[list[ManagedCluster], dict[str, int]]:
    """Clusters with few values per key (some lacking a key), and prioritizer totals
    either tied, close (the spread decides) or far apart (they outweigh it)."""
    values = {key: [f"{key[0]}{i}" for i in range(rng.randrange(1, 5))] for key in KEYS}
    spread_of_totals = rng.choice([0, 3, 150, 1000])
    clusters: list[ManagedCluster] = []
    totals: dict[str, int] = {}
    for i in range(rng.randrange(0, 40)):
        labels = {k: rng.choice(v) for k, v in values.items() if rng.random() > 0.1}
        claims = {k: rng.choice(v) for k, v in values.items() if rng.random() > 0.1}
        clusters.append(cluster(f"c{i:02d}", claims, **labels))
        totals[f"c{i:02d}"] = rng.randrange(-spread_of_totals, spread_of_totals + 1)
    return clusters, totals


def random_terms(rng: random.Random) -> list[Obj]:
    return [
        term(
            rng.choice(KEYS),
            claim=rng.random() < 0.3,
            max_skew=rng.choice([None, 1, 2, 3]),
            hard=rng.random() < 0.4,
        )
        for _ in range(rng.randrange(1, 4))
    ]


def test_the_kept_state_picks_as_recomputing_everything_does() -> None:
    rng = random.Random(20)
    for _ in range(1500):
        clusters, totals = random_fleet(rng)
        spec = placement(*random_terms(rng))
        limit = rng.choice([None, rng.randrange(0, len(clusters) + 3)])
        ranked = rank(clusters, totals)
        expected = reference_select(spec, ranked, totals, limit=limit)
        found = select_clusters(spec, ranked, totals, limit=limit)
        assert [c["metadata"]["name"] for c in found] == [
            c["metadata"]["name"] for c in expected
        ], (spec, totals, limit)


def test_the_kept_state_merges_counts_sharing_a_level_score() -> None:
    # Zones a and b, their clusters far above c's in the prioritizers, are chosen about
    # alike while c stays at 0: once their counts pass 63, a count and the next get the
    # same level score, and their best clusters compete as one class.
    rng = random.Random(7)
    for _ in range(10):
        clusters = [cluster(f"{z}{i:03d}", zone=z) for z in "ab" for i in range(100)]
        totals = {c["metadata"]["name"]: 10_000 + rng.randrange(3) for c in clusters}
        clusters.append(cluster("c000", zone="c"))
        spec = placement(term("zone"))
        ranked = rank(clusters, totals)
        expected = reference_select(spec, ranked, totals, limit=199)
        found = select_clusters(spec, ranked, totals, limit=199)
        assert [c["metadata"]["name"] for c in found] == [c["metadata"]["name"] for c in expected]
