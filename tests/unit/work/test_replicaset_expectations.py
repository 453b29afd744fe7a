"""The ManifestWorkReplicaSet controller's expectations (works created by generateName
that the cache has not shown yet): the real controller over in-memory informers, with an
API that names what it creates and, unless told otherwise, lets the cache catch up at once."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.clock import FakeClock
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer
from pyocm.work.hub.replicaset import EXPECTATION_TIMEOUT, FINALIZER, ReplicaSetController

Obj = dict[str, Any]
SET = "ns/app"


class FakeHub:
    """create/patch/delete on ManifestWorks; ``cache_lags`` keeps created works out of the
    works cache (a watch that has not delivered them yet)."""

    def __init__(self, works: Informer) -> None:
        self.works = works
        self.made = 0
        self.created: list[str] = []
        self.cache_lags = False

    async def create(self, kind: Any, body: Obj, **options: Any) -> Obj:
        assert kind == ocm.MANIFEST_WORK
        self.made += 1
        body = copy.deepcopy(body)
        meta = body["metadata"]
        meta["name"] = f"{meta.pop('generateName')}-{self.made}"
        meta.update(resourceVersion=str(self.made), uid=f"uid-{self.made}", generation=1)
        self.created.append(f"{meta['namespace']}/{meta['name']}")
        if not self.cache_lags:
            self.works.store.upsert(body)
        return body

    async def patch(self, kind: Any, name: str, body: Obj, **options: Any) -> Obj:
        return {}

    async def delete(self, kind: Any, name: str, **options: Any) -> None:
        self.works.store.delete(f"{options['namespace']}/{name}")


class Fixture:
    def __init__(self) -> None:
        self.clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
        kinds = {
            "sets": ocm.MANIFEST_WORK_REPLICA_SET,
            "works": ocm.MANIFEST_WORK,
            "placements": ocm.PLACEMENT,
            "decisions": ocm.PLACEMENT_DECISION,
        }
        self.informers = {
            name: Informer(cast(Api, None), kind, clock=self.clock) for name, kind in kinds.items()
        }
        self.hub = FakeHub(self.informers["works"])
        self.controller = ReplicaSetController(
            cast(Api, self.hub), clock=self.clock, **self.informers
        )
        self.add_set()
        for placement in ("p", "q"):
            self.informers["placements"].store.upsert(
                {
                    "metadata": {"name": placement, "namespace": "ns", "resourceVersion": "1"},
                    "spec": {},
                    "status": {"numberOfSelectedClusters": 1},
                }
            )

    def add_set(self, *placements: str) -> None:
        refs = [{"name": p, "rolloutStrategy": {"type": "All"}} for p in placements or ["p"]]
        manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
        self.informers["sets"].store.upsert(
            {
                "metadata": {
                    "name": "app",
                    "namespace": "ns",
                    "finalizers": [FINALIZER],
                    "resourceVersion": "1",
                },
                "spec": {
                    "placementRefs": refs,
                    "manifestWorkTemplate": {"workload": {"manifests": [manifest]}},
                },
            }
        )

    def decide(self, *clusters: str, placement: str = "p") -> None:
        labels = {
            wellknown.PLACEMENT_LABEL: placement,
            wellknown.DECISION_GROUP_INDEX_LABEL: "0",
            wellknown.DECISION_GROUP_NAME_LABEL: "",
        }
        self.informers["decisions"].store.upsert(
            {
                "metadata": {
                    "name": f"{placement}-decision-1",
                    "namespace": "ns",
                    "resourceVersion": "1",
                    "labels": labels,
                },
                "status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]},
            }
        )

    def works(self) -> list[str]:
        return sorted(self.informers["works"].store.keys())

    async def reconcile(self) -> None:
        await self.controller.reconcile(SET)


@pytest.fixture
def world() -> Fixture:
    return Fixture()


async def test_a_cluster_selected_again_gets_a_new_work(world: Fixture) -> None:
    """The reviewer's case: a decided, dropped, decided again."""
    world.decide("a")
    await world.reconcile()
    await world.reconcile()
    assert world.works() == ["a/app-1"]
    world.decide()
    await world.reconcile()
    assert world.works() == []
    world.decide("a")
    await world.reconcile()
    await world.reconcile()
    assert world.works() == ["a/app-2"] and world.hub.created == ["a/app-1", "a/app-2"]


async def test_a_work_not_yet_in_the_cache_is_not_made_twice(world: Fixture) -> None:
    world.hub.cache_lags = True
    world.decide("a")
    await world.reconcile()
    await world.reconcile()
    assert world.hub.created == ["a/app-1"]


async def test_the_works_watch_ends_the_wait(world: Fixture) -> None:
    """A created work the watch shows added, then deleted before any reconcile saw it in
    the cache, is made again."""
    world.hub.cache_lags = True
    world.decide("a")
    await world.reconcile()
    made = {"metadata": {"name": "app-1", "namespace": "a", "resourceVersion": "1"}}
    world.informers["works"]._apply("ADDED", made)  # as its watch would, handlers included
    world.informers["works"]._apply("DELETED", made)
    await world.reconcile()
    assert world.hub.created == ["a/app-1", "a/app-2"]


async def test_a_deleted_work_never_seen_added_is_made_again(world: Fixture) -> None:
    world.hub.cache_lags = True
    world.decide("a")
    await world.reconcile()
    gone = {"metadata": {"name": "app-1", "namespace": "a", "resourceVersion": "2"}}
    world.informers["works"]._apply("DELETED", gone)
    await world.reconcile()
    assert world.hub.created == ["a/app-1", "a/app-2"]


async def test_a_set_recreated_under_its_name_starts_afresh(world: Fixture) -> None:
    world.hub.cache_lags = True
    world.decide("a")
    await world.reconcile()
    world.informers["sets"].store.delete(SET)
    await world.reconcile()  # the set is gone: what it awaited goes with it
    world.add_set()
    await world.reconcile()
    assert world.hub.created == ["a/app-1", "a/app-2"]


async def test_a_work_lost_on_the_way_is_awaited_only_so_long(world: Fixture) -> None:
    world.hub.cache_lags = True
    world.decide("a")
    await world.reconcile()
    world.clock.advance(EXPECTATION_TIMEOUT.total_seconds() - 1)
    await world.reconcile()
    assert world.hub.created == ["a/app-1"]
    world.clock.advance(1)
    await world.reconcile()
    assert world.hub.created == ["a/app-1", "a/app-2"]


async def test_two_placements_deciding_one_cluster_each_get_a_work(world: Fixture) -> None:
    world.hub.cache_lags = True
    world.add_set("p", "q")
    world.decide("a", placement="p")
    world.decide("a", placement="q")
    await world.reconcile()
    await world.reconcile()
    assert world.hub.created == ["a/app-1", "a/app-2"]
