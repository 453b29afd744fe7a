"""Managed namespaces, hub side (upstream 2.12): each cluster's ``status.managedNamespaces``
lists ``spec.managedNamespaces`` of every set the cluster belongs to.

The agent creates those namespaces on the managed cluster and records a condition per
entry; entries that stay keep their conditions here, so the hub and the agent never
take turns rewriting the same list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyocm.api import cluster_v1, models, shapes
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster, ManagedClusterStatusManagedNamespace
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet
from pyocm.clustersets.membership import SelectorError, labels_of, matcher, selected_names
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change, Informer

Entry = ManagedClusterStatusManagedNamespace
EVENT_REASON = "ManagedNamespacesUpdated"
#: The clusters informer's index by the sets their managedNamespaces entries name.
LISTED_SET_INDEX = "listed-set"


def desired_namespaces(cluster: ManagedCluster, sets: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """``{name, clusterSet}`` for each namespace of each live set selecting ``cluster``,
    sorted by set then name (upstream's order). The sets are as cached, not read through
    their schema (see :mod:`pyocm.clustersets.membership`)."""
    labels = labels_of(cluster)
    found: list[Entry] = []
    for stored in sets:
        cluster_set = models.view(ManagedClusterSet, stored)
        if cluster_set["metadata"].get("deletionTimestamp"):
            continue
        try:
            selects = matcher(cluster_set)(labels)
        except SelectorError:
            continue
        if not selects:
            continue
        set_name = cluster_set["metadata"]["name"]
        for item in set_namespaces(cluster_set):
            found.append({"name": item, "clusterSet": set_name})
    return sorted(found, key=lambda e: (e["clusterSet"], e["name"]))


def set_namespaces(cluster_set: ManagedClusterSet) -> list[str]:
    """The names in a set's ``spec.managedNamespaces``; entries of the wrong type (another
    writer may have stored anything) are left out."""
    listed = shapes.objects(shapes.mapping(cluster_set.get("spec")).get("managedNamespaces"))
    return [e["name"] for e in listed if isinstance(e.get("name"), str)]


def cluster_namespaces(cluster: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The entries of a cached cluster's ``status.managedNamespaces`` that are objects
    (the cluster as stored: its entries may hold anything)."""
    return shapes.objects(shapes.mapping(cluster.get("status")).get("managedNamespaces"))


def with_conditions(desired: list[Entry], current: list[Entry]) -> list[Entry]:
    """``desired``, each entry keeping the conditions the agent reported for it."""
    reported = {
        (e.get("clusterSet"), e.get("name")): e.get("conditions")
        for e in current
        if e.get("conditions")
    }
    merged: list[Entry] = []
    for entry in desired:
        conditions = reported.get((entry["clusterSet"], entry["name"]))
        merged.append({**entry, "conditions": conditions} if conditions else entry.copy())
    return merged


def listed_sets(cluster: Mapping[str, Any]) -> list[str]:
    """An index function: the sets a cluster's ``status.managedNamespaces`` names."""
    return sorted(
        {
            e["clusterSet"]
            for e in cluster_namespaces(cluster)
            if isinstance(e.get("clusterSet"), str)
        }
    )


class ManagedNamespacesController:
    def __init__(self, api: Api, clusters: Informer, sets: Informer, *, recorder: Recorder) -> None:
        self.api, self.clusters, self.sets, self.recorder = api, clusters, sets, recorder
        clusters.add_index(LISTED_SET_INDEX, listed_sets)
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER, recorder=recorder)

    async def reconcile(self, name: str) -> None:
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return
        current = list(cluster.get("status", {}).get("managedNamespaces", []))
        wanted = with_conditions(desired_namespaces(cluster, self.sets.store.objects()), current)
        if wanted == current:
            return
        patch: ManagedCluster = {
            "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]},
            "status": {"managedNamespaces": wanted},
        }
        await self.api.patch(ocm.MANAGED_CLUSTER, name, models.wire(patch), subresource="status")
        await self.recorder.event(
            models.wire(cluster),
            reason=EVENT_REASON,
            note=f'Updated managed namespaces for cluster "{name}" (total: {len(wanted)})',
        )

    def clusters_of_set(self, stored: Mapping[str, Any]) -> list[str]:
        """Clusters a set change may concern: its members now, and those listing it before
        (both read through indexes, except a label selector's members)."""
        cluster_set = models.view(ManagedClusterSet, stored)
        set_name = cluster_set["metadata"]["name"]
        listed = self.clusters.store.index_keys(LISTED_SET_INDEX, set_name)
        try:
            members = selected_names(cluster_set, self.clusters)
        except SelectorError:
            members = []
        return sorted({*listed, *members})


def may_change(change: Change) -> bool:
    """A cluster's entries depend on its labels; a rewrite of the list by anyone else is
    put right too."""
    if change.new is None:
        return False
    if change.old is None:
        return True

    def entries(obj: Mapping[str, Any]) -> object:
        return [(e.get("clusterSet"), e.get("name")) for e in cluster_namespaces(obj)]

    return bool(
        change.old["metadata"].get("labels") != change.new["metadata"].get("labels")
        or entries(change.old) != entries(change.new)
    )


def set_may_change(change: Change) -> bool:
    """A set concerns managed namespaces when it has (or had) some, and its spec or
    its deletion changes. Its status is rewritten as members come and go (once a second
    while a fleet joins); each of those would otherwise look at every cluster."""

    def namespaces(obj: Mapping[str, Any] | None) -> object:
        return set_namespaces(models.view(ManagedClusterSet, obj)) if obj is not None else []

    if not (namespaces(change.old) or namespaces(change.new)):
        return False
    if change.old is None or change.new is None:
        return True

    def essence(obj: Mapping[str, Any]) -> object:
        return obj.get("spec"), obj["metadata"].get("deletionTimestamp")

    return essence(change.old) != essence(change.new)
