"""The hub's cluster-set controllers (upstream 2.9 to 2.12).

* ``ClusterSetEmpty`` on every set, kept current as clusters and their labels change;
* ``Bound`` on every binding, as its set exists or not;
* each member cluster's ``status.managedNamespaces`` (upstream 2.12, in namespaces.py);
* the ``default`` and ``global`` sets (gate ``DefaultClusterSet``), created when missing
  and their selector reset when it drifts, unless annotated ``autoupdate: "false"``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pyocm.api import cluster_v1beta2, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta2 import (
    ManagedClusterSet,
    ManagedClusterSetBinding,
    ManagedClusterSetSpec,
)
from pyocm.base.clock import Clock
from pyocm.clustersets.membership import SelectorError, count_selected
from pyocm.clustersets.namespaces import ManagedNamespacesController, may_change, set_may_change
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.manager import Manager
from pyocm.runtime.status import set_condition

DEFAULT_SETS_KEY = "default-sets"
#: The bindings informer's index by the set each binding names.
BOUND_SET_INDEX = "bound-set"
RESYNC = 10.0
#: Seconds a set's status waits after a membership change, gathering the changes
#: that follow.
MEMBERSHIP_SETTLE = 1.0
DEFAULT_SETS: dict[str, ManagedClusterSetSpec] = {
    "default": {
        "clusterSelector": {"selectorType": wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL}
    },
    "global": {
        "clusterSelector": {"selectorType": wellknown.SELECTOR_LABEL_SELECTOR, "labelSelector": {}}
    },
}


class SetStatusController:
    def __init__(self, api: Api, sets: Informer, clusters: Informer, *, clock: Clock) -> None:
        self.api, self.sets, self.clusters, self.clock = api, sets, clusters, clock
        self.reader = malformed.TypedReader.of(cluster_v1beta2.MANAGED_CLUSTER_SET)

    async def reconcile(self, name: str) -> None:
        stored = self.sets.store.get(name)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return
        cluster_set = models.view(ManagedClusterSet, self.reader.clean(stored))
        try:
            # The stored selector, not the cleaned one: a selector with parts left out
            # would select more than its writer meant, so such a set selects nothing.
            count = count_selected(models.view(ManagedClusterSet, stored), self.clusters)
        except SelectorError:
            return  # admission refuses such sets; one stored before gets no status
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER_SET,
            models.wire(cluster_set),
            clock=self.clock,
            type=wellknown.CLUSTER_SET_EMPTY,
            status="True" if count == 0 else "False",
            reason=wellknown.REASON_NO_CLUSTER_MATCHED
            if count == 0
            else wellknown.REASON_CLUSTERS_SELECTED,
            message="No ManagedCluster selected"
            if count == 0
            else f"{count} ManagedClusters selected",
        )


class BindingController:
    def __init__(self, api: Api, bindings: Informer, sets: Informer, *, clock: Clock) -> None:
        self.api, self.bindings, self.sets, self.clock = api, bindings, sets, clock
        self.reader = malformed.TypedReader.of(cluster_v1beta2.MANAGED_CLUSTER_SET_BINDING)

    async def reconcile(self, key: str) -> None:
        stored = self.bindings.store.get(key)
        if stored is None:
            return
        binding = models.view(ManagedClusterSetBinding, self.reader.clean(stored))
        if not binding or binding["metadata"].get("deletionTimestamp"):
            return
        bound = self.sets.store.get(bound_set(binding)) is not None
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER_SET_BINDING,
            models.wire(binding),
            clock=self.clock,
            type=wellknown.CLUSTER_SET_BOUND,
            status="True" if bound else "False",
            reason=wellknown.REASON_CLUSTER_SET_BOUND
            if bound
            else wellknown.REASON_CLUSTER_SET_NOT_FOUND,
            message="",
        )


class DefaultSetsController:
    def __init__(self, api: Api, sets: Informer) -> None:
        self.api, self.sets = api, sets
        self.reader = malformed.TypedReader.of(cluster_v1beta2.MANAGED_CLUSTER_SET)

    async def reconcile(self, _: str) -> Result:
        for name, spec in DEFAULT_SETS.items():
            # Ill-typed fields read as absent, so the update below writes them well formed.
            stored = self.sets.store.get(name)
            current = models.view(ManagedClusterSet, self.reader.clean(stored)) if stored else None
            if not current:
                try:
                    await self.api.create(
                        ocm.MANAGED_CLUSTER_SET,
                        {"metadata": {"name": name}, "spec": copy.deepcopy(spec)},
                    )
                except ApiError as err:
                    if err.code != 409:
                        raise
                continue
            annotations = current["metadata"].get("annotations", {})
            if annotations.get(wellknown.CLUSTER_SET_AUTOUPDATE_ANNOTATION) == "false":
                continue
            if current.get("spec", {}).get("clusterSelector") != spec["clusterSelector"]:
                updated = copy.deepcopy(current)
                updated.setdefault("spec", {})["clusterSelector"] = copy.deepcopy(
                    spec["clusterSelector"]
                )
                await self.api.update(ocm.MANAGED_CLUSTER_SET, models.wire(updated))
        return Result(requeue_after=RESYNC)


def add_clusterset_controllers(
    manager: Manager, *, recorder: Recorder, default_sets: bool = True
) -> None:
    """Add the cluster-set controllers to a hub manager (sharing its informers)."""
    api, clock = manager.api, manager.clock
    sets = manager.informer(ocm.MANAGED_CLUSTER_SET)
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    bindings = manager.informer(ocm.MANAGED_CLUSTER_SET_BINDING)

    status = SetStatusController(api, sets, clusters, clock=clock)
    status_controller = manager.controller("clusterset-status", status.reconcile)
    status_controller.watch(sets)
    # A cluster's labels can move it in or out of any set: look at every set again, but
    # only when a cluster comes, goes or relabels (not on every status report), and once
    # per MEMBERSHIP_SETTLE seconds: a fleet joining changes each set's count once.
    status_controller.watch(
        clusters,
        lambda _: sets.store.keys(),
        predicate=_membership_may_change,
        delay=MEMBERSHIP_SETTLE,
    )

    binding = BindingController(api, bindings, sets, clock=clock)
    binding_controller = manager.controller("clustersetbinding", binding.reconcile)
    binding_controller.watch(bindings)
    bindings.add_index(BOUND_SET_INDEX, _bound_set_index)
    binding_controller.watch(
        sets,
        lambda cluster_set: bindings.store.index_keys(
            BOUND_SET_INDEX, cluster_set["metadata"]["name"]
        ),
    )

    namespaces = ManagedNamespacesController(api, clusters, sets, recorder=recorder)
    namespaces_controller = manager.controller("managed-namespace", namespaces.reconcile)
    namespaces_controller.watch(clusters, predicate=may_change)
    namespaces_controller.watch(sets, namespaces.clusters_of_set, predicate=set_may_change)

    if default_sets:
        defaults = DefaultSetsController(api, sets)
        defaults_controller = manager.controller("default-clustersets", defaults.reconcile)
        defaults_controller.watch(sets, lambda _: [DEFAULT_SETS_KEY])
        manager.add("default-clustersets-start", _kick(defaults_controller))


def bound_set(binding: Mapping[str, Any]) -> str:
    """The set a binding names ('' when it names none, or not as a string); the binding
    may be as cached, not read through its schema."""
    found = shapes.mapping(binding.get("spec")).get("clusterSet")
    return found if isinstance(found, str) else ""


def _bound_set_index(binding: Mapping[str, Any]) -> list[str]:
    found = bound_set(binding)
    return [found] if found else []


def _membership_may_change(change: Change) -> bool:
    if change.old is None or change.new is None:
        return True
    return bool(change.old["metadata"].get("labels") != change.new["metadata"].get("labels"))


def _kick(controller: Any) -> Any:
    async def start() -> None:
        controller.enqueue(DEFAULT_SETS_KEY)

    return start
