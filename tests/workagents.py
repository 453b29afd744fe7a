"""Helpers for tests that run the work agent for real: a hub process, an embedded
managed cluster joined by the klusterlet (registration, then the work agent with the
credential registration got), and ManifestWorks written and read as a hub user would."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.base import metrics
from pyocm.base.clock import RealClock
from pyocm.klusterlet.agent import Klusterlet
from pyocm.local.embedded import EmbeddedCluster
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.managed import KubeManagedSide
from pyocm.runtime.client import Api
from pyocm.runtime.retry import retry_on_conflict
from pyocm.testing import HubProcess
from pyocm.work.agent.options import WorkAgentOptions, hub_hash
from tests.agents import accept, available, bootstrap_kubeconfig
from tests.support import eventually

Obj = dict[str, Any]
#: Short enough for tests to see status sync and resync happen.
FAST = WorkAgentOptions(status_sync_interval=0.5, resync_interval=1.0)


@contextlib.asynccontextmanager
async def joined(
    api: Api,
    hub: HubProcess,
    tmp_path: Path,
    name: str,
    *,
    work: WorkAgentOptions | None = FAST,
) -> AsyncIterator[tuple[EmbeddedCluster, Klusterlet]]:
    """An embedded cluster ``name`` joined to ``hub`` by a klusterlet, accepted and
    Available; the klusterlet runs the work agent with ``work``."""
    managed = EmbeddedCluster(name=name, data_dir=tmp_path / name)
    await managed.start()
    try:
        async with running_klusterlet(api, hub, managed, name, work=work) as klusterlet:
            yield managed, klusterlet
    finally:
        await managed.stop()


@contextlib.asynccontextmanager
async def running_klusterlet(
    api: Api,
    hub: HubProcess,
    managed: EmbeddedCluster,
    name: str,
    *,
    work: WorkAgentOptions | None = FAST,
    accept_it: bool = True,
) -> AsyncIterator[Klusterlet]:
    registration = RegistrationAgent(
        bootstrap=await bootstrap_kubeconfig(api, hub),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(cluster_name=name, poll=0.1, healthcheck_period=2),
    )
    klusterlet = Klusterlet.for_cluster(registration, managed.api, work=work, poll=0.1)
    task = asyncio.create_task(klusterlet.run())
    try:
        if accept_it:
            await accept(api, name)
            await eventually(lambda: available(api, name))
        yield klusterlet
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def work_hash(hub: HubProcess) -> str:
    return hub_hash(hub.url)


def manifest_work(name: str, cluster: str, *manifests: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {"workload": {"manifests": list(manifests)}, **spec},
    }


def configmap(name: str, namespace: str = "default", **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def condition(obj: Obj, type: str) -> Obj:
    return conditions.find(conditions.of(obj), type) or {}


def manifest_conditions(work: Obj) -> list[dict[str, str]]:
    """Each manifest's conditions as {type: status}, in status order."""
    manifests = ((work.get("status") or {}).get("resourceStatus") or {}).get("manifests") or []
    return [{c["type"]: c["status"] for c in m.get("conditions") or []} for m in manifests]


async def work_with(api: Api, cluster: str, name: str, **statuses: str) -> Obj | None:
    """The work once its conditions have the given statuses (Applied="True", ...) at its
    current generation, else None."""
    work = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
    generation = work["metadata"].get("generation")
    for type, status in statuses.items():
        found = condition(work, type)
        if found.get("status") != status or found.get("observedGeneration") != generation:
            return None
    return work


async def reconciled(times: int, *, controller: str = "ManifestWorkController") -> None:
    """Wait until ``controller`` has reconciled ``times`` more times (in this process:
    the work agents a test runs), so a test can assert that something did not happen."""
    stats = metrics.reconcile_stats(controller)
    start = sum(stats.results.values())

    async def done() -> bool:
        return sum(stats.results.values()) >= start + times

    await eventually(done)


async def update_spec(api: Api, cluster: str, name: str, **spec: Any) -> Obj:
    """Change the work's spec as a user would, reading it again when the agent's
    status write came between the read and the write (a 409)."""

    async def write() -> Obj:
        work = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
        work["spec"].update(spec)
        return await api.update(ocm.MANIFEST_WORK, work)

    return await retry_on_conflict(write, clock=RealClock())
