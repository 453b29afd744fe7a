"""Spread policy: choosing clusters evenly across topology domains (a pyocm extension).

Upstream serves ``spec.spreadPolicy`` but its scheduler has no code that reads it: on an
upstream hub a placement gets the same decisions with or without one. pyocm applies the
semantics of OCM's enhancement proposal "Spread Policy across Failure-domains in
Placement APIs" (open-cluster-management-io/enhancements,
``enhancements/sig-architecture/70-spread-policy``, status provisional), so **the same
placement can get different decisions here than on an upstream hub**. A placement without
spread constraints (no ``spreadPolicy``, or an empty ``spreadConstraints``) gets exactly
upstream's selection: rank by total score, ties by name, the first ``numberOfClusters``.

Topology. Each constraint names a topology key: a label (``topologyKeyType: Label``) or
a cluster claim (``Claim``). The constraints are nested in their order, as the
enhancement's "topology tuples": a cluster's domain for constraint ``i`` is the tuple of
its values for constraints ``0..i``, so zone ``1a`` of region ``east`` and zone ``1a`` of
region ``west`` are two domains, and a domain's siblings are the domains sharing its
parent tuple. Domains are those of the clusters that may be selected (the feasible
clusters, less those excluded below); a domain whose clusters are all chosen still counts.

Selection (the enhancement's ``EvenSpreadSelector``) picks one cluster at a time until
``numberOfClusters`` are chosen (every cluster when it is unset) or none may be picked:

1. A ``whenUnsatisfiable: DoNotSchedule`` constraint excludes each cluster whose pick
   would leave its domain more than ``maxSkew`` (default 1) above the global minimum:
   as the API's own maxSkew doc (what ``kubectl explain`` shows) defines it, the least
   chosen count of "the topologies within the same TopologyKey", which with nesting are
   all the domains at that constraint's depth, whatever their parents. So zone ``w1``
   of region west, chosen once, bounds the zones of region east at ``1 + maxSkew``.
   ``ScheduleAnyway`` constraints exclude nothing: they only steer the choice through
   step 2, so their ``maxSkew`` has no effect.
2. Each cluster left gets a level score per constraint in [0, 63], as the enhancement
   computes it: 63 scaled down linearly from its sibling domains' least chosen count to
   their most (0 for all when the counts are equal, or the domain has no sibling). The
   API doc defines only the skew, not this ranking, so the enhancement's sibling scores
   stay: an earlier constraint evens out the parents, and each parent's children are
   evened out among themselves. The
   levels make one number, an earlier constraint outweighing every later one, scaled
   linearly to [-100, 100] among the clusters left (0 for all when equal).
3. A cluster's final score is its prioritizers' total plus :data:`SPREAD_WEIGHT` (2)
   times that spread score; the highest is picked, ties by name.

The enhancement also proposes a ``BuiltIn: Spread`` prioritizer configuration to set this
weight; upstream rejects that name ("incorrect builtin prioritizer") and so does pyocm,
so the weight is always the enhancement's default, 2, in both prioritizer modes.

Clusters lacking a topology key (the enhancement is silent; this follows Kubernetes'
PodTopologySpread): a cluster's tuple stops at the first key it lacks. If that or any
later constraint is ``DoNotSchedule`` the cluster is never selected (whether its pick
keeps the skew cannot be told). Otherwise it may be selected: from that constraint on
it has no domain (its picks count in none) and scores below every cluster that has one,
so it is preferred last unless the prioritizers outweigh the spread. To have a level
score under 0, pyocm packs the levels as digits of base 65 (a cluster lacking the key
0, else 1 + the enhancement's score) where the enhancement shifts by 6 bits. That
orders no two clusters' spread scores differently; only a cluster scoring between the
best and the worst may get a slightly different value in [-100, 100].

When the DoNotSchedule constraints stop the selection early, the unscheduled count is
``numberOfClusters`` minus those chosen (PlacementSatisfied False, as for any
shortfall); with ``numberOfClusters`` unset it stays 0. Each pick costs time in the number of
domains (clusters sharing a full tuple are taken best first, as one candidate), so a
topology key unique to every cluster makes a large fleet's pass quadratic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement, PlacementSpecSpreadPolicySpreadConstraint
from pyocm.placement.scheduling.predicates import claims_of

#: The spread score's weight against the prioritizers' (the enhancement's Additive default).
SPREAD_WEIGHT = 2
MAX_LEVEL_SCORE = 63
#: A level's digit: 0 for a cluster lacking the key, 1 + its level score otherwise.
LEVEL_BASE = MAX_LEVEL_SCORE + 2
MAX_SPREAD_SCORE = 100
DO_NOT_SCHEDULE = "DoNotSchedule"
CLAIM = "Claim"

#: A topology tuple: a cluster's values for the constraints, in order, up to the first
#: key it lacks. Its prefixes are its domains, one per constraint.
Path = tuple[str, ...]


@dataclass(frozen=True)
class Constraint:
    """One ``spreadConstraints`` term, defaults applied: ``claim`` for topologyKeyType
    Claim (else a label), ``hard`` for whenUnsatisfiable DoNotSchedule."""

    key: str
    claim: bool
    max_skew: int
    hard: bool


def has_spread(placement: Placement) -> bool:
    """Whether ``placement`` has a spread constraint. If so, its decisions depend on the
    topology labels and claims of every feasible cluster, selected or not: they make the
    domains whose counts bound the skew and rank the clusters."""
    return bool(placement["spec"].get("spreadPolicy", {}).get("spreadConstraints"))


def constraints_of(placement: Placement) -> list[Constraint]:
    """The placement's spread constraints in order (the CRD's defaults where unset)."""
    terms = placement["spec"].get("spreadPolicy", {}).get("spreadConstraints") or []
    return [_constraint(term) for term in terms]


def _constraint(term: PlacementSpecSpreadPolicySpreadConstraint) -> Constraint:
    return Constraint(
        key=term.get("topologyKey", ""),
        claim=term.get("topologyKeyType") == CLAIM,
        max_skew=max(term.get("maxSkew", 1), 1),
        hard=term.get("whenUnsatisfiable") == DO_NOT_SCHEDULE,
    )


def select_clusters(
    placement: Placement,
    ranked: Sequence[ManagedCluster],
    totals: Mapping[str, int],
    *,
    limit: int | None,
) -> list[ManagedCluster]:
    """The clusters to select from ``ranked`` (the feasible clusters by total score,
    highest first, ties by name), at most ``limit`` (None: no limit).

    Without spread constraints, the first ``limit`` of ``ranked``, as upstream. With
    them, see the module doc; the result is in the order picked.
    """
    terms = constraints_of(placement)
    if not terms:
        return list(ranked if limit is None else ranked[:limit])
    if not any(t.hard for t in terms) and (limit is None or limit >= len(ranked)):
        return list(ranked)  # nothing is excluded and every cluster is taken anyway
    groups = _groups(ranked, terms)
    domains = _Domains(groups)
    chosen: list[ManagedCluster] = []
    while groups and (limit is None or len(chosen) < limit):
        path = _best(groups, domains, terms, totals)
        if path is None:
            break
        group = groups[path]
        chosen.append(group.popleft())
        if not group:
            del groups[path]
        domains.add(path)
    return chosen


def path_of(cluster: ManagedCluster, terms: Sequence[Constraint]) -> Path:
    """The cluster's topology tuple: its value of each constraint's key, up to the first
    it lacks."""
    labels = cluster.get("metadata", {}).get("labels") or {}
    claims = claims_of(cluster) if any(t.claim for t in terms) else {}
    values: list[str] = []
    for term in terms:
        source = claims if term.claim else labels
        if term.key not in source:
            break
        values.append(source[term.key])
    return tuple(values)


def _groups(
    ranked: Sequence[ManagedCluster], terms: Sequence[Constraint]
) -> dict[Path, deque[ManagedCluster]]:
    """The selectable clusters by topology tuple, each group best first. Clusters of one
    tuple share their domains, so the spread scores them alike: a group's first is its
    best candidate."""
    groups: dict[Path, deque[ManagedCluster]] = {}
    for cluster in ranked:
        path = path_of(cluster, terms)
        if any(t.hard for t in terms[len(path) :]):
            continue  # lacks a key a DoNotSchedule constraint needs
        groups.setdefault(path, deque()).append(cluster)
    return groups


@dataclass(frozen=True)
class _Span:
    """The least and the most chosen counts of a set of sibling domains."""

    low: int
    high: int

    def level_score(self, count: int) -> int:
        if self.high == self.low:
            return 0
        return MAX_LEVEL_SCORE * (self.high - count) // (self.high - self.low)


def _span(counts: Iterable[int]) -> _Span:
    ordered = sorted(counts)
    return _Span(ordered[0], ordered[-1])


class _Domains:
    """Every domain of the selectable clusters, how many clusters were chosen in each,
    and each domain's parent (the tuple one shorter)."""

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
        """The least chosen count of the domains at ``depth`` (the global minimum)."""
        return min(c for d, c in self.counts.items() if len(d) == depth)

    def spans(self) -> dict[Path, _Span]:
        """Each parent's span over its child domains, recomputed per pick: failure
        domains are usually few (see the module doc for a key unique to each cluster)."""
        return {
            parent: _span(self.counts[d] for d in children)
            for parent, children in self.children.items()
        }


def _within_skew(path: Path, terms: Sequence[Constraint], domains: _Domains) -> bool:
    """Whether picking a cluster of ``path`` keeps every DoNotSchedule constraint's skew
    within its maxSkew: the picked domain's count, after the pick, at most ``maxSkew``
    above the least count of all domains at its depth (the global minimum). Only the
    picked domain's skew grows, and if it was the least it stays within 1."""
    for depth, term in enumerate(terms[: len(path)], start=1):
        if term.hard and domains.counts[path[:depth]] + 1 - domains.least(depth) > term.max_skew:
            return False
    return True


def _spread_score(path: Path, levels: int, domains: _Domains, spans: Mapping[Path, _Span]) -> int:
    """The level scores of ``path``'s domains as one number, earlier constraints first;
    a level past the tuple's end (a key the cluster lacks) is the lowest digit."""
    score = 0
    for depth in range(1, levels + 1):
        digit = 0
        if depth <= len(path):
            count = domains.counts[path[:depth]]
            digit = 1 + spans[path[: depth - 1]].level_score(count)
        score = score * LEVEL_BASE + digit
    return score


def _normalize(score: int, low: int, high: int) -> int:
    if high == low:
        return 0
    return 2 * MAX_SPREAD_SCORE * (score - low) // (high - low) - MAX_SPREAD_SCORE


def _best(
    groups: Mapping[Path, deque[ManagedCluster]],
    domains: _Domains,
    terms: Sequence[Constraint],
    totals: Mapping[str, int],
) -> Path | None:
    """The tuple whose best cluster to pick next (None when every pick would break a
    DoNotSchedule constraint): highest total plus weighted spread score, ties by name."""
    spans = domains.spans()
    allowed = [p for p in groups if _within_skew(p, terms, domains)]
    if not allowed:
        return None
    scores = {p: _spread_score(p, len(terms), domains, spans) for p in allowed}
    low, high = min(scores.values()), max(scores.values())

    def key(path: Path) -> tuple[int, str]:
        name = groups[path][0]["metadata"]["name"]
        spread = SPREAD_WEIGHT * _normalize(scores[path], low, high)
        return (-(totals.get(name, 0) + spread), name)

    return min(allowed, key=key)
