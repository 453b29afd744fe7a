"""An in-process server state (memory store, built-in kinds, no admission) for the
server's own controllers, driven in virtual time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, cast

import pytest_asyncio

from pyocm.apiserver.admission.chain import Chain
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.registry.builtin import builtin_resources
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage import memory

ADMIN = UserInfo(name="admin", groups=(MASTERS,))


def ctx(namespace: str = "") -> Context:
    return Context(user=ADMIN, namespace=namespace)


def configmaps(state: ServerState) -> ResourceInfo:
    info = state.catalog.get("", "v1", "configmaps")
    assert info is not None
    return info


def configmap(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", **meta},
    }


@pytest_asyncio.fixture
async def state() -> AsyncIterator[ServerState]:
    """What the controllers read of a ServerState: its store and its catalog."""
    backend = memory.new_backend()
    await backend.start()
    catalog = Catalog()
    for info in builtin_resources():
        catalog.add(info)
    store = Store(backend=backend, admission=Chain())
    yield cast(ServerState, SimpleNamespace(store=store, catalog=catalog))
    await backend.close()
