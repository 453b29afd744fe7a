"""Which clusters a placement chooses from (upstream's ``controllers/scheduling/helpers.go``).

* Valid bindings: the ManagedClusterSetBindings in the placement's namespace whose name
  names an existing ManagedClusterSet (their ``Bound`` condition is not consulted).
* Eligible sets: the valid bindings' names, intersected with ``spec.clusterSets`` when that
  is not empty; sorted.
* Available clusters: the members of the eligible sets (by the sets' own selectors, as
  :mod:`pyocm.clustersets.membership` reads them) that are not being deleted; found
  through a :class:`~.clusterindex.ClusterIndex`, by name.

A placement being deleted, or annotated
``cluster.open-cluster-management.io/experimental-scheduling-disable: "true"``, is not
scheduled at all (:func:`is_skipped`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyocm.api import wellknown
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet, ManagedClusterSetBinding
from pyocm.clustersets import membership

from .clusterindex import ClusterIndex, selected


class CandidateError(ValueError):
    """An eligible set whose selector cannot be read (upstream fails the sync so)."""


@dataclass(frozen=True)
class Candidates:
    """What a placement may choose from.

    ``bindings``: the valid bindings' names, sorted; ``cluster_sets``: the eligible sets,
    sorted; ``names``: the available clusters' names."""

    bindings: list[str]
    cluster_sets: list[str]
    names: frozenset[str]


def is_skipped(placement: Placement) -> bool:
    """Whether the scheduler leaves this placement alone: being deleted, or scheduling
    disabled by annotation (exactly ``"true"``)."""
    metadata = placement.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return True
    annotations = metadata.get("annotations") or {}
    return annotations.get(wellknown.SCHEDULING_DISABLE_ANNOTATION) == "true"


def candidates(
    placement: Placement,
    *,
    bindings: Iterable[ManagedClusterSetBinding],
    cluster_sets: Iterable[ManagedClusterSet],
    clusters: ClusterIndex,
) -> Candidates:
    """The valid bindings, eligible sets and available clusters of ``placement``.

    ``bindings`` may hold bindings of any namespace: only those in the placement's count.
    Raises :class:`CandidateError` when an eligible set's selector is malformed."""
    sets_by_name = {s["metadata"]["name"]: s for s in cluster_sets}
    valid = valid_bindings(placement, bindings, sets_by_name)
    eligible = eligible_cluster_sets(placement, valid)
    available = available_names([sets_by_name[name] for name in eligible], clusters)
    return Candidates(bindings=valid, cluster_sets=eligible, names=available)


def valid_bindings(
    placement: Placement,
    bindings: Iterable[ManagedClusterSetBinding],
    cluster_sets: Iterable[str],
) -> list[str]:
    """The names of the bindings in the placement's namespace that name an existing set."""
    namespace = placement["metadata"].get("namespace")
    existing = set(cluster_sets)
    return sorted(
        {
            b["metadata"]["name"]
            for b in bindings
            if b["metadata"].get("namespace") == namespace and b["metadata"]["name"] in existing
        }
    )


def eligible_cluster_sets(placement: Placement, valid: Iterable[str]) -> list[str]:
    """The bound sets, narrowed to ``spec.clusterSets`` when that lists any; sorted."""
    names = set(valid)
    wanted = placement["spec"].get("clusterSets") or []
    if wanted:
        names &= set(wanted)
    return sorted(names)


def available_names(
    cluster_sets: Sequence[ManagedClusterSet], clusters: ClusterIndex
) -> frozenset[str]:
    """The names of the clusters some set selects, not being deleted."""
    found: set[str] = set()
    for cluster_set in cluster_sets:
        try:
            found |= selected(membership.selector(cluster_set), clusters)
        except membership.SelectorError as err:
            name = cluster_set["metadata"]["name"]
            raise CandidateError(
                f'failed to get clusters from ClusterSet "{name}": {err}'
            ) from None
    return frozenset(found - clusters.deleting())


def by_name(names: Iterable[str], clusters: ClusterIndex) -> list[ManagedCluster]:
    """The named clusters the index holds, sorted by name."""
    found = (clusters.get(name) for name in sorted(names))
    return [c for c in found if c is not None]
