"""Cluster IPs and node ports with several API servers on one store: each server's
allocator knows the stored Services (commit hooks see every server's writes) but not
the others' writes in flight, so it claims each value in storage first.

Two allocators, each with a Store of its own over one memory backend (as two replicas
over one etcd), seeded alike so that both pick the same values first."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
import pytest

from pyocm.apiserver import serviceclaims
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.serviceips import ServiceIPs
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage import memory
from pyocm.apiserver.storage.logstructured import LogStructured
from pyocm.kube import status
from tests.unit.registry.test_serviceips import assemble

Obj = dict[str, Any]
ADMIN = UserInfo(name="admin", groups=(MASTERS,))


async def replica(backend: LogStructured, *, shared: bool) -> ServerState:
    state, chain = assemble(backend)
    allocator = ServiceIPs(state, rng=random.Random(7), shared=shared)
    await allocator.start()
    chain.add(allocator)
    return state


async def create(state: ServerState, name: str, spec: Obj) -> Obj:
    info = state.catalog.get("", "v1", "services")
    assert info is not None
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}
    return await state.store.create(info, body, Context(user=ADMIN, namespace="default"))


async def replicas(*, shared: bool) -> tuple[LogStructured, ServerState, ServerState]:
    """Two servers over one backend whose Service writes take a while, as etcd's do, so
    writes through both are in flight at once."""
    backend = memory.new_backend(disk=memory.MemoryDisk())
    await backend.start()
    real_create = backend.create

    async def slow_create(key: str, value: bytes) -> Any:
        if key.startswith("/registry/core/services/"):
            await asyncio.sleep(0.02)
        return await real_create(key, value)

    backend.create = slow_create  # type: ignore[method-assign]
    return backend, await replica(backend, shared=shared), await replica(backend, shared=shared)


def values(services: list[Obj]) -> tuple[list[str], list[int]]:
    ips = [s["spec"]["clusterIP"] for s in services]
    ports = [p["nodePort"] for s in services for p in s["spec"]["ports"]]
    return ips, ports


NODE_PORT = {"type": "NodePort", "ports": [{"port": 80}]}


async def concurrent_creates(one: ServerState, two: ServerState, count: int) -> list[Obj]:
    return list(
        await asyncio.gather(
            *(create(one if i % 2 else two, f"s{i}", dict(NODE_PORT)) for i in range(count))
        )
    )


async def test_concurrent_creates_through_two_servers_get_distinct_values() -> None:
    backend, one, two = await replicas(shared=True)
    try:
        ips, ports = values(await concurrent_creates(one, two, 20))
        assert len(set(ips)) == 20
        assert len(set(ports)) == 20
        # Every claim is dropped once its write has ended: stored Services hold the values.
        for _ in range(50):
            _, left = await backend.list("/registry/ranges/")
            if not left:
                break
            await asyncio.sleep(0.01)
        assert left == []
    finally:
        await backend.close()


async def test_without_claims_two_servers_give_the_same_values() -> None:
    """What the claims prevent: alike picks, not yet stored, are given twice."""
    backend, one, two = await replicas(shared=False)
    try:
        ips, ports = values(await concurrent_creates(one, two, 20))
        assert len(set(ips)) < 20
        assert len(set(ports)) < 20
    finally:
        await backend.close()


async def test_a_value_claimed_by_another_server_s_write_is_refused_when_asked_for() -> None:
    backend, one, _ = await replicas(shared=True)
    try:
        claimed = serviceclaims.Claimed()
        assert await serviceclaims.Claims(backend).claim(
            serviceclaims.ip_key("10.96.0.50"), claimed
        )
        with pytest.raises(status.ApiError) as refused:
            await create(one, "asks", {"clusterIP": "10.96.0.50", "ports": [{"port": 80}]})
        assert "provided IP is already allocated" in refused.value.message
        picked = await create(one, "picks", {"ports": [{"port": 80}]})
        assert picked["spec"]["clusterIP"] != "10.96.0.50"
    finally:
        await backend.close()


async def test_an_expired_claim_of_a_server_that_died_is_taken_over() -> None:
    backend, one, _ = await replicas(shared=True)
    try:
        stale = orjson.dumps({"expires": 1.0})  # long past
        await backend.create(serviceclaims.ip_key("10.96.0.60"), stale)
        created = await create(one, "takes", {"clusterIP": "10.96.0.60", "ports": [{"port": 80}]})
        assert created["spec"]["clusterIP"] == "10.96.0.60"
    finally:
        await backend.close()
