"""Service cluster IPs and node ports: what is allocated is known from memory, kept equal
to the stored Services by storage commits, whatever path writes or deletes them.

An in-process store (memory backend, built-in kinds) with the allocator as its only
admission plugin, started as the server starts it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

import pytest
import pytest_asyncio

from pyocm.apiserver.admission.chain import Chain
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.controllers.namespaces import RECHECK_SECONDS, NamespaceController
from pyocm.apiserver.registry.builtin import builtin_resources
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import DeleteOptions, Store
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.serviceips import HOLD_SECONDS, ServiceIPs
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage import memory
from pyocm.apiserver.storage.logstructured import LogStructured
from pyocm.base.clock import FakeClock
from pyocm.kube import status

Obj = dict[str, Any]
ADMIN = UserInfo(name="admin", groups=(MASTERS,))


@dataclass
class Hub:
    """A store as the server assembles it, over a disk that survives a restart."""

    disk: memory.MemoryDisk
    backend: LogStructured
    state: ServerState
    allocator: ServiceIPs
    clock: FakeClock
    lists: list[str]

    @property
    def store(self) -> Store:
        return self.state.store

    def info(self, plural: str = "services") -> ResourceInfo:
        info = self.state.catalog.get("", "v1", plural)
        assert info is not None
        return info

    async def create(self, name: str, spec: Obj, *, namespace: str = "default", **ctx: Any) -> Obj:
        body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}
        return await self.store.create(
            self.info(), body, Context(user=ADMIN, namespace=namespace, **ctx)
        )

    async def delete(self, name: str, *, namespace: str = "default", **ctx: Any) -> None:
        await self.store.delete(
            self.info(),
            name=name,
            ctx=Context(user=ADMIN, namespace=namespace, **ctx),
            options=DeleteOptions(),
        )

    async def refused(self, name: str, spec: Obj, *, namespace: str = "default") -> str:
        with pytest.raises(status.ApiError) as refused:
            await self.create(name, spec, namespace=namespace)
        return refused.value.message


def assemble(backend: LogStructured) -> tuple[ServerState, Chain]:
    catalog = Catalog()
    for info in builtin_resources():
        catalog.add(info)
    chain = Chain()
    store = Store(backend=backend, admission=chain)
    return cast(ServerState, SimpleNamespace(store=store, catalog=catalog)), chain


async def start_hub(disk: memory.MemoryDisk, *, seed: int = 0) -> Hub:
    backend = memory.new_backend(disk=disk)
    await backend.start()
    lists: list[str] = []
    real_list = backend.list

    async def counted(prefix: str, *, revision: int = 0) -> Any:
        lists.append(prefix)
        return await real_list(prefix, revision=revision)

    backend.list = counted  # type: ignore[method-assign]
    state, chain = assemble(backend)
    clock = FakeClock()
    allocator = ServiceIPs(state, rng=random.Random(seed), clock=clock)
    await allocator.start()
    chain.add(allocator)
    return Hub(disk, backend, state, allocator, clock, lists)


@pytest_asyncio.fixture
async def hub() -> AsyncIterator[Hub]:
    started = await start_hub(memory.MemoryDisk())
    yield started
    await started.backend.close()


def with_ip(ip: str, **spec: Any) -> Obj:
    return {"clusterIP": ip, "ports": [{"port": 80}], **spec}


def node_port(port: int) -> Obj:
    return {"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}


def taken_ip(ip: str) -> str:
    return "failed to allocate IP " + ip + ": provided IP is already allocated"


async def test_creates_read_no_stored_service_once_started(hub: Hub) -> None:
    hub.lists.clear()
    made = [
        await hub.create(f"s{i}", {"type": "NodePort", "ports": [{"port": 80}]}) for i in range(50)
    ]
    assert hub.lists == [], "a Service create listed the store"
    assert len({s["spec"]["clusterIP"] for s in made}) == 50
    assert len({s["spec"]["ports"][0]["nodePort"] for s in made}) == 50


async def test_picked_node_ports_leave_the_static_band_to_services_that_ask(hub: Hub) -> None:
    """kube gives 30000-30085 (``min(max(16, 2768/32), 128)`` ports) last, so a port asked
    for there is free however many were handed out: picks over the whole range took one
    of five asked-for ports in about one run in fourteen of the replica test."""
    made = [
        await hub.create(f"s{i}", {"type": "NodePort", "ports": [{"port": 80}]}) for i in range(300)
    ]
    picked = [s["spec"]["ports"][0]["nodePort"] for s in made]
    assert min(picked) >= 30086
    for port in range(30000, 30005):  # and so every one of them is there to be asked for
        assert (await hub.create(f"asks-{port}", node_port(port)))["spec"]["ports"][0][
            "nodePort"
        ] == port


async def test_node_ports_come_from_the_static_band_once_the_rest_is_taken(hub: Hub) -> None:
    upper = [
        {"name": f"p{i}", "port": i + 1, "nodePort": port}
        for i, port in enumerate(range(30086, 32768))
    ]
    await hub.create("upper", {"type": "NodePort", "ports": upper})
    made = await hub.create("picks", {"type": "NodePort", "ports": [{"port": 80}]})
    assert 30000 <= made["spec"]["ports"][0]["nodePort"] <= 30085


async def test_a_deleted_services_ip_and_port_are_free_at_once(hub: Hub) -> None:
    await hub.create("a", {**with_ip("10.96.5.5"), **node_port(30080)})
    assert taken_ip("10.96.5.5") in await hub.refused("b", with_ip("10.96.5.5"))
    assert "provided port is already allocated" in await hub.refused("c", node_port(30080))
    await hub.delete("a")
    # kube's allocators release on delete with no quarantine: both can be asked for again.
    again = await hub.create("b", {**with_ip("10.96.5.5"), **node_port(30080)})
    assert again["spec"]["clusterIPs"] == ["10.96.5.5"]
    assert again["spec"]["ports"][0]["nodePort"] == 30080


async def test_a_service_kept_by_a_finalizer_holds_its_ip_until_it_is_gone(hub: Hub) -> None:
    await hub.create("a", with_ip("10.96.5.6"))
    service = await hub.store.get(hub.info(), namespace="default", name="a")
    service["metadata"]["finalizers"] = ["example.com/hold"]
    ctx = Context(user=ADMIN, namespace="default")
    await hub.store.update(hub.info(), name="a", obj=service, ctx=ctx)
    await hub.delete("a")
    assert taken_ip("10.96.5.6") in await hub.refused("b", with_ip("10.96.5.6"))
    # Removing the last finalizer deletes it (an update that becomes a delete).
    terminating = await hub.store.get(hub.info(), namespace="default", name="a")
    terminating["metadata"]["finalizers"] = []
    await hub.store.update(hub.info(), name="a", obj=terminating, ctx=ctx)
    assert (await hub.create("b", with_ip("10.96.5.6")))["spec"]["clusterIP"] == "10.96.5.6"


async def test_an_update_dropping_node_ports_frees_them(hub: Hub) -> None:
    made = await hub.create("a", node_port(30081))
    made["spec"]["type"] = "ClusterIP"
    del made["spec"]["ports"][0]["nodePort"]
    ctx = Context(user=ADMIN, namespace="default")
    await hub.store.update(hub.info(), name="a", obj=made, ctx=ctx)
    assert (await hub.create("b", node_port(30081)))["spec"]["ports"][0]["nodePort"] == 30081


async def test_an_update_keeps_its_own_values_and_checks_new_ones(hub: Hub) -> None:
    await hub.create("other", node_port(30090))
    made = await hub.create("a", node_port(30091))
    made["metadata"]["labels"] = {"tier": "front"}
    ctx = Context(user=ADMIN, namespace="default")
    kept, _ = await hub.store.update(hub.info(), name="a", obj=made, ctx=ctx)
    assert kept["spec"]["ports"][0]["nodePort"] == 30091
    kept["spec"]["ports"][0]["nodePort"] = 30090
    with pytest.raises(status.ApiError) as refused:
        await hub.store.update(hub.info(), name="a", obj=kept, ctx=ctx)
    assert "provided port is already allocated" in refused.value.message


async def test_a_dry_run_allocates_nothing(hub: Hub) -> None:
    tried = await hub.create("a", {**with_ip("10.96.5.7"), **node_port(30082)}, dry_run=True)
    assert tried["spec"]["clusterIP"] == "10.96.5.7"
    made = await hub.create("b", {**with_ip("10.96.5.7"), **node_port(30082)})
    assert made["spec"]["ports"][0]["nodePort"] == 30082
    # A dry run still sees what is taken, and deleting in a dry run frees nothing.
    with pytest.raises(status.ApiError) as refused:
        await hub.create("c", with_ip("10.96.5.7"), dry_run=True)
    assert taken_ip("10.96.5.7") in refused.value.message
    await hub.delete("b", dry_run=True)
    assert taken_ip("10.96.5.7") in await hub.refused("c", with_ip("10.96.5.7"))


async def test_a_write_that_fails_after_allocating_releases_what_it_took(hub: Hub) -> None:
    # Refused by validation, after admission gave it the address and the port.
    no_ports = {"clusterIP": "10.96.5.8", "type": "NodePort", "ports": [{"port": 0}]}
    assert "spec.ports[0].port" in await hub.refused("a", no_ports)
    # Refused by storage: the name is taken.
    await hub.create("b", with_ip("10.96.5.9"))
    message = await hub.refused("b", {**with_ip("10.96.5.10"), **node_port(30083)})
    assert "already exists" in message
    assert (await hub.create("c", with_ip("10.96.5.8")))["spec"]["clusterIP"] == "10.96.5.8"
    made = await hub.create("d", {**with_ip("10.96.5.10"), **node_port(30083)})
    assert made["spec"]["ports"][0]["nodePort"] == 30083


async def test_a_write_cancelled_in_flight_keeps_its_ip_until_its_outcome_is_known(
    hub: Hub,
) -> None:
    gate, entered = asyncio.Event(), asyncio.Event()
    real_create = hub.backend.create
    writes: list[asyncio.Future[Any]] = []

    async def gated(key: str, value: bytes) -> Any:
        await gate.wait()
        return await real_create(key, value)

    async def slow_create(key: str, value: bytes) -> Any:
        # As the store does: a cancelled writer does not cancel its write.
        writes.append(asyncio.ensure_future(gated(key, value)))
        entered.set()
        return await asyncio.shield(writes[-1])

    hub.backend.create = slow_create  # type: ignore[method-assign]
    writer = asyncio.ensure_future(hub.create("a", with_ip("10.96.5.11")))
    await entered.wait()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    hub.backend.create = real_create  # type: ignore[method-assign]
    assert taken_ip("10.96.5.11") in await hub.refused("b", with_ip("10.96.5.11"))
    gate.set()
    stored = await writes[0]
    assert b"10.96.5.11" in stored.value
    assert taken_ip("10.96.5.11") in await hub.refused("b", with_ip("10.96.5.11"))


async def test_a_cancelled_write_that_never_lands_frees_its_ip_after_the_hold(hub: Hub) -> None:
    entered = asyncio.Event()
    real_create = hub.backend.create

    async def lost(key: str, value: bytes) -> Any:
        entered.set()
        await asyncio.Event().wait()  # cancelled with its writer: it never writes

    hub.backend.create = lost  # type: ignore[method-assign]
    writer = asyncio.ensure_future(hub.create("a", with_ip("10.96.5.15")))
    await entered.wait()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    hub.backend.create = real_create  # type: ignore[method-assign]
    assert taken_ip("10.96.5.15") in await hub.refused("b", with_ip("10.96.5.15"))
    hub.clock.advance(HOLD_SECONDS + 1)
    assert (await hub.create("b", with_ip("10.96.5.15")))["spec"]["clusterIP"] == "10.96.5.15"


async def test_deleting_a_namespace_frees_its_services(hub: Hub) -> None:
    namespaces = hub.info("namespaces")
    ctx = Context(user=ADMIN)
    await hub.store.create(namespaces, {"metadata": {"name": "team"}}, ctx)
    await hub.create("a", {**with_ip("10.96.5.12"), **node_port(30084)}, namespace="team")
    await hub.create("b", with_ip("10.96.5.13"), namespace="team")
    assert taken_ip("10.96.5.12") in await hub.refused("c", with_ip("10.96.5.12"))
    clock = FakeClock()
    controller = NamespaceController(hub.state, clock=clock)
    await controller.start()
    try:
        await hub.store.delete(namespaces, name="team", ctx=ctx, options=DeleteOptions())
        await clock.settle(100)
        clock.advance(RECHECK_SECONDS)  # it looks again once the content is gone
        await clock.settle(100)
        with pytest.raises(status.ApiError):
            await hub.store.get(namespaces, namespace="", name="team")
    finally:
        await controller.loop.stop()
    await hub.create("c", {**with_ip("10.96.5.12"), **node_port(30084)})
    await hub.create("d", with_ip("10.96.5.13"))


async def test_a_restarted_allocator_knows_the_stored_services() -> None:
    disk = memory.MemoryDisk()
    first = await start_hub(disk, seed=7)
    made = await first.create("a", {"type": "NodePort", "ports": [{"port": 80}]})
    await first.create("b", with_ip("10.96.5.14"))
    await first.backend.close()
    # Same disk, same random choices: what the first run picked is known to be taken.
    second = await start_hub(disk, seed=7)
    try:
        assert second.lists == ["/registry/core/services/"]
        assert second.allocator.allocated == (2, 1)
        again = await second.create("c", {"type": "NodePort", "ports": [{"port": 80}]})
        assert again["spec"]["clusterIP"] != made["spec"]["clusterIP"]
        assert again["spec"]["ports"][0]["nodePort"] != made["spec"]["ports"][0]["nodePort"]
        assert taken_ip("10.96.5.14") in await second.refused("d", with_ip("10.96.5.14"))
        await second.delete("b")
        await second.create("d", with_ip("10.96.5.14"))
    finally:
        await second.backend.close()


async def test_commits_while_starting_are_not_missed() -> None:
    backend = memory.new_backend()
    await backend.start()
    state, chain = assemble(backend)
    info = state.catalog.get("", "v1", "services")
    assert info is not None
    ctx = Context(user=ADMIN, namespace="default")

    def service(name: str, ip: str) -> Obj:
        return {"metadata": {"name": name}, "spec": with_ip(ip)}

    await state.store.create(info, service("old", "10.96.6.1"), ctx)
    real_list = backend.list

    async def list_then_write(prefix: str, *, revision: int = 0) -> Any:
        snapshot = await real_list(prefix, revision=revision)
        await state.store.delete(info, name="old", ctx=ctx, options=DeleteOptions())
        await state.store.create(info, service("new", "10.96.6.2"), ctx)
        return snapshot

    backend.list = list_then_write  # type: ignore[method-assign]
    allocator = ServiceIPs(state)
    await allocator.start()
    chain.add(allocator)
    try:
        assert allocator.allocated == (1, 0)
        with pytest.raises(status.ApiError) as refused:
            await state.store.create(info, service("other", "10.96.6.2"), ctx)
        assert taken_ip("10.96.6.2") in refused.value.message
        await state.store.create(info, service("other", "10.96.6.1"), ctx)
    finally:
        await backend.close()
