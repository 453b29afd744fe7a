"""The status controller's drift shortcut, over the memory spoke with a recording hub in
virtual time: a resource that was applied and is now missing asks the manifest work
controller for a re-apply, but never for a finished manifest, never while the work backs
off, and at most once per status sync interval."""

from __future__ import annotations

from typing import Any

from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.runtime.informer import Informer
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent.options import WorkAgentOptions
from pyocm.work.agent.statussync import StatusController
from tests.unit.work.test_reconcile import (
    KEY,
    configmap,
    controller,
    driven,
    manifest_work,
)

Obj = dict[str, Any]
INTERVAL = WorkAgentOptions(cluster_name="c1").status_sync_interval


def job(name: str) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "c", "image": "busybox"}],
                    "restartPolicy": "Never",
                }
            }
        },
    }


def job_complete_rule(name: str) -> Obj:
    return {
        "resourceIdentifier": {
            "group": "batch",
            "resource": "jobs",
            "namespace": "ns",
            "name": name,
        },
        "conditionRules": [{"type": "WellKnownConditions", "condition": "Complete"}],
    }


class Setup:
    """A work applied once, and a status controller whose re-apply requests are counted."""

    def __init__(self, work: Obj) -> None:
        self.spoke = MemorySpoke(served=[ocm.APPLIED_MANIFEST_WORK])
        self.clock = FakeClock()
        self.manifests, self.hub, self.works = controller(self.spoke, work, self.clock)
        self.asked: list[str] = []
        self.status = StatusController(
            self.hub,  # type: ignore[arg-type]
            self.spoke,
            self.works,
            options=WorkAgentOptions(cluster_name="c1"),
            clock=self.clock,
            reapply=self.asked.append,
            backing_off=self.manifests.backing_off,
        )

    async def apply(self) -> None:
        await driven(self.clock, self.manifests.reconcile(KEY))

    async def sync(self) -> None:
        await self.status.reconcile(KEY)


def conditions_of(works: Informer, kind: str) -> dict[str, str]:
    stored = works.store.get(KEY) or {}
    [entry] = [
        m
        for m in stored["status"]["resourceStatus"]["manifests"]
        if m["resourceMeta"]["kind"] == kind
    ]
    return {c["type"]: c["status"] for c in entry["conditions"]}


async def test_a_missing_applied_resource_asks_for_a_reapply_once_per_interval() -> None:
    setup = Setup(manifest_work(configmap("a", x="1")))
    await setup.apply()
    await setup.sync()
    assert setup.asked == []
    await setup.spoke.delete(kinds.CONFIGMAP, "a", namespace="ns")
    await setup.sync()
    assert setup.asked == [KEY]
    # Syncs in between (each change of the work brings one) ask no more.
    setup.clock.advance(INTERVAL / 2)
    await setup.sync()
    await setup.sync()
    assert setup.asked == [KEY]
    setup.clock.advance(INTERVAL / 2)
    await setup.sync()
    assert setup.asked == [KEY, KEY]
    # Put back, it is no drift; the work gone, its record of asks goes too.
    await setup.apply()
    await setup.sync()
    assert setup.asked == [KEY, KEY]
    setup.works.store.delete(KEY)
    assert await setup.status.reconcile(KEY) is None
    assert setup.status._reapplied == {}


async def test_a_finished_manifest_removed_is_no_drift() -> None:
    """A Job its TTL controller deleted once Complete: never applied again, so never
    re-applied at every status sync."""
    work = manifest_work(job("j"), configmap("a", x="1"), manifestConfigs=[job_complete_rule("j")])
    setup = Setup(work)
    await setup.apply()
    done = await setup.spoke.get(kinds.JOB, "j", namespace="ns")
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1}
    await setup.spoke.update(kinds.JOB, done, subresource="status")
    await setup.sync()
    assert conditions_of(setup.works, "Job")["Complete"] == "True"
    await setup.spoke.delete(kinds.JOB, "j", namespace="ns")
    for _ in range(3):
        await setup.sync()
        await setup.apply()
        setup.clock.advance(INTERVAL)
    assert setup.asked == []
    assert await setup.spoke.list(kinds.JOB) == []
    # The work's other resources are still looked after.
    await setup.spoke.delete(kinds.CONFIGMAP, "a", namespace="ns")
    await setup.sync()
    assert setup.asked == [KEY]


async def test_a_work_backing_off_waits_for_its_backoff() -> None:
    unknown = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}}
    setup = Setup(manifest_work(unknown, configmap("a", x="1")))
    await setup.apply()
    assert setup.manifests.backing_off(KEY)
    assert conditions_of(setup.works, "ConfigMap")["Applied"] == "True"
    await setup.spoke.delete(kinds.CONFIGMAP, "a", namespace="ns")
    for _ in range(3):
        await setup.sync()
        setup.clock.advance(INTERVAL)
    assert setup.asked == []
    # The backoff's own retry puts it back.
    await setup.apply()
    assert [o["metadata"]["name"] for o in await setup.spoke.list(kinds.CONFIGMAP)] == ["a"]
