"""Which Placements to schedule again when something they read changes, as upstream's
``enqueue.go`` and ``cluster_event_handler.go`` map it, through informer indexes:

* a Placement: itself; a PlacementDecision labelled for a placement: that placement;
* a ManagedClusterSetBinding ``ns/set``: the placements of ``ns`` naming ``set`` in
  ``spec.clusterSets`` and those naming no set (index ``ns/*``);
* a ManagedClusterSet: as each binding of that set changed;
* a ManagedCluster (added, changed, deleted; with its old labels too when they changed):
  as each set selecting it changed;
* an AddOnPlacementScore ``<cluster>/<name>``: the placements scoring by ``name`` in a
  namespace bound to a set of that cluster.

Placements in namespaces where nothing is bound are reached only through their own
changes, as upstream: no binding means no cluster can change what they see.

A ManagedCluster change is narrowed further (:meth:`Enqueuer.for_cluster_change`), since
a pass costs tens of milliseconds over a large fleet and upstream's fan-out would run
every placement of a bound namespace on every label change. Of the placements above, a
change ``old -> new`` of cluster ``c`` enqueues placement ``P`` when:

1. ``c``'s availability may differ: it was added or deleted, its sets (by the sets'
   selectors) differ, or it started or stopped being deleted. Then every placement of the
   fan-out, as upstream: the count of available clusters decides PlacementSatisfied
   (``AllManagedClusterSetsEmpty`` at zero), and telling whether ``P``'s count crosses
   zero would cost the pass we save. A fleet joining is many adds: the controller
   coalesces them (``CLUSTER_DELAY`` in :mod:`.manager`);
2. ``P`` cannot be judged here: it has CEL expressions (costly, and they may read
   anything of the cluster), or its predicates or tolerations do not compile (whether
   it is misconfigured depends on having any cluster at all);
3. ``c`` is in ``P``'s PlacementDecisions (the decisions informer's index): Steady,
   taints' ``NoSelectIfNew``, toleration expiry and decision groups (by label or claim)
   read the decided clusters, so any change of one may matter;
4. ``P``'s filters (predicates, then taints as for a cluster not decided, tolerations
   taken as in time) pass ``old`` and not ``new`` or the reverse, or they pass both and
   the change is more than metadata (ResourceAllocatable reads ``status``), and the
   summary of ``P``'s last pass cannot show that ``c`` leaving as ``old`` and entering as
   ``new`` leaves the selection as it is (:mod:`.scheduling.unaffected`: for a cluster
   ``P`` has not chosen, that it moves no ResourceAllocatable bound and ranks below every
   chosen cluster of a placement that has all it wants);
5. ``P`` has a spread policy, its filters pass both, and only metadata changed: spreading
   reads the topology labels of every feasible cluster.

Otherwise ``P``'s pass would see the same result. If the filters fail both versions, ``c``
is in no list a pass builds past the available count (which rule 1 covers): not the
passed clusters, so not the scores, the selection, the decisions,
``numberOfSelectedClusters`` or the unscheduled count. If they pass both and only
metadata changed, the filters, prioritizers and selection see the same (labels reach a
pass only through the sets, the predicates, decision groups of decided clusters and
spreading, rules 1, 4, 3 and 5). Balance reads other placements' decisions; those reach
``P`` through PlacementDecision events as upstream (which enqueues only a decision's own
placement), and rule 4 judges with the counts as they are when the cluster changes:
upstream applies counts moved by other placements at whatever pass a cluster event
causes, pyocm at the next pass ``P``'s own inputs cause (see
:mod:`.scheduling.unaffected`; placements scoring by AddOn scores, which expire with
time alone, are always woken by rule 4). The decisions index may lag a pass's writes: a cluster just decided then looks
undecided, but the summary (recorded before the writes) names it as chosen, and when the
cache catches up the PlacementDecision event enqueues ``P``. Taking every toleration as
in time, the filters here pass at least what a pass's pass; a placement with a
toleration that runs out has no summary, so there rule 4 always wakes it. Where only
metadata changed the taints are equal, so ``old`` and ``new`` pass or fail alike here
and in a pass, and the arguments above hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pyocm.api import shapes, wellknown
from pyocm.api.models import view
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1 import ManagedClusterSpecTaint as Taint
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet
from pyocm.api.models.common import Toleration
from pyocm.clustersets import membership
from pyocm.clustersets.controllers import BOUND_SET_INDEX, bound_set
from pyocm.placement.decisions import by_placement
from pyocm.placement.scheduling import taints
from pyocm.placement.scheduling.predicates import (
    ENV,
    ClusterSelector,
    Misconfigured,
    compile_predicates,
    uses_cel,
)
from pyocm.placement.scheduling.spread import has_spread
from pyocm.placement.usage import clusters_of
from pyocm.runtime.cache import key_of, split_key
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
#: Placements by ``<namespace>/<set in spec.clusterSets>``, or ``<namespace>/*``.
PLACEMENTS_BY_SET = "placements-by-clusterset"
#: Placements by the AddOnPlacementScore names their prioritizers read.
PLACEMENTS_BY_SCORE = "placements-by-score"
#: PlacementDecisions by the names of the clusters they decide.
DECISIONS_BY_CLUSTER = "decisions-by-cluster"
ANY_SET = "*"


def placements_by_set(placement: Mapping[str, Any]) -> list[str]:
    """An index function: ``ns/<set>`` for each set the placement names, else ``ns/*``."""
    namespace = placement["metadata"].get("namespace", "")
    named = shapes.mapping(placement.get("spec")).get("clusterSets")
    names = [s for s in named if isinstance(s, str)] if isinstance(named, list) else []
    return [f"{namespace}/{s}" for s in names] or [f"{namespace}/{ANY_SET}"]


def placements_by_score(placement: Mapping[str, Any]) -> list[str]:
    """An index function: the AddOnPlacementScore names the placement's AddOn prioritizers read."""
    policy = shapes.mapping(shapes.mapping(placement.get("spec")).get("prioritizerPolicy"))
    configurations = policy.get("configurations")
    found: list[str] = []
    for config in configurations if isinstance(configurations, list) else []:
        coordinate = shapes.mapping(shapes.mapping(config).get("scoreCoordinate"))
        if coordinate.get("type") != "AddOn":
            continue
        name = shapes.mapping(coordinate.get("addOn")).get("resourceName")
        if isinstance(name, str):
            found.append(name)
    return found


def _bound_set_index(binding: Mapping[str, Any]) -> list[str]:
    found = bound_set(binding)
    return [found] if found else []


class Unaffected(Protocol):
    """Whether ``leaving`` leaving placement ``key``'s feasible clusters and
    ``entering`` entering them leave its selection as it is (the controller's
    :meth:`~.controller.SchedulingController.unaffected`)."""

    def __call__(
        self, key: str, *, leaving: ManagedCluster | None, entering: ManagedCluster | None
    ) -> bool: ...


def _never_unaffected(
    key: str, *, leaving: ManagedCluster | None, entering: ManagedCluster | None
) -> bool:
    return False


class Enqueuer:
    """Mappers from each watched kind to Placement keys (see the module's docstring)."""

    def __init__(
        self,
        *,
        placements: Informer,
        cluster_sets: Informer,
        bindings: Informer,
        clusters: Informer,
        decisions: Informer,
        unaffected: Unaffected | None = None,
    ) -> None:
        self.placements, self.cluster_sets = placements, cluster_sets
        self.bindings, self.clusters, self.decisions = bindings, clusters, decisions
        self.unaffected = unaffected or _never_unaffected
        self._filters: dict[str, _Filters] = {}
        placements.add_index(PLACEMENTS_BY_SET, placements_by_set)
        placements.add_index(PLACEMENTS_BY_SCORE, placements_by_score)
        placements.add_handler(self._forget_deleted)
        decisions.add_index(DECISIONS_BY_CLUSTER, clusters_of)
        # The same index the cluster-set controllers ask for (one name, one function).
        bindings.add_index(BOUND_SET_INDEX, _bound_set_index)

    def for_binding(self, binding: Obj) -> list[str]:
        namespace, name = split_key(key_of(binding))
        store = self.placements.store
        return [
            *store.index_keys(PLACEMENTS_BY_SET, f"{namespace}/{name}"),
            *store.index_keys(PLACEMENTS_BY_SET, f"{namespace}/{ANY_SET}"),
        ]

    def for_cluster_set(self, cluster_set: Obj) -> list[str]:
        return self._for_sets([cluster_set["metadata"]["name"]])

    def for_cluster(self, cluster: Obj) -> list[str]:
        return self._for_sets(self.sets_of(cluster))

    def for_cluster_change(self, change: Change) -> list[str]:
        """The placements a cluster change may reschedule (the module's rules 1-5), sorted."""
        old, new = change.old, change.new
        if old is None or new is None:
            return sorted(set(self.for_cluster(change.obj)))
        old_sets, new_sets = self.sets_of(old), self.sets_of(new)
        if set(old_sets) != set(new_sets) or _deleting(old) != _deleting(new):
            return sorted(set(self._for_sets({*old_sets, *new_sets})))
        decided = self._decided_by(new["metadata"]["name"])
        beyond_metadata = _without_metadata(old) != _without_metadata(new)
        found = set()
        for key in set(self._for_sets(new_sets)):
            if key in decided or self._may_change(key, old, new, beyond_metadata=beyond_metadata):
                found.add(key)
        return sorted(found)

    def _may_change(self, key: str, old: Obj, new: Obj, *, beyond_metadata: bool) -> bool:
        filters = self._filters_of(key)
        if filters is None:
            return True  # rule 2
        if _deleting(new):
            return False  # not available before or after (rule 1 has the transitions)
        was = view(ManagedCluster, old)
        now = view(ManagedCluster, new)
        passes_old, passes_new = filters.passes(was), filters.passes(now)
        if passes_old and passes_new and not beyond_metadata:
            return filters.spread  # rule 5: spreading reads their labels
        if not passes_old and not passes_new:
            return False
        leaving, entering = (was if passes_old else None), (now if passes_new else None)
        return not self.unaffected(key, leaving=leaving, entering=entering)

    def _decided_by(self, cluster_name: str) -> set[str]:
        """The placements whose cached PlacementDecisions name the cluster."""
        return {
            key
            for decision in self.decisions.store.by_index(DECISIONS_BY_CLUSTER, cluster_name)
            for key in by_placement(decision)
        }

    def _filters_of(self, key: str) -> _Filters | None:
        """The placement's compiled filters, once per generation; None when it cannot be
        judged here (gone, CEL, or a predicate or toleration that does not compile)."""
        stored = self.placements.store.get(key)
        if stored is None:
            return None
        placement = view(Placement, stored)
        meta = placement["metadata"]
        version = (meta.get("uid", ""), meta.get("generation", 0))
        cached = self._filters.get(key)
        if cached is not None and cached.version == version and version[1]:
            return cached if cached.judged else None
        filters = _compile(placement, version)
        self._filters[key] = filters
        return filters if filters.judged else None

    def _forget_deleted(self, change: Change) -> None:
        if change.new is None:
            self._filters.pop(key_of(change.obj), None)

    def for_decision(self, decision: Obj) -> list[str]:
        return by_placement(decision)

    def for_score(self, score: Obj) -> list[str]:
        cluster_name, name = split_key(key_of(score))
        cluster = self.clusters.store.get(cluster_name or "")
        if cluster is None:
            return []  # upstream finds no sets of a cluster it cannot get
        namespaces = {
            split_key(key)[0]
            for cluster_set in self.sets_of(cluster)
            for key in self.bindings.store.index_keys(BOUND_SET_INDEX, cluster_set)
        }
        return [
            key
            for key in self.placements.store.index_keys(PLACEMENTS_BY_SCORE, name)
            if split_key(key)[0] in namespaces
        ]

    def sets_of(self, cluster: Obj) -> list[str]:
        """The names of the cached sets whose selector selects ``cluster``'s labels."""
        labels = membership.labels_of(cluster)
        found = []
        for cluster_set in self.cluster_sets.store.objects():
            try:
                match = membership.matcher(view(ManagedClusterSet, cluster_set))
            except membership.SelectorError:
                continue  # such a set selects nothing
            if match(labels):
                found.append(cluster_set["metadata"]["name"])
        return found

    def _for_sets(self, names: Iterable[str]) -> list[str]:
        keys: list[str] = []
        for name in names:
            for binding in self.bindings.store.by_index(BOUND_SET_INDEX, name):
                keys += self.for_binding(binding)
        return keys


@dataclass(frozen=True)
class _Filters:
    """One generation of a placement's predicates and tolerations, compiled; ``judged``
    is False when the placement cannot be judged here (module rule 2)."""

    version: tuple[str, int]
    judged: bool
    predicates: Sequence[ClusterSelector] = ()
    tolerations: Sequence[Toleration] = ()
    spread: bool = False

    def passes(self, cluster: ManagedCluster) -> bool:
        """Whether the predicates pass the cluster and its taints are tolerated as for a
        cluster not decided, every toleration taken as in time (a superset of a pass's)."""
        if self.predicates and not any(
            p.matches(cluster, ENV, deadline=None) for p in self.predicates
        ):
            return False
        return all(self._tolerated(taint) for taint in _taints_of(cluster))

    def _tolerated(self, taint: Taint) -> bool:
        if taint.get("effect") == wellknown.TAINT_PREFER_NO_SELECT:
            return True
        return any(taints.matches(taint, t) for t in self.tolerations)


def _compile(placement: Placement, version: tuple[str, int]) -> _Filters:
    if uses_cel(placement):
        return _Filters(version, judged=False)
    tolerations = placement["spec"].get("tolerations") or []
    try:
        predicates = compile_predicates(placement)
        taints.validate_tolerations(tolerations)
    except Misconfigured:
        return _Filters(version, judged=False)
    return _Filters(
        version,
        judged=True,
        predicates=predicates,
        tolerations=tolerations,
        spread=has_spread(placement),
    )


def _taints_of(cluster: ManagedCluster) -> list[Taint]:
    return (cluster.get("spec") or {}).get("taints") or []


def _deleting(cluster: Obj) -> bool:
    return bool(shapes.mapping(cluster.get("metadata")).get("deletionTimestamp"))


def _without_metadata(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k != "metadata"}


def cluster_may_matter(change: Change) -> bool:
    """Whether a cluster change can change any placement's view: any change but a
    rewrite of the same object (a resync, or metadata alone moving)."""
    if change.old is None or change.new is None:
        return True
    return _content(change.old) != _content(change.new)


def _content(obj: Obj) -> Obj:
    meta = {
        k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")
    }
    return {**obj, "metadata": meta}
