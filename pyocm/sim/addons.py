"""Add-ons on a simulated cluster: the agent's add-on side over memory, and simulated
add-on agents.

:class:`MemoryAddOnHost` is the registration agent's :class:`~pyocm.registration.agent.
addons.host.AddOnHost` over a cluster's :class:`~pyocm.sim.memoryspoke.MemorySpoke`: the
real add-on registration (its CSRs to the hub, the certificates, the Secrets) writes
its namespaces and Secrets there, and reads the add-on Leases there for health, exactly
as it does through a managed cluster's API.

The add-on agents themselves are **simulated**, as workload status is: nothing runs the
Deployment an add-on's ManifestWork brings. Once an add-on's kubeClient Secret
(``<addon>-hub-kubeconfig``, the credential its Deployment would mount) is in the spoke,
a :class:`SimulatedAddOnAgent` renews the add-on's Lease (named after the add-on, in
the Secret's namespace) every 60 s, jittered by up to a quarter, as the helloworld
agent and addon-framework's lease updater do; it stops when the Secret is deleted. It
does nothing else: it never connects to the hub, so the hub's costs measured with it are
those of managing, registering and watching over add-ons, not of what their agents do.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import random

from pyocm.addon.helloworld.agent import JITTER, LEASE_DURATION
from pyocm.api import models
from pyocm.api.models.coordination_v1 import Lease
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.registration.agent.addons.host import install_namespace
from pyocm.sim.memoryspoke import MemorySpoke

log = logging.getLogger(__name__)
#: A kubeClient registration's Secret is ``<addon>-hub-kubeconfig`` (upstream's name).
KUBECONFIG_SUFFIX = "-hub-kubeconfig"


class MemoryAddOnHost:
    """Install namespaces, Secrets and Leases kept in a simulated cluster's spoke; with
    ``agents``, a simulated add-on agent starts for each add-on whose kubeClient Secret
    is written (:meth:`close` stops them)."""

    def __init__(
        self, spoke: MemorySpoke, *, agents: bool = True, clock: Clock | None = None
    ) -> None:
        self.spoke = spoke
        self.clock = clock or RealClock()
        self._agents_wanted = agents
        #: Running simulated agents by (namespace, add-on).
        self.agents: dict[tuple[str, str], SimulatedAddOnAgent] = {}

    async def ensure_namespace(self, name: str) -> None:
        try:
            await self.spoke.create(kinds.NAMESPACE, models.wire(install_namespace(name)))
        except ApiError as err:
            if err.code != 409:  # 409: it exists already, and is left as it is
                raise

    async def load_secret(self, namespace: str, name: str) -> dict[str, bytes] | None:
        try:
            secret = await self.spoke.get(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        data = secret.get("data") or {}
        return {key: base64.b64decode(value) for key, value in data.items()}

    async def save_secret(self, namespace: str, name: str, data: dict[str, bytes]) -> None:
        encoded = {key: base64.b64encode(value).decode() for key, value in data.items()}
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "type": "Opaque",
            "data": encoded,
        }
        try:
            current = await self.spoke.get(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            await self.spoke.create(kinds.SECRET, body)
        else:
            await self.spoke.update(kinds.SECRET, {**current, "data": encoded})
        self._secret_written(namespace, name)

    async def delete_secret(self, namespace: str, name: str) -> None:
        try:
            await self.spoke.delete(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise
        addon = _addon_of(name)
        if addon is not None:
            agent = self.agents.pop((namespace, addon), None)
            if agent is not None:
                await agent.stop()

    async def lease(self, namespace: str, name: str) -> Lease | None:
        try:
            found = await self.spoke.get(kinds.LEASE, name, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        return models.view(Lease, found)

    async def close(self) -> None:
        """Stop every simulated add-on agent."""
        agents, self.agents = list(self.agents.values()), {}
        for agent in agents:
            await agent.stop()

    def _secret_written(self, namespace: str, name: str) -> None:
        addon = _addon_of(name)
        if not self._agents_wanted or addon is None or (namespace, addon) in self.agents:
            return
        agent = SimulatedAddOnAgent(self.spoke, addon=addon, namespace=namespace, clock=self.clock)
        self.agents[(namespace, addon)] = agent
        agent.start()


def _addon_of(secret: str) -> str | None:
    """The add-on whose kubeClient Secret this is; None for any other Secret."""
    if secret.endswith(KUBECONFIG_SUFFIX) and len(secret) > len(KUBECONFIG_SUFFIX):
        return secret.removesuffix(KUBECONFIG_SUFFIX)
    return None


class SimulatedAddOnAgent:
    """A simulated add-on agent: it renews the add-on's Lease in the spoke, and nothing
    else (see the module's docstring)."""

    def __init__(
        self, spoke: MemorySpoke, *, addon: str, namespace: str, clock: Clock | None = None
    ) -> None:
        self.spoke = spoke
        self.addon = addon
        self.namespace = namespace
        self.clock = clock or RealClock()
        self.renewals = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        name = f"simulated add-on agent {self.namespace}/{self.addon}"
        self._task = asyncio.create_task(self._renew_forever(), name=name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _renew_forever(self) -> None:
        while True:
            try:
                await self.renew()
            except ApiError as err:  # a Conflict or a namespace gone: try next period
                log.warning("sim: add-on %s lease: %s", self.addon, err)
            await self.clock.sleep(LEASE_DURATION * (1 + random.uniform(0, JITTER)))

    async def renew(self) -> None:
        """Create or renew the add-on's Lease."""
        now = timefmt.format_micro(self.clock.now())
        try:
            lease = await self.spoke.get(kinds.LEASE, self.addon, namespace=self.namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            spec = {"leaseDurationSeconds": LEASE_DURATION, "renewTime": now}
            meta = {"name": self.addon, "namespace": self.namespace}
            await self.spoke.create(kinds.LEASE, {"metadata": meta, "spec": spec})
        else:
            lease.setdefault("spec", {})["renewTime"] = now
            await self.spoke.update(kinds.LEASE, lease)
        self.renewals += 1
