"""The helloworld add-on's agent against a real API server: it copies its cluster's
ConfigMaps from the hub to its namespace on the managed cluster and renews its Lease.
One API server plays both sides here (the hub's cluster namespace, the managed
cluster's add-on namespace); the registration tests give it its issued credential."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio

from pyocm.addon.helloworld.agent import SYNCED_LABEL, AgentOptions, HelloworldAgent
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from tests.support import eventually


@pytest_asyncio.fixture
async def agent(api: Api, unique: str) -> AsyncIterator[AgentOptions]:
    options = AgentOptions(cluster=unique, namespace=f"{unique}-agent", lease_duration=1)
    for namespace in (options.cluster, options.namespace):
        await api.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    running = asyncio.create_task(HelloworldAgent(hub=api, spoke=api, options=options).run())
    yield options
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


async def test_configmaps_follow_the_hub(api: Api, agent: AgentOptions) -> None:
    body = {"metadata": {"name": "greeting", "namespace": agent.cluster}, "data": {"a": "1"}}
    await api.create(kinds.CONFIGMAP, body)

    async def copied() -> dict[str, str] | None:
        found = await api.get(kinds.CONFIGMAP, "greeting", namespace=agent.namespace)
        assert found["metadata"]["labels"] == {SYNCED_LABEL: ""}
        return found.get("data")

    assert await eventually(copied) == {"a": "1"}
    await api.patch(kinds.CONFIGMAP, "greeting", {"data": {"a": "2"}}, namespace=agent.cluster)

    async def updated() -> bool:
        return await copied() == {"a": "2"}

    await eventually(updated)


async def test_the_lease_is_renewed(api: Api, agent: AgentOptions) -> None:
    async def renewed_at() -> str:
        lease = await api.get(kinds.LEASE, "helloworld", namespace=agent.namespace)
        assert lease["spec"]["leaseDurationSeconds"] == 1
        return str(lease["spec"]["renewTime"])

    first = await eventually(renewed_at)

    async def renewed_again() -> bool:
        return await renewed_at() != first

    await eventually(renewed_again)
