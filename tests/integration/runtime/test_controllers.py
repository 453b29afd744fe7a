"""Informers, controllers, the manager and leader election against a real hub."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Controller, Result
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.leaderelection import LeaderElector
from pyocm.runtime.manager import LeadershipLost, Manager
from pyocm.testing import HubProcess


@contextlib.asynccontextmanager
async def running(*jobs: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
    tasks = [asyncio.create_task(job()) for job in jobs]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if not isinstance(result, asyncio.CancelledError):
                raise AssertionError(f"a job ended on its own: {result!r}")


async def eventually(check: Callable[[], bool], *, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


def cm(namespace: str, name: str, **data: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


async def test_informer_mirrors_the_namespace_and_tells_handlers(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(kinds.CONFIGMAP, cm(unique, "before"))
    informer = Informer(api, kinds.CONFIGMAP, namespace=unique)
    changes: list[tuple[str, str]] = []

    def record(change: Change) -> None:
        verb = "add" if change.old is None else "delete" if change.new is None else "update"
        changes.append((verb, change.obj["metadata"]["name"]))

    informer.add_handler(record)
    async with running(informer.run):
        await informer.wait_synced()
        assert changes == [("add", "before")]
        made = await api.create(kinds.CONFIGMAP, cm(unique, "after", a="1"))
        await api.update(kinds.CONFIGMAP, {**made, "data": {"a": "2"}})
        await api.delete(kinds.CONFIGMAP, "before", namespace=unique)
        await eventually(lambda: len(changes) == 4)
        assert changes[1:] == [("add", "after"), ("update", "after"), ("delete", "before")]
        assert informer.store.keys() == [f"{unique}/after"]
        assert (informer.store.get(f"{unique}/after") or {})["data"] == {"a": "2"}


async def test_a_relist_reports_what_changed_while_not_watching(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(kinds.CONFIGMAP, cm(unique, "stays"))
    await api.create(kinds.CONFIGMAP, cm(unique, "goes"))
    informer = Informer(api, kinds.CONFIGMAP, namespace=unique)
    changes: list[tuple[str, str]] = []
    informer.add_handler(
        lambda c: changes.append(("delete" if c.new is None else "set", c.obj["metadata"]["name"]))
    )
    await informer._list()  # what run() does first, and again after a 410
    await api.delete(kinds.CONFIGMAP, "goes", namespace=unique)
    await api.create(kinds.CONFIGMAP, cm(unique, "new"))
    changes.clear()
    await informer._list()
    assert sorted(changes) == [("delete", "goes"), ("set", "new")], (
        "unchanged objects are not reported"
    )


async def test_informer_survives_a_hub_restart(tmp_path: object) -> None:
    from pathlib import Path

    hub = HubProcess(Path(str(tmp_path)) / "hub").start()
    async with Api.from_kubeconfig(hub.kubeconfig) as api:
        informer = Informer(api, kinds.NAMESPACE)
        async with running(informer.run):
            await informer.wait_synced()
            hub.stop()
            hub = HubProcess(hub.data_dir, port=hub.port).start()
            try:
                await api.create(kinds.NAMESPACE, {"metadata": {"name": "after-restart"}})
                await eventually(
                    lambda: informer.store.get("after-restart") is not None, timeout=20
                )
            finally:
                hub.stop()


async def test_controller_reconciles_keys_retries_failures_and_requeues(
    api: Api, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    informer = Informer(api, kinds.CONFIGMAP, namespace=unique)
    seen: list[str] = []
    failures = {"flaky": 1}

    async def reconcile(key: str) -> Result | None:
        seen.append(key)
        name = key.split("/")[1]
        if failures.get(name, 0) > 0:
            failures[name] -= 1
            raise RuntimeError("the first attempt fails")
        if name == "again" and seen.count(key) < 3:
            return Result(requeue_after=0.05)
        return None

    controller = Controller("test", reconcile)
    controller.watch(informer)
    async with running(informer.run, controller.run):
        await api.create(kinds.CONFIGMAP, cm(unique, "plain"))
        await api.create(kinds.CONFIGMAP, cm(unique, "flaky"))
        await api.create(kinds.CONFIGMAP, cm(unique, "again"))
        await eventually(
            lambda: seen.count(f"{unique}/flaky") == 2 and seen.count(f"{unique}/again") == 3
        )
        await asyncio.sleep(0.2)
    assert seen.count(f"{unique}/plain") == 1
    assert seen.count(f"{unique}/flaky") == 2
    assert seen.count(f"{unique}/again") == 3


async def test_leader_election_hands_over_only_after_the_lease_expires(
    api: Api, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    clock = FakeClock()

    def elector(identity: str) -> LeaderElector:
        return LeaderElector(api, namespace=unique, name="lock", identity=identity, clock=clock)

    first, second = elector("first"), elector("second")
    await first.acquire()
    assert not await second._try()
    clock.advance(14)
    assert not await second._try(), "the lease has 15 s to run on the observer's clock"
    clock.advance(1)
    assert await second._try()
    lease = await api.get(kinds.LEASE, "lock", namespace=unique)
    assert lease["spec"]["holderIdentity"] == "second"
    assert lease["spec"]["leaseTransitions"] == 1
    assert lease["spec"]["leaseDurationSeconds"] == 15
    await second.release()
    assert await first._try(), "a released lease is free at once"


async def test_manager_runs_controllers_while_leading_and_stops_when_the_lease_is_lost(
    api: Api, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    manager = Manager(api)
    seen: list[str] = []

    async def reconcile(key: str) -> None:
        seen.append(key)

    manager.controller("cms", reconcile).watch(manager.informer(kinds.CONFIGMAP, namespace=unique))
    elector = LeaderElector(
        api,
        namespace=unique,
        name="lock",
        identity="me",
        lease_duration=1.5,
        renew_deadline=1.0,
        retry_period=0.1,
    )
    run = asyncio.create_task(manager.run(elector=elector))
    await api.create(kinds.CONFIGMAP, cm(unique, "x"))
    await eventually(lambda: seen == [f"{unique}/x"])
    lease = await api.get(kinds.LEASE, "lock", namespace=unique)
    lease["spec"].update(holderIdentity="thief", leaseDurationSeconds=3600)
    await api.update(kinds.LEASE, lease)
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(run, 10)
    assert (await api.get(kinds.LEASE, "lock", namespace=unique))["spec"][
        "holderIdentity"
    ] == "thief"
