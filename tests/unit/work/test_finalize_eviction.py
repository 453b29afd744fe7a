"""The AppliedManifestWork controllers over the simulator's memory spoke, in virtual
time: finalizing a record (Foreground: its resources go first) and evicting records
whose hub work vanished."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds, timefmt
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent import appliedwork
from pyocm.work.agent.appliedcache import AppliedWorkCache
from pyocm.work.agent.eviction import UnmanagedAppliedWorks
from pyocm.work.agent.finalize import AppliedWorkFinalizer, WorkFinalizer
from pyocm.work.agent.options import WorkAgentOptions
from tests.unit.work.test_reconcile import RecordingHub

Obj = dict[str, Any]
HASH = "h" * 64


@pytest.fixture
def spoke() -> MemorySpoke:
    return MemorySpoke(served=[ocm.APPLIED_MANIFEST_WORK])


async def record(spoke: MemorySpoke, work: str, *, agent: str = "agent", hub: str = HASH) -> Obj:
    wanted = appliedwork.desired(hub_hash=hub, agent_id=agent, work_name=work, labels={})
    return cast(Obj, await appliedwork.ensure(spoke, wanted))


async def owned_configmap(spoke: MemorySpoke, name: str, applied: Obj, **meta: Any) -> Obj:
    owner = appliedwork.owner_of(applied)  # type: ignore[arg-type]
    return await spoke.create(
        kinds.CONFIGMAP,
        {"metadata": {"name": name, "namespace": "ns", "ownerReferences": [owner], **meta}},
    )


def records_of(spoke: MemorySpoke) -> AppliedWorkCache:
    """The cache of agent "agent"'s records the AppliedManifestWork controllers read."""
    return AppliedWorkCache(spoke, agent_id="agent")


def applied_resource(obj: Obj) -> Obj:
    meta = obj["metadata"]
    return {"group": "", "version": "v1", "resource": "configmaps", "namespace": "ns",
            "name": meta["name"], "uid": meta["uid"]}  # fmt: skip


async def test_a_deleted_record_loses_its_finalizer_only_once_its_resources_are_gone(
    spoke: MemorySpoke,
) -> None:
    applied = await record(spoke, "w")
    held = await owned_configmap(spoke, "held", applied, finalizers=["example.com/hold"])
    plain = await owned_configmap(spoke, "plain", applied)
    kept = await spoke.create(kinds.CONFIGMAP, {"metadata": {"name": "orphan", "namespace": "ns"}})
    applied["status"] = {"appliedResources": [applied_resource(o) for o in (held, plain, kept)]}
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, applied, subresource="status")
    await spoke.delete(ocm.APPLIED_MANIFEST_WORK, applied["metadata"]["name"])
    gone: list[str] = []
    finalizer = AppliedWorkFinalizer(records_of(spoke), hub_hash=HASH, gone=gone.append)
    name = applied["metadata"]["name"]

    for _ in range(3):
        result = await finalizer.reconcile(name)
        assert result is not None and result.requeue_after is not None
    stored = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    assert [r["name"] for r in stored["status"]["appliedResources"]] == ["held"]
    assert {o["metadata"]["name"] for o in await spoke.list(kinds.CONFIGMAP)} == {"held", "orphan"}
    assert gone == []

    held = await spoke.get(kinds.CONFIGMAP, "held", namespace="ns")
    held["metadata"]["finalizers"] = []
    await spoke.update(kinds.CONFIGMAP, held)
    for _ in range(3):
        if await finalizer.reconcile(name) is None:
            break
    assert gone == [name]
    assert [o["metadata"]["name"] for o in await spoke.list(ocm.APPLIED_MANIFEST_WORK)] == []
    assert {o["metadata"]["name"] for o in await spoke.list(kinds.CONFIGMAP)} == {"orphan"}


async def test_another_agents_record_is_not_finalized(spoke: MemorySpoke) -> None:
    applied = await record(spoke, "w", agent="someone-else")
    plain = await owned_configmap(spoke, "plain", applied)
    applied["status"] = {"appliedResources": [applied_resource(plain)]}
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, applied, subresource="status")
    await spoke.delete(ocm.APPLIED_MANIFEST_WORK, applied["metadata"]["name"])
    finalizer = AppliedWorkFinalizer(records_of(spoke), hub_hash=HASH, gone=lambda _: None)
    assert await finalizer.reconcile(applied["metadata"]["name"]) is None
    assert await spoke.get(kinds.CONFIGMAP, "plain", namespace="ns")


def works_informer(*works: str) -> Informer:
    informer = Informer(cast(Api, None), ocm.MANIFEST_WORK, namespace="c1")
    for name in works:
        informer.store.upsert(
            {"metadata": {"name": name, "namespace": "c1", "resourceVersion": "1"}}
        )
    return informer


def evictor(
    spoke: MemorySpoke,
    works: Informer,
    clock: FakeClock,
    deleted: list[str],
    *,
    grace: float = 60.0,
) -> UnmanagedAppliedWorks:
    return UnmanagedAppliedWorks(
        records_of(spoke),
        works,
        options=WorkAgentOptions(
            cluster_name="c1", appliedmanifestwork_eviction_grace_period=grace
        ),
        hub_hash=HASH,
        clock=clock,
        deleted=deleted.append,
    )


async def start_of(spoke: MemorySpoke, name: str) -> str | None:
    found = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    return (found.get("status") or {}).get("evictionStartTime")


async def test_a_record_whose_work_vanished_is_evicted_after_the_grace_period(
    spoke: MemorySpoke,
) -> None:
    clock = FakeClock()
    works = works_informer("present")
    deleted: list[str] = []
    controller = evictor(spoke, works, clock, deleted)
    vanished = (await record(spoke, "vanished"))["metadata"]["name"]
    present = (await record(spoke, "present"))["metadata"]["name"]

    assert await controller.reconcile(present) is None
    assert await start_of(spoke, present) is None

    first = await controller.reconcile(vanished)
    assert first is not None and first.requeue_after == 60.0
    assert await start_of(spoke, vanished) == timefmt.format_time(clock.now())
    clock.advance(45)
    later = await controller.reconcile(vanished)
    assert later is not None and later.requeue_after == pytest.approx(15)
    assert deleted == []
    clock.advance(15)
    assert await controller.reconcile(vanished) is None
    assert deleted == [vanished]
    stored = await spoke.get(ocm.APPLIED_MANIFEST_WORK, vanished)
    assert stored["metadata"]["deletionTimestamp"]  # its finalizer deletes its resources


async def test_a_work_that_comes_back_stops_the_eviction(spoke: MemorySpoke) -> None:
    clock = FakeClock()
    works = works_informer()
    deleted: list[str] = []
    controller = evictor(spoke, works, clock, deleted)
    name = (await record(spoke, "w"))["metadata"]["name"]
    await controller.reconcile(name)
    assert await start_of(spoke, name) is not None
    works.store.upsert({"metadata": {"name": "w", "namespace": "c1", "resourceVersion": "2"}})
    clock.advance(3600)
    assert await controller.reconcile(name) is None
    assert await start_of(spoke, name) is None
    assert deleted == []


async def test_records_of_other_agents_or_a_disabled_eviction_are_left_alone(
    spoke: MemorySpoke,
) -> None:
    clock = FakeClock()
    deleted: list[str] = []
    other_hub = (await record(spoke, "w", agent="other", hub="0" * 64))["metadata"]["name"]
    controller = evictor(spoke, works_informer(), clock, deleted)
    assert await controller.reconcile(other_hub) is None
    assert await start_of(spoke, other_hub) is None

    mine = (await record(spoke, "mine"))["metadata"]["name"]
    await controller.reconcile(mine)
    assert await start_of(spoke, mine) is not None
    forever = evictor(
        spoke, works_informer(), clock, deleted, grace=timedelta(days=365 * 100).total_seconds()
    )
    clock.advance(10**9)
    assert await forever.reconcile(mine) is None
    assert await start_of(spoke, mine) is None  # turning eviction off clears the start
    assert deleted == []


async def test_a_record_of_the_same_agent_under_another_hub_is_evicted(spoke: MemorySpoke) -> None:
    """The cluster moved to a new hub with the same agent id: the old hub's record of a
    work the new hub also has is not this hub's, and goes after the grace period."""
    clock = FakeClock()
    deleted: list[str] = []
    old = (await record(spoke, "w", hub="0" * 64))["metadata"]["name"]
    controller = evictor(spoke, works_informer("w"), clock, deleted)
    await controller.reconcile(old)
    clock.advance(60)
    await controller.reconcile(old)
    assert deleted == [old]


async def test_a_record_gone_while_being_finalized_leaves_no_backoff(spoke: MemorySpoke) -> None:
    applied = await record(spoke, "w")
    held = await owned_configmap(spoke, "held", applied, finalizers=["example.com/hold"])
    applied["status"] = {"appliedResources": [applied_resource(held)]}
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, applied, subresource="status")
    name = applied["metadata"]["name"]
    await spoke.delete(ocm.APPLIED_MANIFEST_WORK, name)
    finalizer = AppliedWorkFinalizer(records_of(spoke), hub_hash=HASH, gone=lambda _: None)
    for _ in range(2):
        await finalizer.reconcile(name)
    assert finalizer.failures.count(name) == 2
    # Someone takes the finalizer off by hand: the record is gone.
    forced = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    forced["metadata"]["finalizers"] = []
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, forced)
    assert await finalizer.records.relist() == []  # the agent's next list
    assert await finalizer.reconcile(name) is None
    assert finalizer.failures._counts == {}


async def test_a_work_gone_while_being_finalized_leaves_no_backoff(spoke: MemorySpoke) -> None:
    clock = FakeClock()
    works = works_informer()
    works.store.upsert(
        {
            "metadata": {
                "name": "w",
                "namespace": "c1",
                "resourceVersion": "1",
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": [wellknown.MANIFEST_WORK_CLEANUP_FINALIZER],
            }
        }
    )
    applied = await record(spoke, "w")
    await owned_configmap(spoke, "held", applied, finalizers=["example.com/hold"])
    hub = RecordingHub(works)
    finalizer = WorkFinalizer(
        cast(Api, hub), spoke, works, hub_hash=HASH, clock=clock, deleted=lambda _: None
    )
    result = await finalizer.reconcile("c1/w")
    assert result is not None and finalizer.failures.count("c1/w") == 1
    works.store.delete("c1/w")  # its finalizer taken off on the hub by hand
    assert await finalizer.reconcile("c1/w") is None
    assert finalizer.failures._counts == {}
