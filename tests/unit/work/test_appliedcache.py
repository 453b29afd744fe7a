"""The work agent's AppliedManifestWork cache over the memory spoke: a steady agent
lists its records once per status sync interval and reads none of them one by one; a
controller acting on a stale cached record is refused (409), and its retry reads afresh."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

import pytest

from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent.agent import WorkAgent
from pyocm.work.agent.appliedcache import AppliedWorkCache
from pyocm.work.agent.eviction import UnmanagedAppliedWorks
from pyocm.work.agent.finalize import AppliedWorkFinalizer
from pyocm.work.agent.options import WorkAgentOptions
from tests.unit.work.test_finalize_eviction import HASH, record, works_informer

Obj = dict[str, Any]


class CountingSpoke(MemorySpoke):
    """Counts the requests made for AppliedManifestWorks, by verb."""

    def __init__(self) -> None:
        super().__init__(served=[ocm.APPLIED_MANIFEST_WORK])
        self.calls: Counter[str] = Counter()

    def _count(self, verb: str, kind: Kind) -> None:
        if kind == ocm.APPLIED_MANIFEST_WORK:
            self.calls[verb] += 1

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj:
        self._count("get", kind)
        return await super().get(kind, name, namespace=namespace)

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        self._count("list", kind)
        return await super().list(kind, namespace=namespace)

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        self._count("update", kind)
        return await super().update(kind, obj, subresource=subresource)


def agent_over(spoke: MemorySpoke) -> WorkAgent:
    """A work agent whose controllers are driven by hand (its manager never runs, so
    its hub client is never used)."""
    options = WorkAgentOptions(cluster_name="c1", hub_hash=HASH, agent_id="agent")
    return WorkAgent(cast(Api, object()), spoke, options=options, clock=FakeClock())


async def test_a_steady_agent_lists_its_records_once_per_interval_and_gets_none() -> None:
    spoke = CountingSpoke()
    agent = agent_over(spoke)
    for work in ("w1", "w2", "w3"):
        await record(spoke, work)
        agent.manifests.works.store.upsert(
            {"metadata": {"name": work, "namespace": "c1", "resourceVersion": "1"}}
        )
    await record(spoke, "theirs", agent="someone-else")
    spoke.calls.clear()
    for _ in range(3):  # three status sync intervals of the lister
        names = await agent._record_names()
        assert sorted(names) == [f"{HASH}-w1", f"{HASH}-w2", f"{HASH}-w3"]
        for name in names:
            assert await agent.applied_finalizer.reconcile(name) is None
            assert await agent.eviction.reconcile(name) is None
    assert spoke.calls == {"list": 3}


async def test_a_stale_cached_record_is_refused_and_read_afresh() -> None:
    spoke = CountingSpoke()
    clock = FakeClock()
    records = AppliedWorkCache(spoke, agent_id="agent")
    evictor = UnmanagedAppliedWorks(
        records,
        works_informer(),  # the work is gone from the hub
        options=WorkAgentOptions(cluster_name="c1"),
        hub_hash=HASH,
        clock=clock,
        deleted=lambda name: None,
    )
    name = (await record(spoke, "w"))["metadata"]["name"]
    assert await records.relist() == [name]
    # Someone else writes the record after the list.
    theirs = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    theirs["metadata"]["labels"] = {"touched": "yes"}
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, theirs)
    with pytest.raises(ApiError) as refused:
        await evictor.reconcile(name)
    assert refused.value.code == 409
    result = await evictor.reconcile(name)  # the controller's conflict retry
    assert result is not None and result.requeue_after == evictor.grace
    stored = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    assert stored["metadata"]["labels"] == {"touched": "yes"}
    assert stored["status"]["evictionStartTime"]


async def test_eviction_deletes_only_the_record_it_read() -> None:
    spoke = CountingSpoke()
    clock = FakeClock()
    records = AppliedWorkCache(spoke, agent_id="agent")
    deleted: list[str] = []
    evictor = UnmanagedAppliedWorks(
        records,
        works_informer(),
        options=WorkAgentOptions(cluster_name="c1", appliedmanifestwork_eviction_grace_period=60),
        hub_hash=HASH,
        clock=clock,
        deleted=deleted.append,
    )
    name = (await record(spoke, "w"))["metadata"]["name"]
    await records.relist()
    await evictor.reconcile(name)  # eviction starts (written through: the cache has it)
    clock.advance(60)
    # Replaced behind the cache's back by a namesake.
    old = await spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
    old["metadata"]["finalizers"] = []
    await spoke.update(ocm.APPLIED_MANIFEST_WORK, old)
    await spoke.delete(ocm.APPLIED_MANIFEST_WORK, name)
    await record(spoke, "w")
    with pytest.raises(ApiError) as refused:
        await evictor.reconcile(name)
    assert refused.value.code == 409 and deleted == []
    assert not (await spoke.get(ocm.APPLIED_MANIFEST_WORK, name))["metadata"].get(
        "deletionTimestamp"
    )


async def test_a_record_deleted_by_the_agent_is_read_afresh_by_its_finalizer() -> None:
    spoke = CountingSpoke()
    records = AppliedWorkCache(spoke, agent_id="agent")
    gone: list[str] = []
    finalizer = AppliedWorkFinalizer(records, hub_hash=HASH, gone=gone.append)
    name = (await record(spoke, "w"))["metadata"]["name"]
    await records.relist()
    assert await finalizer.reconcile(name) is None  # cached, not being deleted
    await records.spoke.delete(ocm.APPLIED_MANIFEST_WORK, name)  # as the work finalizer does
    assert await finalizer.reconcile(name) is None
    assert gone == [name]
    assert await spoke.list(ocm.APPLIED_MANIFEST_WORK) == []
    assert len(records) == 0
