"""The scheduling controller: one Placement, level-based, as upstream's
``schedulingController.syncPlacement``.

A pass reads everything from informer caches: the placement's candidates (valid
bindings, eligible sets, available clusters), filters them (predicates, then taints
and tolerations), scores and selects, groups the selection into PlacementDecisions,
writes those, and ends in one status write. A placement being deleted, or with
scheduling disabled by annotation, is left alone. When a toleration in use will
expire, the placement is looked at again at that instant.

A misconfigured placement (a bad selector, toleration, prioritizer policy or group
strategy) gets what upstream writes for it: its scheduling stops with nothing selected,
so its decisions are emptied, and PlacementMisconfigured says why. It is not retried:
only a change of its spec can repair it, and that wakes it. One whose only problem is
its group strategy was still scheduled (upstream divides into groups after scheduling),
so a toleration in use that will expire still brings it back at that instant.

The filters of a placement with CEL expressions (this interpreter is far slower than
cel-go) run in a worker thread, so one placement's expressions never hold up the event
loop the hub serves its API on, and under a wall-clock cap of ``cel_time_limit`` seconds
per pass: expressions still running then do not match, as a CEL run-time failure does
upstream. The selection of a placement with a spread policy (one pick at a time, see
:mod:`.scheduling.spread`) runs in a worker thread too.

Each pass leaves a summary of what it chose from (:mod:`.scheduling.unaffected`), which
:meth:`SchedulingController.unaffected` reads so that a cluster entering or leaving the
placement's filters wakes it only when its selection could change.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from datetime import datetime

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import (
    AddOnPlacementScore,
    AddOnPlacementScoreStatusScore,
)
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet, ManagedClusterSetBinding
from pyocm.base.clock import Clock
from pyocm.placement import status as placement_status
from pyocm.placement.clustercache import InformerClusters
from pyocm.placement.decisions import DecisionWriter
from pyocm.placement.scheduling import candidates as candidate_clusters
from pyocm.placement.scheduling.filters import filter_clusters, may_pass_predicates
from pyocm.placement.scheduling.groups import decision_groups, decision_pages, group_statuses
from pyocm.placement.scheduling.predicates import uses_cel
from pyocm.placement.scheduling.prioritize import (
    Misconfigured,
    ScoringInputs,
    decision_counts,
)
from pyocm.placement.scheduling.select import Selection, prioritize_and_select
from pyocm.placement.scheduling.spread import has_spread
from pyocm.placement.scheduling.unaffected import PassSummary, summarize, unaffected
from pyocm.placement.usage import DecisionUsage, clusters_of
from pyocm.runtime.cache import by_namespace, key_of
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer

#: The bindings informer's index by namespace.
BINDINGS_BY_NAMESPACE = "namespace"
#: Wall-clock seconds one pass's filters (its CEL expressions) may take: room for a first
#: pass over 10,000 clusters (each converted once, then ~125 µs an expression here).
CEL_TIME_LIMIT = 10.0


@dataclass(frozen=True)
class Informers:
    """The caches one scheduling pass reads."""

    placements: Informer
    decisions: Informer
    clusters: Informer
    cluster_sets: Informer
    bindings: Informer
    scores: Informer


class SchedulingController:
    def __init__(
        self,
        api: Api,
        informers: Informers,
        *,
        writer: DecisionWriter,
        clock: Clock,
        cel_time_limit: float = CEL_TIME_LIMIT,
    ) -> None:
        self.api, self.informers, self.writer, self.clock = api, informers, writer, clock
        self.cel_time_limit = cel_time_limit
        self.usage = DecisionUsage(informers.decisions)
        self.clusters = InformerClusters(informers.clusters)
        #: Each placement's last pass, by key, for :meth:`unaffected`.
        self.summaries: dict[str, PassSummary] = {}
        informers.bindings.add_index(BINDINGS_BY_NAMESPACE, by_namespace)

    async def reconcile(self, key: str) -> Result | None:
        stored = self.informers.placements.store.get(key)
        placement = None if stored is None else models.view(Placement, stored)
        if placement is None or candidate_clusters.is_skipped(placement):
            self.summaries.pop(key, None)
            return None
        return await self.schedule(placement)

    async def schedule(self, placement: Placement) -> Result | None:
        """One scheduling pass over ``placement``; its writes and when to look again."""
        meta = placement["metadata"]
        now = self.clock.now()
        found = self._candidates(placement)
        may_pass = may_pass_predicates(placement, found.names, self.clusters)
        own = self.writer.existing(meta["namespace"], meta["name"])
        decided = frozenset(name for d in own for name in clusters_of(models.wire(d)))
        filtering = functools.partial(
            filter_clusters,
            placement,
            candidate_clusters.by_name(may_pass, self.clusters),
            decided=decided,
            now=now,
            decided_clusters=self._clusters(decided),
            scores=self._score_list,
            deadline=time.monotonic() + self.cel_time_limit,
        )
        # Selectors alone take milliseconds even over a large fleet: a thread is for CEL.
        filtered = await asyncio.to_thread(filtering) if uses_cel(placement) else filtering()
        misconfigured = filtered.misconfigured
        if misconfigured is None:
            selection = await self._select(placement, filtered.passed, decided, own, now)
            misconfigured = _message(selection.misconfigured)
        else:
            selection = Selection([], 0)
        # Upstream's Schedule ends (and sets its requeue time) unless a filter or the
        # prioritizer policy failed; a bad group strategy comes after it.
        scheduled = misconfigured is None
        grouping = decision_groups(placement, selection.selected)
        misconfigured = misconfigured or _message(grouping.misconfigured)
        self._summarize(placement, filtered.passed, selection, misconfigured=misconfigured)
        pages = decision_pages(meta["name"], grouping.groups)
        await self.writer.write(
            placement, pages, scores=selection.scores, warning=selection.warning
        )
        outcome = placement_status.Outcome(
            spec_cluster_sets=placement["spec"].get("clusterSets", []),
            eligible_cluster_sets=found.cluster_sets,
            bindings=len(found.bindings),
            available=len(found.names),
            selected=len(selection.selected),
            unscheduled=selection.unscheduled,
            misconfigured=misconfigured,
        )
        wanted = placement_status.desired_status(
            placement, outcome, group_statuses(grouping.groups, pages), clock=self.clock
        )
        await placement_status.write_status(self.api, placement, wanted)
        if filtered.requeue_after is None or not scheduled:
            return None
        return Result(requeue_after=max(filtered.requeue_after, 0.0))

    def _summarize(
        self,
        placement: Placement,
        feasible: list[ManagedCluster],
        selection: Selection,
        *,
        misconfigured: str | None,
    ) -> None:
        # Recorded before the pass's writes: a cluster event while they are under way is
        # judged against what they are writing (a failed write is retried by backoff).
        key = key_of(models.wire(placement))
        found = None if misconfigured else summarize(placement, feasible, selection.selected)
        if found is None:
            self.summaries.pop(key, None)
        else:
            self.summaries[key] = found

    def unaffected(
        self, key: str, *, leaving: ManagedCluster | None, entering: ManagedCluster | None
    ) -> bool:
        """Whether ``leaving`` (as it was) leaving placement ``key``'s feasible clusters
        and ``entering`` (as it is) entering them leave its selection as its last pass
        made it (:mod:`.scheduling.unaffected`); if so, its summary takes the change in."""
        summary = self.summaries.get(key)
        stored = self.informers.placements.store.get(key)
        if summary is None or stored is None:
            return False
        placement = models.view(Placement, stored)
        meta = placement["metadata"]
        if summary.version != (meta.get("uid", ""), meta.get("generation", 0)):
            return False
        own = self.writer.existing(meta["namespace"], meta["name"])
        elsewhere, biggest = self.usage.elsewhere(decision_counts(own))
        inputs = ScoringInputs(summary.selected, elsewhere, biggest, self._score, self.clock.now())
        updated = unaffected(
            placement,
            summary,
            leaving=leaving,
            entering=entering,
            chosen=candidate_clusters.by_name(summary.selected, self.clusters),
            inputs=inputs,
        )
        if updated is None:
            return False
        self.summaries[key] = updated
        return True

    def _candidates(self, placement: Placement) -> candidate_clusters.Candidates:
        caches = self.informers
        bindings = caches.bindings.store.by_index(
            BINDINGS_BY_NAMESPACE, placement["metadata"]["namespace"]
        )
        return candidate_clusters.candidates(
            placement,
            bindings=[models.view(ManagedClusterSetBinding, b) for b in bindings],
            cluster_sets=[
                models.view(ManagedClusterSet, s) for s in caches.cluster_sets.store.objects()
            ],
            clusters=self.clusters,
        )

    async def _select(
        self,
        placement: Placement,
        clusters: list[ManagedCluster],
        decided: frozenset[str],
        own: list[models.cluster_v1beta1.PlacementDecision],
        now: datetime,
    ) -> Selection:
        elsewhere, max_count = self.usage.elsewhere(decision_counts(own))
        if has_spread(placement):
            # Spreading picks one cluster at a time: over many domains that takes long
            # enough to hold up the API served on this loop. The thread gets a copy of
            # the counts, which the loop keeps current meanwhile.
            elsewhere = dict(elsewhere)
        selecting = functools.partial(
            prioritize_and_select,
            placement,
            clusters,
            decided=decided,
            selected_elsewhere=elsewhere,
            max_selected_elsewhere=max_count,
            scores=self._score,
            now=now,
        )
        return await asyncio.to_thread(selecting) if has_spread(placement) else selecting()

    def _clusters(self, names: frozenset[str]) -> list[ManagedCluster]:
        return candidate_clusters.by_name(names, self.clusters)

    def _score_list(
        self, cluster: str, resource_name: str
    ) -> list[AddOnPlacementScoreStatusScore] | None:
        found = self._score(cluster, resource_name)
        return None if found is None else found.get("status", {}).get("scores", [])

    def _score(self, cluster: str, resource_name: str) -> AddOnPlacementScore | None:
        found = self.informers.scores.store.get(f"{cluster}/{resource_name}")
        return models.view(AddOnPlacementScore, found) if found is not None else None


def _message(problem: Misconfigured | None) -> str | None:
    return problem.condition_message if problem is not None else None
