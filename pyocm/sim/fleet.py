"""Many simulated clusters joining and living against one hub.

Each cluster is a :class:`Klusterlet`: a :class:`RegistrationAgent` over a
:class:`MemoryCluster` and, unless turned off, the real work agent over a
:class:`MemorySpoke` (the cluster's objects in memory, workload status simulated). It
joins with the fleet's bootstrap token, asks for its certificate by CSR, and once
accepted reports status, renews its lease and applies its ManifestWorks on its own
connections, exactly as a real agent. Its agent's add-on side is the real one too
(:mod:`pyocm.sim.addons`): a CSR per add-on registration, the Secrets written into the
cluster's memory, health from the add-on Leases; the add-on agents that renew those
Leases are simulated, once their Secret exists.
The fleet starts agents at a steady rate, can accept clusters as they ask (what a hub
admin, or ``pyocm accept``, does), and can take clusters away and bring them back.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.klusterlet.agent import Klusterlet
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.hub.accept import AcceptError, accept_cluster
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.sim.addons import MemoryAddOnHost
from pyocm.sim.memory import ClusterShape, MemoryCluster
from pyocm.sim.memoryspoke import MemorySpoke, simulated_workloads
from pyocm.work.agent.options import WorkAgentOptions

log = logging.getLogger(__name__)
ACCEPT_WORKERS = 16


@dataclass(frozen=True)
class FleetOptions:
    clusters: int
    prefix: str = "sim-"
    #: Agents started per second.
    join_rate: float = 20.0
    #: Accept each cluster as soon as its agent asks.
    auto_accept: bool = False
    #: leaseDurationSeconds set on each cluster when it is accepted (60: the default).
    lease_seconds: int = 60
    healthcheck_period: float = 60.0
    #: Clusters per minute that go away for ``churn_downtime`` seconds, then come back.
    churn: float = 0.0
    churn_downtime: float = 30.0
    shape: ClusterShape = field(default_factory=ClusterShape)
    #: Run the work agent beside registration (klusterlet's default); None: registration only.
    work: WorkAgentOptions | None = field(default_factory=lambda: WorkAgentOptions(workers=1))
    #: The agent's add-on side (registration, Lease health): upstream's periods by default.
    addons: AddOnOptions = field(default_factory=AddOnOptions)
    #: Start a simulated add-on agent (Lease renewals only) for each add-on registered.
    addon_agents: bool = True

    def __post_init__(self) -> None:
        if self.clusters < 1:
            raise ValueError("--clusters must be at least 1")
        if self.join_rate <= 0:
            raise ValueError("--join-rate must be positive")
        if self.lease_seconds < 1:
            raise ValueError("--lease-duration must be at least 1 second")
        if self.churn < 0 or self.churn_downtime < 0:
            raise ValueError("--churn and --churn-downtime must not be negative")


@dataclass
class Member:
    name: str
    cluster: MemoryCluster
    #: The cluster's objects, kept across the agent's restarts (churn).
    spoke: MemorySpoke
    #: The add-on registration's namespaces, Secrets and Leases (in ``spoke``), and the
    #: simulated add-on agents: kept across the agent's restarts, as the cluster is.
    addons: MemoryAddOnHost
    state: str = "not started"
    started: float = 0.0
    available_after: float | None = None
    agent: RegistrationAgent | None = None
    task: asyncio.Task[Any] | None = None


class Fleet:
    """Run with :meth:`run` (until cancelled); read progress from :meth:`counts`."""

    def __init__(
        self,
        admin: Api,
        *,
        server: str,
        ca_pem: bytes | None,
        options: FleetOptions,
        on_change: Callable[[Member], None] | None = None,
    ) -> None:
        self.admin = admin
        self.server = server
        self.ca_pem = ca_pem
        self.options = options
        self.on_change = on_change
        self.members = [self._member(f"{options.prefix}{i + 1}") for i in range(options.clusters)]
        self._to_accept: asyncio.Queue[Member] = asyncio.Queue()
        self._bootstrap: dict[str, Any] = {}
        self._returns: set[asyncio.TimerHandle] = set()
        self._storm: float | None = None
        self._storm_members: list[Member] = []

    def _member(self, name: str) -> Member:
        spoke = MemorySpoke(
            served=[ocm.APPLIED_MANIFEST_WORK],
            status_for=simulated_workloads(nodes=self.options.shape.nodes),
        )
        return Member(
            name,
            MemoryCluster(shape=self.options.shape),
            spoke,
            MemoryAddOnHost(spoke, agents=self.options.addon_agents),
        )

    def counts(self) -> Counter[str]:
        """How many clusters are in each state (the agent's words, without details)."""
        return Counter(m.state.split(" (")[0].split(":")[0] for m in self.members)

    def addon_agents(self) -> int:
        """How many simulated add-on agents are running (one per add-on per cluster whose
        kubeClient Secret is written)."""
        return sum(len(m.addons.agents) for m in self.members)

    def addon_leases(self) -> int:
        """How many add-on Leases the simulated agents have written at least once."""
        return sum(1 for m in self.members for agent in m.addons.agents.values() if agent.renewals)

    def deployment_labels(self) -> Counter[str]:
        """The Deployments the work agents applied, by ``"<name> <label>=<value>"``
        (one count per label of each), over every cluster's memory."""
        found: Counter[str] = Counter()
        for member in self.members:
            for deployment in member.spoke.peek(kinds.DEPLOYMENT):
                meta = deployment["metadata"]
                labels = meta.get("labels") or {}
                found.update(f"{meta['name']} {key}={value}" for key, value in labels.items())
        return found

    def join_seconds(self) -> list[float]:
        return sorted(m.available_after for m in self.members if m.available_after is not None)

    @property
    def rotating(self) -> int:
        """How many agents the last :meth:`rotate` asked to renew."""
        return len(self._storm_members)

    def rotate(self) -> None:
        """Make every running agent renew its certificate now (a rotation storm)."""
        self._storm = time.monotonic()
        self._storm_members = [
            m for m in self.members if m.agent is not None and m.task and not m.task.done()
        ]
        for member in self._storm_members:
            assert member.agent is not None
            member.agent.rotate_now()

    def rotation_seconds(self) -> list[float]:
        """Seconds from the last :meth:`rotate` to each renewed credential being stored."""
        if self._storm is None:
            return []
        saved = (
            m.cluster.saved_at.get(m.agent.options.hub_kubeconfig_secret, 0.0)
            for m in self._storm_members
            if m.agent is not None
        )
        return sorted(at - self._storm for at in saved if at > self._storm)

    async def run(self) -> None:
        token = bootstraptoken.generate()
        await self.admin.create(
            kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC))
        )
        self._bootstrap = build_kubeconfig(server=self.server, ca_pem=self.ca_pem, token=str(token))
        helpers = []
        if self.options.auto_accept:
            helpers += [asyncio.create_task(self._accept()) for _ in range(ACCEPT_WORKERS)]
        if self.options.churn:
            helpers.append(asyncio.create_task(self._churn()))
        try:
            for member in self.members:
                self._start(member)
                await asyncio.sleep(1 / self.options.join_rate)
            await asyncio.Event().wait()
        finally:
            for handle in self._returns:
                handle.cancel()
            running = [m.task for m in self.members if m.task is not None] + helpers
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            for member in self.members:
                await member.addons.close()

    def _start(self, member: Member) -> None:
        member.started = time.monotonic()
        member.available_after = None
        agent = RegistrationAgent(
            bootstrap=self._bootstrap,
            managed=member.cluster,
            options=AgentOptions(
                cluster_name=member.name,
                healthcheck_period=self.options.healthcheck_period,
                poll=1.0,
                addons=self.options.addons,
            ),
            on_state=lambda state: self._changed(member, state),
            addon_host=member.addons,
        )
        member.agent = agent
        klusterlet = Klusterlet(agent, member.spoke, work=self.options.work)
        member.task = asyncio.create_task(klusterlet.run(), name=f"agent {member.name}")

    def _changed(self, member: Member, state: str) -> None:
        member.state = state
        if state.startswith("waiting for the hub admin") and self.options.auto_accept:
            self._to_accept.put_nowait(member)
        if state == "available" and member.available_after is None:
            member.available_after = time.monotonic() - member.started
        if self.on_change is not None:
            self.on_change(member)

    async def _accept(self) -> None:
        while True:
            member = await self._to_accept.get()
            spec: dict[str, Any] = {"hubAcceptsClient": True}
            if self.options.lease_seconds != 60:
                spec["leaseDurationSeconds"] = self.options.lease_seconds
            try:
                await accept_cluster(self.admin, member.name, wait=True, timeout=30)
                if len(spec) > 1:
                    await self.admin.patch(ocm.MANAGED_CLUSTER, member.name, {"spec": spec})
            except (AcceptError, ApiError, ApiConnectionError) as err:
                log.warning("sim: accepting %s: %s", member.name, err)

    async def _churn(self) -> None:
        """Take a random running cluster away and bring it back after the downtime."""
        interval = 60.0 / self.options.churn
        while True:
            await asyncio.sleep(interval)
            running = [m for m in self.members if m.task is not None and not m.task.done()]
            if not running:
                continue
            member = random.choice(running)
            assert member.task is not None
            member.task.cancel()
            # gather, not suppress: a cancellation of the fleet itself must propagate.
            await asyncio.gather(member.task, return_exceptions=True)
            self._changed(member, "away (churn)")
            handle = asyncio.get_running_loop().call_later(
                self.options.churn_downtime, self._start, member
            )
            self._returns.add(handle)
