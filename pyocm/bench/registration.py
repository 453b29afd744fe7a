"""How fast clusters join: accept → Available, and agent start → Joined with auto-approval.

Everything runs in one process over loopback TLS (hub, embedded managed clusters and
agents share one event loop and one core), so the figures are an upper bound for a
hub that has a core to itself.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyocm import hubmanager
from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.apiserver.config import ServerConfig
from pyocm.apiserver.server import HubServer
from pyocm.bench.stats import latencies
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.local import crdinstall
from pyocm.local.embedded import EmbeddedCluster
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.managed import KubeManagedSide
from pyocm.registration.hub.accept import accept_cluster
from pyocm.registration.hub.manager import HubOptions
from pyocm.runtime.client import Api

Obj = dict[str, Any]


@dataclass(frozen=True)
class Figures:
    name: str
    seconds: list[float]

    def line(self) -> str:
        return f"{self.name}: {latencies(self.seconds)}"


async def _until(check: Callable[[], Awaitable[bool]], *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.005)


async def _condition(api: Api, name: str, type: str) -> bool:
    try:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
    except ApiError:
        return False
    return conditions.is_true((cluster.get("status") or {}).get("conditions"), type)


async def measure(*, clusters: int, auto: bool, root: Path) -> Figures:
    token = bootstraptoken.generate()
    gates = {"ManagedClusterAutoApproval": True} if auto else {}
    server = HubServer(
        ServerConfig(data_dir=root / "hub", host="127.0.0.1", port=0, sqlite_synchronous="NORMAL")
    )
    await server.start()
    tasks: list[asyncio.Task[Any]] = []
    fleet: list[EmbeddedCluster] = []
    seconds: list[float] = []
    api = Api.from_kubeconfig(server.config.admin_kubeconfig)
    try:
        await crdinstall.install(api, crdinstall.ocm_crds())
        options = HubOptions(
            feature_gates=gates, auto_approved_users=(f"system:bootstrap:{token.id}",)
        )
        tasks.append(asyncio.create_task(hubmanager.build(api, options=options).run()))
        await api.create(kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC)))
        assert server.state is not None
        bootstrap = build_kubeconfig(
            server=server.url, ca_pem=server.state.ca.cert_pem, token=str(token)
        )
        for index in range(clusters):
            name = f"bench{index}"
            cluster = EmbeddedCluster(name=name, data_dir=root / name)
            await cluster.start()
            fleet.append(cluster)
            agent = RegistrationAgent(
                bootstrap=bootstrap,
                managed=KubeManagedSide(cluster.api),
                options=AgentOptions(cluster_name=name, poll=0.05),
            )
            if auto:
                start = time.monotonic()
                tasks.append(asyncio.create_task(agent.run()))
                await _until(_checker(api, name, wellknown.CLUSTER_JOINED))
            else:
                tasks.append(asyncio.create_task(agent.run()))
                await _until(_pending_checker(api, name))
                start = time.monotonic()
                await accept_cluster(api, name, wait=True)
                await _until(_checker(api, name, wellknown.CLUSTER_AVAILABLE))
            seconds.append(time.monotonic() - start)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await api.close()
        for cluster in fleet:
            await cluster.stop()
        await server.stop()
    label = "agent start -> Joined (auto-approval)" if auto else "accept -> Available"
    return Figures(label, seconds)


def _checker(api: Api, name: str, type: str) -> Callable[[], Awaitable[bool]]:
    return lambda: _condition(api, name, type)


def _pending_checker(api: Api, name: str) -> Callable[[], Awaitable[bool]]:
    return lambda: _has_pending_csr(api, name)


async def _has_pending_csr(api: Api, name: str) -> bool:
    listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
    return any(not (c.get("status") or {}).get("conditions") for c in listed.get("items") or [])


async def run(*, clusters: int = 10) -> list[str]:
    lines = []
    for auto in (False, True):
        with tempfile.TemporaryDirectory(prefix="pyocm-bench-") as folder:
            lines.append((await measure(clusters=clusters, auto=auto, root=Path(folder))).line())
    return lines
