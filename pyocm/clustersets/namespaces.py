"""Managed namespaces, hub side (upstream 2.12): each cluster's ``status.managedNamespaces``
lists ``spec.managedNamespaces`` of every set the cluster belongs to.

The agent creates those namespaces on the managed cluster and records a condition per
entry; entries that stay keep their conditions here, so the hub and the agent never
take turns rewriting the same list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyocm.api import cluster_v1, shapes
from pyocm.api import kinds as ocm
from pyocm.clustersets.membership import SelectorError, labels_of, matcher, selected_names
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
EVENT_REASON = "ManagedNamespacesUpdated"
#: The clusters informer's index by the sets their managedNamespaces entries name.
LISTED_SET_INDEX = "listed-set"


def desired_namespaces(cluster: Obj, sets: Iterable[Obj]) -> list[Obj]:
    """``{name, clusterSet}`` for each namespace of each live set selecting ``cluster``,
    sorted by set then name (upstream's order)."""
    labels = labels_of(cluster)
    found = []
    for cluster_set in sets:
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


def set_namespaces(cluster_set: Obj) -> list[str]:
    """The names in a set's ``spec.managedNamespaces``; entries of the wrong type (another
    writer may have stored anything) are left out."""
    listed = shapes.objects(shapes.mapping(cluster_set.get("spec")).get("managedNamespaces"))
    return [e["name"] for e in listed if isinstance(e.get("name"), str)]


def cluster_namespaces(cluster: Obj) -> list[Obj]:
    """The entries of a cluster's ``status.managedNamespaces`` that are objects."""
    return shapes.objects(shapes.mapping(cluster.get("status")).get("managedNamespaces"))


def with_conditions(desired: list[Obj], current: list[Obj]) -> list[Obj]:
    """``desired``, each entry keeping the conditions the agent reported for it."""
    reported = {
        (e.get("clusterSet"), e.get("name")): e.get("conditions")
        for e in current
        if e.get("conditions")
    }
    merged = []
    for entry in desired:
        conditions = reported.get((entry["clusterSet"], entry["name"]))
        merged.append({**entry, "conditions": conditions} if conditions else dict(entry))
    return merged


def listed_sets(cluster: Obj) -> list[str]:
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
        cluster = await self.reader.read(self.clusters.store.get(name))
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return
        current = list(shapes.mapping(cluster.get("status")).get("managedNamespaces") or [])
        wanted = with_conditions(desired_namespaces(cluster, self.sets.store.objects()), current)
        if wanted == current:
            return
        patch = {
            "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]},
            "status": {"managedNamespaces": wanted},
        }
        await self.api.patch(ocm.MANAGED_CLUSTER, name, patch, subresource="status")
        await self.recorder.event(
            cluster,
            reason=EVENT_REASON,
            note=f'Updated managed namespaces for cluster "{name}" (total: {len(wanted)})',
        )

    def clusters_of_set(self, cluster_set: Obj) -> list[str]:
        """Clusters a set change may concern: its members now, and those listing it before
        (both read through indexes, except a label selector's members)."""
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

    def entries(obj: Obj) -> object:
        return [(e.get("clusterSet"), e.get("name")) for e in cluster_namespaces(obj)]

    return bool(
        change.old["metadata"].get("labels") != change.new["metadata"].get("labels")
        or entries(change.old) != entries(change.new)
    )


def set_may_change(change: Change) -> bool:
    """A set concerns managed namespaces when it has (or had) some, and its spec or
    its deletion changes. Its status is rewritten as members come and go (once a second
    while a fleet joins); each of those would otherwise look at every cluster."""

    def namespaces(obj: Obj | None) -> object:
        return set_namespaces(obj) if obj is not None else []

    if not (namespaces(change.old) or namespaces(change.new)):
        return False
    if change.old is None or change.new is None:
        return True

    def essence(obj: Obj) -> object:
        return obj.get("spec"), obj["metadata"].get("deletionTimestamp")

    return essence(change.old) != essence(change.new)
