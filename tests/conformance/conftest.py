"""Fixtures that open every storage backend the same way, for the conformance suite."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pyocm.apiserver.storage import backends, memory
from pyocm.apiserver.storage.interface import Backend
from tests.etcd import EtcdServer, etcd_server

__all__ = ["etcd_server"]  # a fixture: the etcd param's one etcd per session

#: Opens (and starts) a store; every call opens the same location again, which is how
#: the suite simulates a restart.
OpenStore = Callable[..., Awaitable[Backend]]


@pytest.fixture(params=["memory", "sqlite", "etcd"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenStore]:
    disk = memory.MemoryDisk()
    opened: list[Backend] = []
    # etcd: the session's one server, started only when an etcd test runs; each test
    # has its own key prefix, which a restart opens again.
    etcd: EtcdServer | None = (
        request.getfixturevalue("etcd_server") if request.param == "etcd" else None
    )
    prefix = f"/conformance-{uuid.uuid4().hex}"

    async def open_(**options: Any) -> Backend:
        if request.param == "memory":
            store = backends.open_backend("memory://", disk=disk, **options)
        elif etcd is not None:
            store = backends.open_backend(etcd.url, etcd_prefix=prefix, **options)
        else:
            store = backends.open_backend(f"sqlite://{tmp_path / 'state.db'}", **options)
        await store.start()
        opened.append(store)
        return store

    yield open_
    for store in opened:
        await store.close()


@pytest.fixture
async def backend(open_store: OpenStore) -> Backend:
    return await open_store()
