"""Fixtures that open every storage backend the same way, for the conformance suite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pyocm.apiserver.storage import backends, memory
from pyocm.apiserver.storage.interface import Backend

#: Opens (and starts) a store; every call opens the same location again, which is how
#: the suite simulates a restart.
OpenStore = Callable[..., Awaitable[Backend]]


@pytest.fixture(params=[pytest.param("memory", id="memory"), pytest.param("sqlite", id="sqlite")])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenStore]:
    disk = memory.MemoryDisk()
    opened: list[Backend] = []

    async def open_(**options: Any) -> Backend:
        if request.param == "memory":
            store = backends.open_backend("memory://", disk=disk, **options)
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
