"""Shared fixtures: one real hub process per test session (per xdist worker), and
clients for it. Tests use unique object names so they never depend on each other."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from pyocm.runtime.client import Api
from pyocm.testing import Client, HubProcess

_counter = itertools.count()


def hub_process(
    factory: pytest.TempPathFactory, name: str, args: list[str]
) -> Iterator[HubProcess]:
    """A hub process with ``args`` in a fresh directory, for a fixture to yield from;
    stopped cleanly (its log shown if not) when the fixture ends."""
    process = HubProcess(factory.mktemp(name), extra_args=args)
    process.start()
    yield process
    code = process.stop()
    assert code == 0, f"hub exited with {code}:\n{process.log()[-4000:]}"


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """The API server alone (``--no-controllers``): nothing but the test writes objects.
    Bookmarks come every 3 s, so tests of quiet watches do not wait a minute."""
    yield from hub_process(
        tmp_path_factory, "hub", ["--no-controllers", "--watch-bookmark-interval", "3"]
    )


@pytest.fixture(scope="session")
def ocm_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A whole hub: the API server with its registration controllers."""
    yield from hub_process(tmp_path_factory, "ocm-hub", [])


@pytest_asyncio.fixture
async def api(hub: HubProcess) -> AsyncIterator[Api]:
    """The runtime client as the hub's admin (whichever hub the test module uses)."""
    async with Api.from_kubeconfig(hub.kubeconfig) as client:
        yield client


@pytest_asyncio.fixture
async def admin(hub: HubProcess) -> AsyncIterator[Client]:
    async with Client(hub.kubeconfig) as client:
        yield client


@pytest.fixture
def unique() -> str:
    """A name no other test in this session uses."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    return f"t{worker.replace('gw', '')}-{next(_counter)}-{os.getpid() % 1000}"


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
