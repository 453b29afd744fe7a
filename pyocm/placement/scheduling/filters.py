"""The scheduler's filters in upstream's order (Predicate, then TaintToleration), with
the requeue time the TaintToleration filter asks for: the one entry point the placement
controller calls per placement.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement

from .clusterindex import ClusterIndex, selected
from .predicates import Misconfigured, ScoreLookup, compile_predicates, filter_predicates
from .taints import filter_taints, requeue_at


@dataclass(frozen=True)
class FilterResult:
    """The clusters that passed (in the order given), or the misconfiguration message
    (``<plugin>:<message>``, nothing passed); ``requeue_after``: seconds until a
    toleration of a decided cluster runs out, or None."""

    passed: list[ManagedCluster]
    misconfigured: str | None = None
    requeue_after: float | None = None


def filter_clusters(
    placement: Placement,
    clusters: Sequence[ManagedCluster],
    *,
    decided: Collection[str],
    now: datetime,
    decided_clusters: Iterable[ManagedCluster] | None = None,
    scores: ScoreLookup | None = None,
    deadline: float | None = None,
) -> FilterResult:
    """Filter the placement's available ``clusters`` (:func:`.candidates.candidates`).

    ``decided``: the names of the clusters in its PlacementDecisions now;
    ``decided_clusters``: those ManagedClusters (upstream looks them up among all
    clusters, available or not; default: those among ``clusters``), whose tolerations'
    expiry sets ``requeue_after``; ``scores``: the AddOnPlacementScore lookup CEL's
    ``scores()`` reads; ``deadline``: the ``time.monotonic()`` instant past which no CEL
    expression matches (:mod:`.predicates`). A misconfigured placement gets no requeue,
    as upstream."""
    try:
        passed = filter_predicates(placement, clusters, scores=scores, deadline=deadline)
        passed = filter_taints(placement, passed, decided=decided, now=now)
    except Misconfigured as err:
        return FilterResult(passed=[], misconfigured=str(err))
    if decided_clusters is None:
        decided_clusters = [c for c in clusters if c.get("metadata", {}).get("name") in decided]
    expiry = requeue_at(placement, decided_clusters, now=now)
    after = None if expiry is None else (expiry - now).total_seconds()
    return FilterResult(passed=passed, requeue_after=after)


def may_pass_predicates(
    placement: Placement, names: frozenset[str], clusters: ClusterIndex
) -> frozenset[str]:
    """Of the available ``names``, those whose labels some predicate's labelSelector
    matches: every cluster the predicates pass, and maybe more (claims and CEL are left
    to :func:`filter_clusters`), found through the index. All of ``names`` when a
    predicate does not compile, so that :func:`filter_clusters` meets it as without
    this step (upstream reports a bad predicate only when there are clusters)."""
    if not placement["spec"].get("predicates") or not names:
        return names
    try:
        compiled = compile_predicates(placement)
    except Misconfigured:
        return names
    found: set[str] = set()
    for predicate in compiled:
        found |= selected(predicate.labels, clusters)
    return names & found
