"""Selection: rank the feasible clusters by total score and take ``numberOfClusters``.

As upstream's ``schedule.go``: clusters sort by total score, highest first, ties by name;
the first ``numberOfClusters`` are selected (all when it is unset), and the unscheduled
count is ``numberOfClusters`` minus the selected (0 when unset).

``spec.spreadPolicy`` is a pyocm extension (:mod:`.spread`): upstream's scheduler has no
code reading it, while pyocm spreads the selection over the constraints' topology domains
as OCM's spread-policy enhancement proposes, so a placement with spread constraints can
get other decisions than on an upstream hub. Without constraints the selection is
upstream's. ``spec.sortBy`` and decision scores are unused, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.placement.scheduling import spread
from pyocm.placement.scheduling.prioritize import (
    Misconfigured,
    PluginWarning,
    PrioritizerResult,
    ScoreLookup,
    ScoringInputs,
    score_clusters,
)


@dataclass(frozen=True)
class Selection:
    """The scheduler's result for one placement.

    ``selected``: the chosen clusters, highest score first (ties by name), or with
    spread constraints in the order the spread picked them.
    ``scores``: every feasible cluster's total (empty when misconfigured).
    ``prioritizers``: each enabled prioritizer's result, for events and debugging.
    ``warning``: the last plugin warning (expired add-on scores); scheduling went on.
    ``misconfigured``: why nothing could be scheduled; ``selected`` is then empty.
    """

    selected: list[ManagedCluster]
    unscheduled: int
    scores: dict[str, int] = field(default_factory=dict)
    prioritizers: list[PrioritizerResult] = field(default_factory=list)
    warning: PluginWarning | None = None
    misconfigured: Misconfigured | None = None

    @property
    def names(self) -> list[str]:
        return [c["metadata"]["name"] for c in self.selected]


def prioritize_and_select(
    placement: Placement,
    clusters: Sequence[ManagedCluster],
    *,
    decided: frozenset[str],
    selected_elsewhere: Mapping[str, int],
    max_selected_elsewhere: int,
    scores: ScoreLookup,
    now: datetime,
) -> Selection:
    """Score the feasible ``clusters`` (those the filters passed) and select among them.

    ``decided``, ``selected_elsewhere``, ``max_selected_elsewhere``, ``scores`` and ``now``
    are :class:`~pyocm.placement.scheduling.prioritize.ScoringInputs`' fields. A policy the
    scheduler cannot follow gives an empty selection with ``misconfigured`` set (upstream's
    Misconfigured status, plugin "").
    """
    inputs = ScoringInputs(decided, selected_elsewhere, max_selected_elsewhere, scores, now)
    try:
        scoring = score_clusters(placement, clusters, inputs)
    except Misconfigured as problem:
        return Selection([], 0, misconfigured=problem)
    ranked = rank(clusters, scoring.totals)
    wanted = placement["spec"].get("numberOfClusters")
    limit = None if wanted is None else max(wanted, 0)
    selected = spread.select_clusters(placement, ranked, scoring.totals, limit=limit)
    unscheduled = 0 if wanted is None else wanted - len(selected)
    return Selection(selected, unscheduled, scoring.totals, scoring.results, scoring.warning)


def rank(clusters: Sequence[ManagedCluster], totals: Mapping[str, int]) -> list[ManagedCluster]:
    """Clusters by total score, highest first, ties by name (a cluster without a total
    counts 0)."""

    def key(cluster: ManagedCluster) -> tuple[int, str]:
        name = cluster["metadata"]["name"]
        return (-totals.get(name, 0), name)

    return sorted(clusters, key=key)
