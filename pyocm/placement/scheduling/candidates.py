"""Which clusters a placement chooses from (upstream's ``controllers/scheduling/helpers.go``).

* Valid bindings: the ManagedClusterSetBindings in the placement's namespace whose name
  names an existing ManagedClusterSet (their ``Bound`` condition is not consulted).
* Eligible sets: the valid bindings' names, intersected with ``spec.clusterSets`` when that
  is not empty; sorted.
* Available clusters: the members of the eligible sets (by the sets' own selectors, as
  :mod:`pyocm.clustersets.membership` reads them) that are not being deleted.

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


class CandidateError(ValueError):
    """An eligible set whose selector cannot be read (upstream fails the sync so)."""


@dataclass(frozen=True)
class Candidates:
    """What a placement may choose from.

    ``bindings``: the valid bindings' names, sorted; ``cluster_sets``: the eligible sets,
    sorted; ``clusters``: the available clusters, sorted by name."""

    bindings: list[str]
    cluster_sets: list[str]
    clusters: list[ManagedCluster]


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
    clusters: Iterable[ManagedCluster],
) -> Candidates:
    """The valid bindings, eligible sets and available clusters of ``placement``.

    ``bindings`` may hold bindings of any namespace: only those in the placement's count.
    Raises :class:`CandidateError` when an eligible set's selector is malformed."""
    sets_by_name = {s["metadata"]["name"]: s for s in cluster_sets}
    valid = valid_bindings(placement, bindings, sets_by_name)
    eligible = eligible_cluster_sets(placement, valid)
    available = available_clusters([sets_by_name[name] for name in eligible], clusters)
    return Candidates(bindings=valid, cluster_sets=eligible, clusters=available)


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


def available_clusters(
    cluster_sets: Sequence[ManagedClusterSet], clusters: Iterable[ManagedCluster]
) -> list[ManagedCluster]:
    """The clusters some set selects, not being deleted, sorted by name."""
    if not cluster_sets:
        return []
    matchers = []
    for cluster_set in cluster_sets:
        try:
            matchers.append(membership.matcher(cluster_set))
        except membership.SelectorError as err:
            name = cluster_set["metadata"]["name"]
            raise CandidateError(
                f'failed to get clusters from ClusterSet "{name}": {err}'
            ) from None
    chosen = [
        c
        for c in clusters
        if not c["metadata"].get("deletionTimestamp")
        and any(match(membership.labels_of(c)) for match in matchers)
    ]
    return sorted(chosen, key=lambda c: c["metadata"]["name"])
