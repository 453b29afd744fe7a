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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyocm.api import shapes
from pyocm.api.models import view
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet
from pyocm.clustersets import membership
from pyocm.clustersets.controllers import BOUND_SET_INDEX, bound_set
from pyocm.placement.decisions import by_placement
from pyocm.runtime.cache import key_of, split_key
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
#: Placements by ``<namespace>/<set in spec.clusterSets>``, or ``<namespace>/*``.
PLACEMENTS_BY_SET = "placements-by-clusterset"
#: Placements by the AddOnPlacementScore names their prioritizers read.
PLACEMENTS_BY_SCORE = "placements-by-score"
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


class Enqueuer:
    """Mappers from each watched kind to Placement keys (see the module's docstring)."""

    def __init__(
        self,
        *,
        placements: Informer,
        cluster_sets: Informer,
        bindings: Informer,
        clusters: Informer,
    ) -> None:
        self.placements, self.cluster_sets = placements, cluster_sets
        self.bindings, self.clusters = bindings, clusters
        placements.add_index(PLACEMENTS_BY_SET, placements_by_set)
        placements.add_index(PLACEMENTS_BY_SCORE, placements_by_score)
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
