"""The helloworld agent: what runs on a managed cluster for the helloworld add-on
(upstream's ``examples/helloworld/agent``).

* Every ConfigMap in the cluster's namespace on the hub is applied, data and all, to the
  add-on's namespace on the managed cluster, labelled ``synced-from-hub``; a ConfigMap
  deleted on the hub is left on the cluster, as upstream's agent leaves it.
* The add-on's Lease (named after the add-on, in its namespace on the managed cluster) is
  renewed every ``lease_duration`` seconds (60, jittered by up to a quarter, as the
  framework's lease updater), so the registration agent reports the add-on Available.

The hub client is built from the kubeconfig the add-on's registration issued (the
``<addon>-hub-kubeconfig`` Secret's ``kubeconfig``); with it the agent may only do what
the add-on's hub permissions grant.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyocm.addon.secretvolume import SecretVolume, run_with_secret
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.kube.timefmt import format_micro
from pyocm.registration.agent.addons.config import hub_kubeconfig_secret
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Controller
from pyocm.runtime.informer import Informer

from . import ADDON_NAME

SYNCED_LABEL = "synced-from-hub"
LEASE_DURATION = 60
JITTER = 0.25


@dataclass(frozen=True)
class AgentOptions:
    """``--cluster-name``, ``--addon-namespace``; the add-on's name."""

    cluster: str
    namespace: str
    addon: str = ADDON_NAME
    lease_duration: int = LEASE_DURATION


class HelloworldAgent:
    def __init__(
        self, *, hub: Api, spoke: Api, options: AgentOptions, clock: Clock | None = None
    ) -> None:
        self.hub, self.spoke, self.options = hub, spoke, options
        self.clock = clock or RealClock()
        self.configmaps = Informer(
            hub, kinds.CONFIGMAP, namespace=options.cluster, clock=self.clock
        )
        self.controller = Controller("helloworld-agent", self.sync, clock=self.clock)
        self.controller.watch(self.configmaps)

    async def run(self) -> None:
        """Sync ConfigMaps and renew the Lease until cancelled."""
        tasks = [
            asyncio.create_task(self.configmaps.run(), name="helloworld configmaps"),
            asyncio.create_task(self.controller.run(), name="helloworld sync"),
            asyncio.create_task(self.renew_forever(), name="helloworld lease"),
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def sync(self, key: str) -> None:
        found = self.configmaps.store.get(key)
        if found is None:
            return
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": found["metadata"]["name"],
                "namespace": self.options.namespace,
                "labels": {SYNCED_LABEL: ""},
            },
            "data": found.get("data") or {},
        }
        await self.spoke.apply(kinds.CONFIGMAP, body, field_manager="helloworld-agent", force=True)

    async def renew_forever(self) -> None:
        period = self.options.lease_duration
        while True:
            await self.renew()
            await self.clock.sleep(period * (1 + random.uniform(0, JITTER)))

    async def renew(self) -> None:
        """Create or renew the add-on's Lease on the managed cluster."""
        name, namespace = self.options.addon, self.options.namespace
        now = format_micro(self.clock.now())
        try:
            lease = await self.spoke.get(kinds.LEASE, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            spec = {"leaseDurationSeconds": self.options.lease_duration, "renewTime": now}
            body = {"metadata": {"name": name, "namespace": namespace}, "spec": spec}
            await self.spoke.create(kinds.LEASE, body)
            return
        lease.setdefault("spec", {})["renewTime"] = now
        await self.spoke.update(kinds.LEASE, lease)


async def run_with_issued_credential(
    spoke: Api, options: AgentOptions, *, secret: str | None = None
) -> None:
    """Run the agent with the hub credential its registration issued: the Secret
    ``secret`` (default ``<addon>-hub-kubeconfig``) in its namespace on the managed
    cluster, written out as a Secret volume would mount it and followed as it rotates."""
    name = secret or hub_kubeconfig_secret(options.addon)

    async def with_hub(path: Path) -> None:
        async with Api.from_kubeconfig(path / "kubeconfig") as hub:
            await HelloworldAgent(hub=hub, spoke=spoke, options=options).run()

    with tempfile.TemporaryDirectory(prefix=f"pyocm-{options.addon}-hub-") as root:
        volume = SecretVolume(
            spoke, namespace=options.namespace, name=name, directory=Path(root) / name
        )
        await run_with_secret(volume, with_hub)
