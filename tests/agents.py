"""Helpers for tests that run registration agents against a real hub: a bootstrap
credential, the admin's side of a join, and an agent running for the length of a block."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.base.clock import Clock
from pyocm.kube import kinds
from pyocm.local.embedded import EmbeddedCluster
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.managed import AGENT_NAMESPACE, KubeManagedSide
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]


async def bootstrap_kubeconfig(api: Api, hub: HubProcess) -> Obj:
    token = bootstraptoken.generate()
    await api.create(kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC)))
    return build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, token=str(token))


async def approve_pending(api: Api, cluster: str) -> None:
    async def pending() -> list[Obj]:
        listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={cluster}")
        return [c for c in listed["items"] if not (c.get("status") or {}).get("conditions")]

    for csr in await eventually(pending):
        csr.setdefault("status", {})["conditions"] = [
            {
                "type": "Approved",
                "status": "True",
                "reason": "AcceptedByTest",
                "message": "accepted by a test",
            }
        ]
        await api.update(kinds.CSR, csr, subresource="approval")


async def accept(api: Api, cluster: str) -> None:
    """What ``pyocm accept`` does: approve the cluster's pending CSR, then accept it."""
    await approve_pending(api, cluster)
    await api.patch(ocm.MANAGED_CLUSTER, cluster, {"spec": {"hubAcceptsClient": True}})


def condition(cluster: Obj, type: str) -> Obj:
    return conditions.find((cluster.get("status") or {}).get("conditions"), type) or {}


async def available(api: Api, name: str, status: str = "True") -> Obj | None:
    cluster = await api.get(ocm.MANAGED_CLUSTER, name)
    return (
        cluster if condition(cluster, wellknown.CLUSTER_AVAILABLE).get("status") == status else None
    )


@contextlib.asynccontextmanager
async def running_agent(
    api: Api,
    hub: HubProcess,
    managed: EmbeddedCluster,
    name: str,
    *,
    clock: Clock | None = None,
    accept_it: bool = True,
    **options: Any,
) -> AsyncIterator[asyncio.Task[str]]:
    """An agent for cluster ``name``, accepted (unless told not to) and Available."""
    agent = RegistrationAgent(
        bootstrap=await bootstrap_kubeconfig(api, hub),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(
            **{"cluster_name": name, "poll": 0.1, "healthcheck_period": 2, **options}
        ),
        clock=clock,
    )
    task = asyncio.create_task(agent.run())
    try:
        if accept_it:
            await accept(api, name)
            await eventually(lambda: available(api, name))
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def embedded(tmp_path: Path, name: str) -> EmbeddedCluster:
    cluster = EmbeddedCluster(name=name, data_dir=tmp_path / name)
    await cluster.start()
    return cluster


async def agent_api(managed: EmbeddedCluster, secret: str = "hub-kubeconfig-secret") -> Api:
    """A client with the credential the agent stored (its own identity on the hub)."""
    stored = await managed.api.get(kinds.SECRET, secret, namespace=AGENT_NAMESPACE)
    return Api.from_config(yaml.safe_load(base64.b64decode(stored["data"]["kubeconfig"])))
