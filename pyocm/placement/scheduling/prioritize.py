"""Prioritizers: each feasible cluster's score, as upstream's ``schedule.go`` and plugins give it.

The prioritizer policy names the prioritizers and their weights: mode ``Additive`` (or
empty) starts from the defaults (Balance and Steady, weight 1) and lets the spec override
them, ``Exact`` uses only the spec. A prioritizer of weight 0 is off. Each one scores a
cluster in [-100, 100]; a cluster's total is the sum of score times weight.

- Balance: 100 for a cluster no other placement chose, else ``2*int(100*(0.5-n/max))``
  where n counts the cluster's decisions in every other placement's PlacementDecisions
  and max is the largest such count.
- Steady: 100 for a cluster already in this placement's decisions, else 0.
- ResourceAllocatableCPU/Memory: allocatable scaled linearly to [-100, 100] between the
  least and the most allocatable among the clusters (100 for all when they are equal);
  a cluster lacking the allocatable or the capacity of the resource gets no score.
- ``AddOn/<resourceName>/<scoreName>``: the named score of the cluster's
  AddOnPlacementScore ``<resourceName>`` in the cluster's namespace, 0 when it is absent
  or past its ``validUntil`` (expired scores make a warning, as upstream's status does).

Nothing here reads the API: the caller passes what the plugins would have listed.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import AddOnPlacementScore
from pyocm.api.models.cluster_v1beta1 import (
    Placement,
    PlacementDecision,
    PlacementSpecPrioritizerPolicyConfiguration,
)
from pyocm.kube import timefmt
from pyocm.kube.quantity import QuantityError, parse_quantity

BALANCE = "Balance"
STEADY = "Steady"
RESOURCE_ALLOCATABLE_CPU = "ResourceAllocatableCPU"
RESOURCE_ALLOCATABLE_MEMORY = "ResourceAllocatableMemory"
BUILT_IN = "BuiltIn"
ADD_ON = "AddOn"
MAX_CLUSTER_SCORE = 100

_RESOURCES = {RESOURCE_ALLOCATABLE_CPU: "cpu", RESOURCE_ALLOCATABLE_MEMORY: "memory"}


class Misconfigured(Exception):
    """A placement its scheduler cannot follow; ``plugin`` is "" where upstream names none.

    The PlacementMisconfigured condition's message is :attr:`condition_message`.
    """

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.message = message

    @property
    def condition_message(self) -> str:
        return f"{self.plugin}:{self.message}"


@dataclass(frozen=True)
class PluginWarning:
    """A plugin's Warning status: scheduling went on, and the DecisionUpdate event says why."""

    plugin: str
    message: str


class ScoreLookup(Protocol):
    """The AddOnPlacementScore named ``resource_name`` in namespace ``cluster``, if any."""

    def __call__(self, cluster: str, resource_name: str) -> AddOnPlacementScore | None: ...


@dataclass(frozen=True)
class Coordinate:
    """A ``scoreCoordinate``: which prioritizer. ``serial`` keeps add-on coordinates apart,
    as upstream's map keyed by a struct holding a pointer never merges two of them."""

    type: str
    built_in: str = ""
    add_on: tuple[str, str] | None = None
    serial: int = 0

    @property
    def name(self) -> str:
        if self.add_on is not None and self.type != BUILT_IN:
            return f"{ADD_ON}/{self.add_on[0]}/{self.add_on[1]}"
        return self.built_in


@dataclass(frozen=True)
class Weighted:
    """An enabled prioritizer and its weight."""

    coordinate: Coordinate
    weight: int


@dataclass(frozen=True)
class ScoringInputs:
    """What the prioritizers read besides the clusters.

    ``decided``: clusters in this placement's PlacementDecisions (Steady).
    ``elsewhere``: per cluster, its decisions in all other placements' PlacementDecisions;
    ``max_elsewhere``: the largest of those counts over every cluster (Balance).
    ``scores``: AddOnPlacementScores by cluster namespace and name; ``now`` judges validUntil.
    """

    decided: frozenset[str]
    elsewhere: Mapping[str, int]
    max_elsewhere: int
    scores: ScoreLookup
    now: datetime


@dataclass(frozen=True)
class PrioritizerResult:
    """One prioritizer's name, weight and scores (upstream's ``PrioritizerResult``)."""

    name: str
    weight: int
    scores: dict[str, int]


@dataclass(frozen=True)
class Scoring:
    """Every enabled prioritizer's result, each cluster's total, and the last warning."""

    totals: dict[str, int]
    results: list[PrioritizerResult] = field(default_factory=list)
    warning: PluginWarning | None = None


_DEFAULTS = (Weighted(Coordinate(BUILT_IN, BALANCE), 1), Weighted(Coordinate(BUILT_IN, STEADY), 1))


def weights(placement: Placement) -> list[Weighted]:
    """The prioritizers the placement enables (weight not 0), in a stable order: defaults
    first (Additive), then the spec's in turn, a later one for the same built-in replacing
    the earlier weight. Raises :class:`Misconfigured` with upstream's messages."""
    policy = placement["spec"].get("prioritizerPolicy", {})
    mode = policy.get("mode", "")
    if mode == "Exact":
        merged: dict[Coordinate, int] = {}
    elif mode in ("Additive", ""):
        merged = {w.coordinate: w.weight for w in _DEFAULTS}
    else:
        raise Misconfigured("", f"incorrect prioritizer policy mode: {mode}")
    for serial, config in enumerate(policy.get("configurations", [])):
        merged[_coordinate(config, serial)] = config.get("weight", 0)
    enabled = [Weighted(c, w) for c, w in merged.items() if w != 0]
    for item in enabled:
        _check(item.coordinate)
    return enabled


def _coordinate(config: PlacementSpecPrioritizerPolicyConfiguration, serial: int) -> Coordinate:
    found = config.get("scoreCoordinate")
    if found is None:
        raise Misconfigured("", "scoreCoordinate field is required")
    add_on = found.get("addOn")
    if add_on is None:
        return Coordinate(found.get("type", ""), found.get("builtIn", ""))
    pair = (add_on.get("resourceName", ""), add_on.get("scoreName", ""))
    return Coordinate(found.get("type", ""), found.get("builtIn", ""), pair, serial)


def _check(coordinate: Coordinate) -> None:
    if coordinate.type == BUILT_IN:
        if coordinate.built_in not in (BALANCE, STEADY, *_RESOURCES):
            raise Misconfigured("", f"incorrect builtin prioritizer: {coordinate.built_in}")
    elif coordinate.add_on is None:
        # Any type but BuiltIn is read as AddOn, as upstream's else branch does.
        raise Misconfigured("", "addOn should not be empty")


@dataclass(frozen=True)
class Bounds:
    """The least and the most allocatable of one resource among a placement's feasible
    clusters, and how many clusters have each: what the ResourceAllocatable scores are
    scaled between."""

    low: float
    high: float
    at_low: int
    at_high: int


def resource_of(prioritizer: str) -> str | None:
    """The resource a ResourceAllocatable prioritizer scores by (None for the others)."""
    return _RESOURCES.get(prioritizer)


def bounds_of(clusters: Iterable[ManagedCluster], resource: str) -> Bounds | None:
    """The bounds of ``resource`` among ``clusters`` (None when none reports it)."""
    values = [v for v in (allocatable_of(c, resource) for c in clusters) if v is not None]
    if not values:
        return None
    low, high = min(values), max(values)
    return Bounds(low, high, values.count(low), values.count(high))


def score_clusters(
    placement: Placement,
    clusters: Sequence[ManagedCluster],
    inputs: ScoringInputs,
    *,
    bounds: Mapping[str, Bounds] | None = None,
) -> Scoring:
    """Every enabled prioritizer's scores and each cluster's weighted total.

    ``bounds``, by resource, scales the ResourceAllocatable scores in place of the
    bounds among ``clusters`` (to score a few clusters as among the whole feasible set).
    Raises :class:`Misconfigured` for a policy the scheduler cannot follow.
    """
    names = [c["metadata"]["name"] for c in clusters]
    totals = dict.fromkeys(names, 0)
    results: list[PrioritizerResult] = []
    warning: PluginWarning | None = None
    for item in weights(placement):
        scores, problem = _score(item.coordinate, clusters, names, inputs, bounds or {})
        warning = problem or warning
        results.append(PrioritizerResult(item.coordinate.name, item.weight, scores))
        for name, value in scores.items():
            totals[name] += value * item.weight
    return Scoring(totals, results, warning)


def _score(
    coordinate: Coordinate,
    clusters: Sequence[ManagedCluster],
    names: list[str],
    inputs: ScoringInputs,
    bounds: Mapping[str, Bounds],
) -> tuple[dict[str, int], PluginWarning | None]:
    if coordinate.add_on is not None and coordinate.type != BUILT_IN:
        resource_name, score_name = coordinate.add_on
        return add_on_scores(names, resource_name, score_name, inputs.scores, inputs.now)
    if coordinate.built_in == BALANCE:
        return balance_scores(names, inputs.elsewhere, inputs.max_elsewhere), None
    if coordinate.built_in == STEADY:
        return steady_scores(names, inputs.decided), None
    resource = _RESOURCES[coordinate.built_in]
    return allocatable_scores(clusters, resource, bounds=bounds.get(resource)), None


def balance_scores(
    names: Sequence[str], elsewhere: Mapping[str, int], max_count: int
) -> dict[str, int]:
    """Balance: fewer decisions in other placements score higher (see the module doc)."""
    scores = {}
    for name in names:
        count = elsewhere.get(name, 0)
        if count == 0:
            scores[name] = MAX_CLUSTER_SCORE
        else:
            # Go's int64() of a float truncates toward zero, as int() does.
            scores[name] = 2 * int(float(MAX_CLUSTER_SCORE) * (0.5 - count / max_count))
    return scores


def steady_scores(names: Sequence[str], decided: frozenset[str]) -> dict[str, int]:
    """Steady: 100 for clusters this placement already chose, else 0."""
    return {name: MAX_CLUSTER_SCORE if name in decided else 0 for name in names}


def allocatable_scores(
    clusters: Sequence[ManagedCluster], resource: str, *, bounds: Bounds | None = None
) -> dict[str, int]:
    """ResourceAllocatable<CPU|Memory>: allocatable scaled to [-100, 100] among the
    clusters, or between ``bounds`` when given."""
    known = {}
    for cluster in clusters:
        found = allocatable_of(cluster, resource)
        if found is not None:
            known[cluster["metadata"]["name"]] = found
    if not known:
        return {}
    low, high = (bounds.low, bounds.high) if bounds else (min(known.values()), max(known.values()))
    if high == low:
        return dict.fromkeys(known, MAX_CLUSTER_SCORE)
    return {name: int(((v - low) / (high - low) - 0.5) * 2.0 * 100.0) for name, v in known.items()}


def allocatable_of(cluster: ManagedCluster, resource: str) -> float | None:
    """The cluster's allocatable amount, if it reports both allocatable and capacity
    (upstream skips a cluster lacking either)."""
    status = cluster.get("status", {})
    allocatable = status.get("allocatable", {}).get(resource)
    if allocatable is None or resource not in status.get("capacity", {}):
        return None
    return _amount(str(allocatable))


@functools.lru_cache(maxsize=4096)
def _amount(text: str) -> float | None:
    """A quantity as ``AsApproximateFloat64`` gives it; cached, as a fleet repeats a few
    amounts and exact parsing is the costliest step of scoring 10,000 clusters."""
    try:
        return float(parse_quantity(text).value)
    except QuantityError:
        return None  # an unreadable amount is as good as none


def add_on_scores(
    names: Sequence[str],
    resource_name: str,
    score_name: str,
    lookup: ScoreLookup,
    now: datetime,
) -> tuple[dict[str, int], PluginWarning | None]:
    """``AddOn/<resourceName>/<scoreName>``: the add-on's score per cluster, 0 when absent
    or expired; expired ones are named in a warning with upstream's wording."""
    scores = {}
    expired = ""
    for name in names:
        scores[name] = 0
        found = lookup(name, resource_name)
        if found is None:
            continue
        status = found.get("status", {})
        if _expired(status.get("validUntil"), now):
            expired += f" {name}/{resource_name}"
            continue
        for item in status.get("scores", []):
            if item["name"] == score_name:
                scores[name] = item["value"]  # the last of a repeated name wins, as upstream
    if not expired:
        return scores, None
    plugin = f"{ADD_ON}/{resource_name}/{score_name}"
    return scores, PluginWarning(plugin, f"AddOnPlacementScores{expired} expired")


def _expired(valid_until: str | None, now: datetime) -> bool:
    if not valid_until:
        return False
    try:
        return now > timefmt.parse_time(valid_until)
    except ValueError:
        return False  # the server validates the field; an unreadable one never expires


def decision_counts(decisions: Iterable[PlacementDecision]) -> Counter[str]:
    """How many decisions name each cluster across the given PlacementDecisions."""
    counts: Counter[str] = Counter()
    for decision in decisions:
        counts.update(d["clusterName"] for d in decision.get("status", {}).get("decisions", []))
    return counts


def counts_elsewhere(
    every: Mapping[str, int], own: Mapping[str, int]
) -> tuple[Mapping[str, int], int]:
    """Balance's inputs for one placement: each cluster's decisions in all PlacementDecisions
    (``every``) less those of this placement's own (``own``: the ones labelled with its name
    in its namespace, as upstream skips), and the largest count left.

    A count never goes below 0: the two caches may disagree for a moment (this
    placement's decisions seen by one before the other), and upstream, counting only
    the other placements' decisions, can never see a negative count."""
    if not own:
        return every, max(every.values(), default=0)
    left = dict(every)
    for name, count in own.items():
        left[name] = max(left.get(name, 0) - count, 0)
    return left, max(left.values(), default=0)


_MAX_EVENT_MESSAGE_LENGTH = 1000


def score_event_message(totals: Mapping[str, int]) -> str:
    """The ScoreUpdate event's message: ``name:score `` by cluster name, cut with ``......``
    once it would pass 1,000 characters; "" when there are no scores (no event then)."""
    text = ""
    for name in sorted(totals):
        item = f"{name}:{totals[name]} "
        if len(text) + len(item) > _MAX_EVENT_MESSAGE_LENGTH:
            return text + "......"
        text += item
    return text
