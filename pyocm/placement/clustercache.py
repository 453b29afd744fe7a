"""The scheduler's :class:`~.scheduling.clusterindex.ClusterIndex` over the clusters
informer's cache: two informer indexes (each label ``key=value``, and being deleted)
kept by the informer as clusters change, so a pass reads sets of names instead of every
cluster."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from pyocm.api import models
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.placement.scheduling.clusterindex import label_entries
from pyocm.runtime.informer import Informer

LABELS_INDEX = "placement-labels"
DELETING_INDEX = "placement-deleting"
_DELETING = "true"


def _labels(cluster: dict[str, Any]) -> list[str]:
    return label_entries(models.view(ManagedCluster, cluster))


def _deleting(cluster: dict[str, Any]) -> list[str]:
    return [_DELETING] if (cluster.get("metadata") or {}).get("deletionTimestamp") else []


class InformerClusters:
    """Clusters as the informer caches them, found by label and by name."""

    def __init__(self, informer: Informer) -> None:
        informer.add_index(LABELS_INDEX, _labels).add_index(DELETING_INDEX, _deleting)
        self.store = informer.store

    def names(self) -> Set[str]:
        return self.store.key_view()

    def labelled(self, key: str, value: str) -> Set[str]:
        return self.store.index_set(LABELS_INDEX, f"{key}={value}")

    def deleting(self) -> Set[str]:
        return self.store.index_set(DELETING_INDEX, _DELETING)

    def get(self, name: str) -> ManagedCluster | None:
        found = self.store.get(name)
        return None if found is None else models.view(ManagedCluster, found)
