"""Whether a cluster entering or leaving a placement's feasible clusters leaves its
selection as its last pass made it, judged from a summary of that pass.

A pass costs milliseconds over a large fleet, and a fleet's label changes move clusters
in and out of many placements' filters; most of those clusters would never be chosen.
With the prioritizers upstream has, a cluster's total score depends only on the cluster
(Steady, Balance, AddOn scores), except ResourceAllocatable's, which scales allocatable
between the least and the most among the feasible clusters. So, for a cluster ``c``
the placement has not chosen:

* ``c`` leaving changes nothing when it holds neither bound alone: the other clusters'
  scores stay, and ``c`` was not among the chosen;
* ``c`` entering changes nothing when it moves no bound, the placement already has the
  clusters it wants, and every chosen cluster outranks ``c`` (higher total, or equal
  and an earlier name): ``c`` would rank below all of them.

A summary (:class:`PassSummary`) holds what that needs: the chosen clusters, how many
are wanted, and each bound with how many clusters hold it, updated here as clusters
come and go without a pass. A placement has no summary, and is always rescheduled,
when its selection is not a plain ranking (a spread policy), when a cluster event
cannot judge its filters exactly (tolerations that run out), or when its scores move
with time and no event (AddOn scores passing their ``validUntil``): upstream, whose
cluster handler reschedules every placement of the cluster's sets on any change, picks
up an expired score at such a pass, and so does pyocm.

Balance is judged with the counts as they are when the cluster changes, against the
chosen clusters of the last pass. Other placements' decisions move those counts
without rescheduling this placement (upstream enqueues only a decision's own
placement); upstream then applies the moved counts at the next pass any cluster event
causes, where pyocm applies them at the next pass this placement's own inputs cause.
So a change that cannot alter the selection made with the last pass's view does not,
by itself, rebalance a placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement

from .prioritize import (
    BUILT_IN,
    Bounds,
    Misconfigured,
    ScoringInputs,
    allocatable_of,
    bounds_of,
    resource_of,
    score_clusters,
    weights,
)
from .spread import has_spread


@dataclass(frozen=True)
class PassSummary:
    """What a placement's last pass chose, from what.

    ``version``: the placement's uid and generation the pass read; ``wanted``: its
    ``numberOfClusters`` (None: all); ``selected``: the chosen clusters' names;
    ``bounds``: per resource a ResourceAllocatable prioritizer reads (``resources``),
    its bounds among the feasible clusters (absent when none reports it)."""

    version: tuple[str, int]
    wanted: int | None
    selected: frozenset[str]
    resources: tuple[str, ...]
    bounds: Mapping[str, Bounds]


def summarize(
    placement: Placement, feasible: Sequence[ManagedCluster], selected: Sequence[ManagedCluster]
) -> PassSummary | None:
    """The summary of a pass that chose ``selected`` among ``feasible``, or None when
    this placement cannot be judged from one (see the module doc)."""
    spec = placement["spec"]
    if has_spread(placement):
        return None
    if any(t.get("tolerationSeconds") is not None for t in spec.get("tolerations") or []):
        return None
    try:
        enabled = weights(placement)
    except Misconfigured:
        return None
    if any(w.coordinate.type != BUILT_IN for w in enabled):
        return None  # AddOn scores expire with time alone
    found = (resource_of(w.coordinate.built_in) for w in enabled if w.coordinate.type == BUILT_IN)
    resources = tuple(sorted({r for r in found if r is not None}))
    bounds = {r: b for r in resources if (b := bounds_of(feasible, r)) is not None}
    meta = placement["metadata"]
    return PassSummary(
        version=(meta.get("uid", ""), meta.get("generation", 0)),
        wanted=spec.get("numberOfClusters"),
        selected=frozenset(c["metadata"]["name"] for c in selected),
        resources=resources,
        bounds=bounds,
    )


def unaffected(
    placement: Placement,
    summary: PassSummary,
    *,
    leaving: ManagedCluster | None,
    entering: ManagedCluster | None,
    chosen: Sequence[ManagedCluster],
    inputs: ScoringInputs,
) -> PassSummary | None:
    """The summary updated for ``leaving`` (as it was) leaving and ``entering`` (as it
    is) entering the placement's feasible clusters, when that leaves its selection as it
    is; None when a pass must look. ``chosen``: the selected clusters as they are now;
    ``inputs``: what scoring reads now (``decided`` the selected names)."""
    bounds = dict(summary.bounds)
    for cluster in (leaving, entering):
        if cluster is not None and cluster["metadata"]["name"] in summary.selected:
            return None
    if leaving is not None and not _leave(summary.resources, bounds, leaving):
        return None
    if entering is not None:
        if not _enter(summary.resources, bounds, entering):
            return None
        if not _ranks_below(placement, summary, entering, chosen, inputs, bounds):
            return None
    return replace(summary, bounds=bounds)


def _leave(resources: Sequence[str], bounds: dict[str, Bounds], cluster: ManagedCluster) -> bool:
    for resource in resources:
        value = allocatable_of(cluster, resource)
        if value is None:
            continue
        found = bounds.get(resource)
        if found is None:
            return False  # a feasible cluster reported it: the summary is not this one's
        if found.low < value < found.high:
            continue
        at_low = found.at_low - (value == found.low)
        at_high = found.at_high - (value == found.high)
        if value not in (found.low, found.high) or not at_low or not at_high:
            return False  # it held a bound alone (or was not counted): the scale moves
        bounds[resource] = replace(found, at_low=at_low, at_high=at_high)
    return True


def _enter(resources: Sequence[str], bounds: dict[str, Bounds], cluster: ManagedCluster) -> bool:
    for resource in resources:
        value = allocatable_of(cluster, resource)
        if value is None:
            continue
        found = bounds.get(resource)
        if found is None or not found.low <= value <= found.high:
            return False  # it would set a bound: every score on that scale moves
        bounds[resource] = replace(
            found,
            at_low=found.at_low + (value == found.low),
            at_high=found.at_high + (value == found.high),
        )
    return True


def _ranks_below(
    placement: Placement,
    summary: PassSummary,
    cluster: ManagedCluster,
    chosen: Sequence[ManagedCluster],
    inputs: ScoringInputs,
    bounds: Mapping[str, Bounds],
) -> bool:
    """Whether the placement has all it wants and each chosen cluster outranks ``cluster``."""
    if summary.wanted is None or len(summary.selected) < summary.wanted:
        return False
    if len(chosen) != len(summary.selected):
        return False  # a chosen cluster is gone: a pass replaces it
    try:
        totals = score_clusters(placement, [cluster, *chosen], inputs, bounds=bounds).totals
    except Misconfigured:
        return False
    name = cluster["metadata"]["name"]

    def outranks(other: str) -> bool:  # as select.rank orders: total down, then name up
        return totals[other] > totals[name] or (totals[other] == totals[name] and other < name)

    return all(outranks(c["metadata"]["name"]) for c in chosen)
