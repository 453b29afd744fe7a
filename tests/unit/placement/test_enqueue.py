"""Which placements a ManagedCluster change wakes (:meth:`Enqueuer.for_cluster_change`):
only those whose result the change can alter, by the rules in
:mod:`pyocm.placement.enqueue`'s docstring. Informer caches are filled by hand, as their
watches would."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.placement.enqueue import Enqueuer
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
NAMESPACE, SET = "ns", "set"
PROD = f"{NAMESPACE}/prod"  # selects env=prod
DEV = f"{NAMESPACE}/dev"  # selects env=dev


def _informer(kind: Any) -> Informer:
    return Informer(cast(Api, None), kind)


class Caches:
    def __init__(self) -> None:
        self.placements = _informer(ocm.PLACEMENT)
        self.decisions = _informer(ocm.PLACEMENT_DECISION)
        self.clusters = _informer(ocm.MANAGED_CLUSTER)
        self.cluster_sets = _informer(ocm.MANAGED_CLUSTER_SET)
        self.bindings = _informer(ocm.MANAGED_CLUSTER_SET_BINDING)
        self.enqueuer = Enqueuer(
            placements=self.placements,
            cluster_sets=self.cluster_sets,
            bindings=self.bindings,
            clusters=self.clusters,
            decisions=self.decisions,
        )
        self.cluster_sets._apply("ADDED", {"metadata": {"name": SET, "uid": "s"}, "spec": {}})
        binding = {"metadata": {"name": SET, "namespace": NAMESPACE}, "spec": {"clusterSet": SET}}
        self.bindings._apply("ADDED", binding)
        self.placement("prod", predicates=[_env("prod")])
        self.placement("dev", predicates=[_env("dev")])

    def placement(self, name: str, *, generation: int = 1, **spec: Any) -> None:
        meta = {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"u-{name}",
            "generation": generation,
            "resourceVersion": str(generation),  # the cache replaces only a new version
        }
        self.placements._apply("ADDED", {"metadata": meta, "spec": spec})

    def decide(self, placement: str, *clusters: str) -> None:
        meta = {
            "name": f"{placement}-decision-1",
            "namespace": NAMESPACE,
            "labels": {wellknown.PLACEMENT_LABEL: placement},
        }
        status = {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}
        self.decisions._apply("ADDED", {"metadata": meta, "status": status})

    def update(self, old: Obj, **labels: str) -> list[str]:
        return self.changed(old, _relabelled(old, **labels))

    def changed(self, old: Obj, new: Obj) -> list[str]:
        return self.enqueuer.for_cluster_change(Change(old, new))


def _env(env: str) -> Obj:
    return {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": env}}}}


def _cluster(name: str = "c1", **labels: str) -> Obj:
    all_labels = {wellknown.CLUSTER_SET_LABEL: SET, **labels}
    return {"metadata": {"name": name, "labels": all_labels}, "spec": {}}


def _relabelled(cluster: Obj, **labels: str) -> Obj:
    new = copy.deepcopy(cluster)
    new["metadata"]["labels"].update(labels)
    return new


@pytest.fixture
def caches() -> Caches:
    return Caches()


def test_a_label_change_no_placement_can_select_enqueues_none(caches: Caches) -> None:
    cluster = _cluster(env="test", zone="a")
    assert caches.update(cluster, zone="b") == []


def test_a_cluster_entering_or_leaving_a_predicate_enqueues_that_placement(
    caches: Caches,
) -> None:
    cluster = _cluster(env="test")
    assert caches.update(cluster, env="prod") == [PROD]
    assert caches.update(_relabelled(cluster, env="prod"), env="test") == [PROD]
    assert caches.update(_relabelled(cluster, env="prod"), env="dev") == [DEV, PROD]


def test_an_undecided_cluster_passing_before_and_after_a_label_change_enqueues_none(
    caches: Caches,
) -> None:
    cluster = _cluster(env="prod", zone="a")
    assert caches.update(cluster, zone="b") == []


def test_a_decided_cluster_changing_an_unrelated_label_enqueues_its_placement(
    caches: Caches,
) -> None:
    # Decision groups and Steady read decided clusters: conservative (rule 3).
    caches.decide("prod", "c1")
    assert caches.update(_cluster(env="prod", zone="a"), zone="b") == [PROD]
    assert caches.update(_cluster("c2", env="prod", zone="a"), zone="b") == []


def test_a_passing_cluster_changing_beyond_metadata_enqueues_the_placement(
    caches: Caches,
) -> None:
    # ResourceAllocatable prioritizers read the status (rule 5).
    cluster = _cluster(env="prod")
    new = copy.deepcopy(cluster)
    new["status"] = {"allocatable": {"cpu": "4"}}
    assert caches.changed(cluster, new) == [PROD]


def test_a_taint_the_placement_does_not_tolerate_enqueues_it(caches: Caches) -> None:
    cluster = _cluster(env="prod")
    tainted = copy.deepcopy(cluster)
    tainted["spec"]["taints"] = [{"key": "k", "effect": wellknown.TAINT_NO_SELECT}]
    assert caches.changed(cluster, tainted) == [PROD]
    # Failing the taint before and after: nothing to change.
    assert caches.update(tainted, zone="b") == []


def test_placements_with_cel_or_that_do_not_compile_are_always_enqueued(caches: Caches) -> None:
    cel = {"requiredClusterSelector": {"celSelector": {"celExpressions": ["false"]}}}
    caches.placement("cel", predicates=[cel])
    bad = {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "-bad-"}}}}
    caches.placement("bad", predicates=[bad])
    caches.placement("badtoleration", tolerations=[{"operator": "Equal"}])
    found = caches.update(_cluster(env="test", zone="a"), zone="b")
    assert found == [f"{NAMESPACE}/bad", f"{NAMESPACE}/badtoleration", f"{NAMESPACE}/cel"]


def test_adds_deletes_and_set_changes_enqueue_every_placement_of_the_set(
    caches: Caches,
) -> None:
    # The available count decides AllManagedClusterSetsEmpty, even for a cluster no
    # predicate selects (rule 1).
    cluster = _cluster(env="test")
    assert caches.enqueuer.for_cluster_change(Change(None, cluster)) == [DEV, PROD]
    assert caches.enqueuer.for_cluster_change(Change(cluster, None)) == [DEV, PROD]
    outside = copy.deepcopy(cluster)
    outside["metadata"]["labels"].pop(wellknown.CLUSTER_SET_LABEL)
    assert caches.changed(cluster, outside) == [DEV, PROD]
    deleting = copy.deepcopy(cluster)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert caches.changed(cluster, deleting) == [DEV, PROD]
    # Outside every set before and after: no placement can see it.
    assert caches.update(outside, zone="b") == []


def test_a_new_generation_of_a_placement_is_judged_by_its_new_predicates(
    caches: Caches,
) -> None:
    cluster = _cluster(env="test", zone="a")
    assert caches.update(cluster, env="qa") == []
    caches.placement("prod", generation=2, predicates=[_env("qa")])
    assert caches.update(cluster, env="qa") == [PROD]


def test_a_spread_placement_is_woken_by_any_label_of_a_passing_cluster(caches: Caches) -> None:
    # Spreading counts every feasible cluster's topology label (module rule 5).
    spread = {"spreadConstraints": [{"topologyKey": "zone", "topologyKeyType": "Label"}]}
    caches.placement("prod", generation=2, predicates=[_env("prod")], spreadPolicy=spread)
    assert caches.update(_cluster(env="prod", zone="a"), zone="b") == [PROD]
    assert caches.update(_cluster(env="test", zone="a"), zone="b") == []
