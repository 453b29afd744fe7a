"""The manifest work controller over the simulator's memory spoke, with a hub that
records its status patches: what one reconcile writes and when it asks to look again."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable
from typing import Any, TypeVar, cast

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.kube.patches import merge_patch
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer
from pyocm.runtime.restmapper import NoKindMatchError
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent.options import WorkAgentOptions
from pyocm.work.agent.reconcile import ManifestWorkController

Obj = dict[str, Any]
HASH = "a" * 64
KEY = "c1/w"
T = TypeVar("T")


class RecordingHub:
    """The hub's side of ``patch`` on manifestworks/status: merged into the informer's
    copy (as the watch would bring it back), with the resourceVersion guard."""

    def __init__(self, works: Informer) -> None:
        self.works = works
        self.patches: list[Obj] = []
        self.conflict_next = False

    async def patch(self, kind: Any, name: str, patch: Obj, **options: Any) -> Obj:
        stored = self.works.store.get(f"{options['namespace']}/{name}")
        assert stored is not None and options.get("subresource") == "status"
        if self.conflict_next:
            self.conflict_next = False
            raise ApiError(code=409, reason="Conflict", message="the object has been modified")
        assert patch["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        self.patches.append(patch)
        updated = merge_patch(stored, {"status": patch["status"]})
        updated["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)
        self.works.store.upsert(updated)
        return cast(Obj, updated)


def manifest_work(*manifests: Obj, generation: int = 1, **spec: Any) -> Obj:
    return {
        "metadata": {
            "name": "w",
            "namespace": "c1",
            "uid": "work-uid",
            "resourceVersion": "1",
            "generation": generation,
            "finalizers": [wellknown.MANIFEST_WORK_CLEANUP_FINALIZER],
        },
        "spec": {"workload": {"manifests": list(manifests)}, **spec},
    }


def configmap(name: str, **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": data,
    }


@pytest.fixture
def spoke() -> MemorySpoke:
    return MemorySpoke(served=[ocm.APPLIED_MANIFEST_WORK])


def controller(
    spoke: MemorySpoke, work: Obj, clock: FakeClock | None = None
) -> tuple[ManifestWorkController, RecordingHub, Informer]:
    works = Informer(cast(Api, None), ocm.MANIFEST_WORK, namespace="c1")
    works.store.upsert(work)
    hub = RecordingHub(works)
    made = ManifestWorkController(
        cast(Api, hub),
        spoke,
        works,
        options=WorkAgentOptions(cluster_name="c1"),
        hub_hash=HASH,
        agent_id="agent",
        clock=clock or FakeClock(),
    )
    return made, hub, works


async def driven(clock: FakeClock, work: Awaitable[T]) -> T:
    """``work``'s result, moving virtual time on while it waits (its retry pauses)."""
    task = asyncio.ensure_future(work)
    while not task.done():
        clock.advance(0.01)
        await clock.settle()
    return task.result()


def applied_of(works: Informer) -> list[tuple[str, str]]:
    stored = works.store.get(KEY) or {}
    return [
        (c["status"], c["message"])
        for m in stored["status"]["resourceStatus"]["manifests"]
        for c in m["conditions"]
        if c["type"] == "Applied"
    ]


async def test_one_reconcile_applies_records_and_patches_once(spoke: MemorySpoke) -> None:
    reconciler, hub, works = controller(spoke, manifest_work(configmap("a", x="1")))
    result = await reconciler.reconcile(KEY)
    assert result is not None and 240 <= (result.requeue_after or 0) <= 360  # the resync
    assert len(hub.patches) == 1
    assert applied_of(works) == [("True", "Apply manifest complete")]
    record = await spoke.get(ocm.APPLIED_MANIFEST_WORK, f"{HASH}-w")
    found = await spoke.get(kinds.CONFIGMAP, "a", namespace="ns")
    assert record["status"]["appliedResources"] == [
        {
            "group": "",
            "version": "v1",
            "resource": "configmaps",
            "namespace": "ns",
            "name": "a",
            "uid": found["metadata"]["uid"],
        }
    ]
    # Nothing changed: the next reconcile writes nothing to the hub.
    await reconciler.reconcile(KEY)
    assert len(hub.patches) == 1


async def test_failures_back_off_and_a_new_generation_starts_over(spoke: MemorySpoke) -> None:
    unknown = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}}
    reconciler, _, works = controller(spoke, manifest_work(unknown, configmap("a")))
    delays = [(await reconciler.reconcile(KEY)).requeue_after for _ in range(3)]  # type: ignore[union-attr]
    assert delays == [0.005, 0.01, 0.02]
    assert applied_of(works) == [
        ("False", 'Failed to apply manifest: the server doesn\'t have a resource type "Widget"'),
        ("True", "Apply manifest complete"),
    ]
    newer = copy.deepcopy(works.store.get(KEY))
    assert newer is not None
    newer["metadata"]["generation"] = 2
    works.store.upsert(newer)
    result = await reconciler.reconcile(KEY)
    assert result is not None and result.requeue_after == 0.005


async def test_a_lost_status_race_is_raised_for_the_controllers_quick_retry(
    spoke: MemorySpoke,
) -> None:
    reconciler, hub, _ = controller(spoke, manifest_work(configmap("a")))
    hub.conflict_next = True
    with pytest.raises(ApiError) as lost:
        await reconciler.reconcile(KEY)
    assert lost.value.code == 409
    await reconciler.reconcile(KEY)
    assert len(hub.patches) == 1


async def test_a_stale_write_on_the_managed_cluster_is_applied_again_at_once(
    spoke: MemorySpoke,
) -> None:
    class Racing(MemorySpoke):
        raced = False

        async def update(self, kind: Any, obj: Obj, **options: Any) -> Obj:
            if kind == kinds.CONFIGMAP and not self.raced:
                self.raced = True
                raise ApiError(code=409, reason="Conflict", message="the object has been modified")
            return await super().update(kind, obj, **options)

    racing = Racing(served=[ocm.APPLIED_MANIFEST_WORK])
    await racing.create(kinds.CONFIGMAP, configmap("a", x="old"))
    clock = FakeClock()
    reconciler, _, works = controller(racing, manifest_work(configmap("a", x="new")), clock)
    result = await driven(clock, reconciler.reconcile(KEY))
    assert racing.raced
    assert applied_of(works) == [("True", "Apply manifest complete")]
    assert result is not None and (result.requeue_after or 0) >= 240
    assert (await racing.get(kinds.CONFIGMAP, "a", namespace="ns"))["data"] == {"x": "new"}


async def test_works_not_ready_for_the_agent_are_left_alone(spoke: MemorySpoke) -> None:
    no_finalizer = manifest_work(configmap("a"))
    no_finalizer["metadata"]["finalizers"] = []
    deleting = manifest_work(configmap("a"))
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    complete = manifest_work(configmap("a"))
    complete["status"] = {
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "reason": "r",
                "message": "m",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    for work in (no_finalizer, deleting, complete):
        reconciler, hub, _ = controller(spoke, work)
        assert await reconciler.reconcile(KEY) is None
        assert hub.patches == []
    assert await spoke.list(kinds.CONFIGMAP) == []
    assert await spoke.list(ocm.APPLIED_MANIFEST_WORK) == []


@pytest.mark.parametrize(
    "failure",
    [
        ApiError(code=503, reason="ServiceUnavailable", message="discovery unavailable"),
        NoKindMatchError(group="", version="v1", kind="ConfigMap"),
    ],
    ids=["discovery-503", "no-kind-match"],
)
async def test_a_kind_that_does_not_resolve_deletes_nothing(
    spoke: MemorySpoke, failure: Exception
) -> None:
    """Upstream's getUIDFromResult: a manifest whose resource is unknown is an error,
    so the AppliedManifestWork keeps its record and nothing is taken for removed."""
    clock = FakeClock()
    reconciler, _, works = controller(spoke, manifest_work(configmap("a", x="1")), clock)
    await driven(clock, reconciler.reconcile(KEY))
    record = await spoke.get(ocm.APPLIED_MANIFEST_WORK, f"{HASH}-w")
    resolving = spoke.kind_for

    async def failing(**_: str) -> Any:
        raise failure

    spoke.kind_for = failing  # type: ignore[method-assign]
    result = await driven(clock, reconciler.reconcile(KEY))
    spoke.kind_for = resolving  # type: ignore[method-assign]
    assert [o["metadata"]["name"] for o in await spoke.list(kinds.CONFIGMAP)] == ["a"]
    after = await spoke.get(ocm.APPLIED_MANIFEST_WORK, f"{HASH}-w")
    assert after["status"] == record["status"]
    assert after["metadata"]["resourceVersion"] == record["metadata"]["resourceVersion"]
    [(status, message)] = applied_of(works)
    assert status == "False" and message.startswith("Failed to apply manifest: ")
    work = works.store.get(KEY) or {}
    [condition] = [c for c in work["status"]["conditions"] if c["type"] == "Applied"]
    assert condition["status"] == "False"
    assert result is not None and result.requeue_after == 0.005  # a failure: backoff


def remembered(reconciler: ManifestWorkController) -> list[object]:
    """What the controller keeps about works between reconciles."""
    return [
        reconciler._generations,
        reconciler._applied,
        reconciler.failures._counts,
        reconciler.cleanups._counts,
    ]


@pytest.mark.parametrize("ending", ["deleted", "being-deleted", "complete"])
async def test_a_work_not_applied_any_more_is_forgotten(spoke: MemorySpoke, ending: str) -> None:
    unknown = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}}
    reconciler, _, works = controller(spoke, manifest_work(unknown, configmap("a")))
    await reconciler.reconcile(KEY)  # fails: a backoff and a generation to remember
    assert reconciler.failures.count(KEY) == 1 and KEY in reconciler._generations
    assert len(reconciler._applied[KEY]) == 1
    stored = copy.deepcopy(works.store.get(KEY))
    assert stored is not None
    if ending == "deleted":
        works.store.delete(KEY)
    elif ending == "being-deleted":
        stored["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        works.store.upsert(stored)
    else:
        stored["status"]["conditions"].append(
            {
                "type": "Complete",
                "status": "True",
                "reason": "r",
                "message": "m",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        )
        works.store.upsert(stored)
    assert await reconciler.reconcile(KEY) is None
    assert remembered(reconciler) == [{}, {}, {}, {}]
