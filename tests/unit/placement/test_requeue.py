"""A toleration with ``tolerationSeconds``, in virtual time: the scheduling pass asks to
look again at exactly the instant it runs out (``timeAdded + tolerationSeconds``), and
the controller's queue brings the placement back then, when the tainted cluster is
dropped. Nothing else wakes the placement here (no watches are wired), so only the
requeue can drop the cluster."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds, timefmt
from pyocm.kube.patches import merge_patch
from pyocm.placement.controller import Informers, SchedulingController
from pyocm.placement.decisions import DecisionWriter
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Controller, Result
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer

Obj = dict[str, Any]
START = datetime(2026, 1, 1, tzinfo=UTC)
NAMESPACE, SET = "ns", "set"
KEY = f"{NAMESPACE}/p"
#: The taint was added 10 s before the test starts and is tolerated for 30 s.
ADDED, TOLERATED = START - timedelta(seconds=10), 30
EXPIRY = 20.0


class MemoryHub:
    """The API writes one scheduling pass makes (PlacementDecision create and status
    patches, the Placement's status, events), stored in the informers' caches as the
    watches would bring them back; resourceVersion guards checked."""

    def __init__(self, informers: Informers) -> None:
        self.informers = informers
        self.events: list[Obj] = []
        self._version = 100

    def _stamp(self, obj: Obj) -> Obj:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        return obj

    def _informer(self, kind: Any) -> Informer:
        if kind == ocm.PLACEMENT_DECISION:
            return self.informers.decisions
        assert kind == ocm.PLACEMENT, kind
        return self.informers.placements

    async def create(self, kind: Any, body: Obj, **options: Any) -> Obj:
        if kind == kinds.EVENT:
            self.events.append(body)
            return body
        assert kind == ocm.PLACEMENT_DECISION and options == {}
        made = self._stamp(copy.deepcopy(body))
        made["metadata"]["uid"] = f"uid-{self._version}"
        self.informers.decisions._apply("ADDED", made)  # as its watch would, handlers included
        return made

    async def patch(self, kind: Any, name: str, patch: Obj, **options: Any) -> Obj:
        store = self._informer(kind).store
        stored = store.get(f"{options['namespace']}/{name}")
        assert stored is not None
        assert patch["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        updated = self._stamp(merge_patch(stored, patch))
        self._informer(kind)._apply("MODIFIED", updated)
        return updated


def cluster(name: str, *, taints: list[Obj] | None = None) -> Obj:
    return {
        "metadata": {"name": name, "labels": {"fleet": "a"}, "resourceVersion": "1"},
        "spec": {"hubAcceptsClient": True, "taints": taints or []},
    }


def placement(tolerations: list[Obj]) -> Obj:
    return {
        "metadata": {"name": "p", "namespace": NAMESPACE, "uid": "p-uid", "resourceVersion": "1"},
        "spec": {
            "tolerations": tolerations,
            "prioritizerPolicy": {"mode": "Additive"},
            "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "100%"}},
        },
    }


def busy(added: datetime) -> Obj:
    return {
        "key": "gpu",
        "value": "busy",
        "effect": "NoSelect",
        "timeAdded": timefmt.format_time(added),
    }


@dataclass
class World:
    clock: FakeClock
    informers: Informers
    hub: MemoryHub
    scheduling: SchedulingController

    def chosen(self) -> list[str]:
        found = self.informers.decisions.store.get(f"{NAMESPACE}/p-decision-1")
        assert found is not None
        return [d["clusterName"] for d in found["status"]["decisions"]]


def world(*clusters: Obj, tolerations: list[Obj]) -> World:
    clock = FakeClock(START)
    made = {
        name: Informer(cast(Api, None), kind, clock=clock)
        for name, kind in (
            ("placements", ocm.PLACEMENT),
            ("decisions", ocm.PLACEMENT_DECISION),
            ("clusters", ocm.MANAGED_CLUSTER),
            ("cluster_sets", ocm.MANAGED_CLUSTER_SET),
            ("bindings", ocm.MANAGED_CLUSTER_SET_BINDING),
            ("scores", ocm.ADD_ON_PLACEMENT_SCORE),
        )
    }
    informers = Informers(**made)
    informers.placements.store.upsert(placement(tolerations))
    informers.cluster_sets.store.upsert(
        {
            "metadata": {"name": SET, "resourceVersion": "1"},
            "spec": {
                "clusterSelector": {
                    "selectorType": "LabelSelector",
                    "labelSelector": {"matchLabels": {"fleet": "a"}},
                }
            },
        }
    )
    informers.bindings.store.upsert(
        {
            "metadata": {"name": SET, "namespace": NAMESPACE, "resourceVersion": "1"},
            "spec": {"clusterSet": SET},
        }
    )
    for obj in clusters:
        informers.clusters.store.upsert(obj)
    hub = MemoryHub(informers)
    api = cast(Api, hub)
    recorder = Recorder(api, controller="placement-controller", instance="test", clock=clock)
    writer = DecisionWriter(api, informers.decisions, recorder=recorder)
    scheduling = SchedulingController(api, informers, writer=writer, clock=clock)
    return World(clock, informers, hub, scheduling)


def tolerating(seconds: int) -> list[Obj]:
    return [{"key": "gpu", "operator": "Exists", "tolerationSeconds": seconds}]


async def test_a_pass_asks_to_look_again_at_the_earliest_expiry_of_its_decided_clusters() -> None:
    later = busy(START - timedelta(seconds=5))  # runs out at +25 s
    found = world(
        cluster("a", taints=[busy(ADDED)]),
        cluster("b", taints=[later]),
        cluster("c"),
        tolerations=tolerating(TOLERATED),
    )
    # The first pass decides; its decisions are not yet decided clusters (as upstream,
    # the expiry is read from the PlacementDecisions), so it asks for nothing.
    assert await found.scheduling.reconcile(KEY) is None
    assert found.chosen() == ["a", "b", "c"]
    # The decision write wakes the placement again: now the earliest expiry counts.
    assert await found.scheduling.reconcile(KEY) == Result(requeue_after=EXPIRY)
    found.clock.advance(EXPIRY - 1)
    assert await found.scheduling.reconcile(KEY) == Result(requeue_after=1.0)


async def test_no_requeue_without_toleration_seconds() -> None:
    found = world(cluster("a", taints=[busy(ADDED)]), tolerations=tolerating(TOLERATED))
    found.informers.placements.store.upsert(placement([{"key": "gpu", "operator": "Exists"}]))
    for _ in range(2):
        assert await found.scheduling.reconcile(KEY) is None
    assert found.chosen() == ["a"]


@pytest_asyncio.fixture
async def running() -> AsyncIterator[tuple[World, Controller]]:
    """The scheduling controller on a virtual clock, over a tainted and a plain cluster."""
    found = world(
        cluster("a", taints=[busy(ADDED)]), cluster("b"), tolerations=tolerating(TOLERATED)
    )
    controller = Controller("SchedulingController", found.scheduling.reconcile, clock=found.clock)
    task = asyncio.create_task(controller.run())
    yield found, controller
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert controller.queue.shutting_down


async def test_the_controller_drops_the_cluster_when_the_virtual_clock_reaches_expiry(
    running: tuple[World, Controller],
) -> None:
    found, controller = running
    # Added twice, as the placement watch and then the decision watch would wake it.
    for _ in range(2):
        controller.enqueue(KEY)
        await found.clock.settle()
    assert found.chosen() == ["a", "b"]
    assert found.clock.sleepers == 1, "one requeue pending"
    found.clock.advance(EXPIRY - 0.001)
    await found.clock.settle()
    assert found.chosen() == ["a", "b"], "still tolerated a millisecond before"
    found.clock.advance(0.001)
    await found.clock.settle()
    assert found.chosen() == ["b"]
    assert found.clock.sleepers == 0, "no toleration left to run out"
    [satisfied] = [
        c
        for c in found.informers.placements.store.get(KEY)["status"]["conditions"]  # type: ignore[index]
        if c["type"] == wellknown.PLACEMENT_SATISFIED
    ]
    assert satisfied["status"] == "True"


@pytest.mark.parametrize("seconds", [0, 5])
async def test_an_expired_toleration_selects_nothing_and_asks_for_nothing(seconds: int) -> None:
    # Tolerated for fewer seconds than the taint is old: gone already.
    found = world(cluster("a", taints=[busy(ADDED)]), tolerations=tolerating(seconds))
    for _ in range(2):
        assert await found.scheduling.reconcile(KEY) is None
    assert found.chosen() == []
