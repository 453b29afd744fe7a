"""An embedded managed cluster: a Kubernetes API server in this process, with what a
registration agent reads from a real cluster.

It is pyocm's own API server (SQLite in its own data directory, its own CA, TLS on a
free loopback port) plus the ClusterClaim CRD and Nodes whose capacity the agent sums
into the ManagedCluster's status. Nothing runs workloads on it: it is the smallest
honest stand-in for a cluster, so ``pyocm join`` and ``pyocm up`` need no Kubernetes.

With ``simulate_workloads`` (the default) it also runs
:class:`~pyocm.local.workloads.SimulatedWorkloads`, which gives Deployments, Jobs, Pods
and the like the status a healthy cluster would (a simulation, in the spirit of kwok:
no container runs), and publishes the ClusterClaim ``workloads.pyocm.io: simulated`` so
the hub can tell.
"""

from __future__ import annotations

import asyncio
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyocm.apiserver.config import ServerConfig
from pyocm.apiserver.server import HubServer
from pyocm.kube import kinds, quantity
from pyocm.kube.status import ApiError
from pyocm.local import crdinstall, workloads
from pyocm.runtime.client import Api

Obj = dict[str, Any]


@dataclass(frozen=True)
class NodeShape:
    """What one node reports; allocatable is capacity minus a small system reserve."""

    cpu: str = "4"
    memory: str = "16Gi"
    pods: str = "110"
    reserved_cpu: str = "100m"
    reserved_memory: str = "512Mi"


class EmbeddedCluster:
    """Start with :meth:`start`, stop with :meth:`stop`; :attr:`kubeconfig` is its admin."""

    def __init__(
        self,
        *,
        name: str,
        data_dir: Path,
        nodes: int = 1,
        shape: NodeShape = NodeShape(),
        kube_version: str = "v1.30.0",
        simulate_workloads: bool = True,
    ) -> None:
        if nodes < 1:
            raise ValueError("an embedded cluster needs at least one node")
        self.name = name
        self.nodes = nodes
        self.shape = shape
        self.simulate_workloads = simulate_workloads
        config = ServerConfig(
            data_dir=data_dir, host="127.0.0.1", port=0, kube_version=kube_version
        )
        self._server = HubServer(config)
        self._api: Api | None = None
        self._simulation: asyncio.Task[None] | None = None

    @property
    def kubeconfig(self) -> Path:
        return self._server.config.admin_kubeconfig

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def api(self) -> Api:
        if self._api is None:
            raise RuntimeError(f"embedded cluster {self.name} is not running")
        return self._api

    async def start(self) -> None:
        await self._server.start()
        try:
            self._api = Api.from_kubeconfig(self.kubeconfig)
            await crdinstall.install(
                self._api, crdinstall.ocm_crds(only=[crdinstall.CLUSTER_CLAIMS])
            )
            for index in range(self.nodes):
                await self._ensure_node(f"{self.name}-node-{index}")
            await workloads.label_cluster(self._api, simulated=self.simulate_workloads)
            if self.simulate_workloads:
                self._simulation = asyncio.create_task(
                    workloads.SimulatedWorkloads(self._api).run(),
                    name=f"simulated workloads of {self.name}",
                )
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        if self._simulation is not None:
            self._simulation.cancel()
            await asyncio.gather(self._simulation, return_exceptions=True)
            self._simulation = None
        if self._api is not None:
            await self._api.close()
            self._api = None
        await self._server.stop()

    async def _ensure_node(self, name: str) -> None:
        wanted = node(name, shape=self.shape, kubelet_version=self._server.config.kube_version)
        try:
            current = await self.api.get(kinds.NODE, name)
        except ApiError as err:
            if err.code != 404:
                raise
            current = await self.api.create(
                kinds.NODE, {key: value for key, value in wanted.items() if key != "status"}
            )
        if current.get("status") != wanted["status"]:
            await self.api.update(
                kinds.NODE, {**current, "status": wanted["status"]}, subresource="status"
            )


def node(name: str, *, shape: NodeShape, kubelet_version: str) -> Obj:
    """A Ready node as a kubelet would register it."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": _arch(),
                "node-role.kubernetes.io/control-plane": "",
            },
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": shape.cpu, "memory": shape.memory, "pods": shape.pods},
            "allocatable": {
                "cpu": _minus(shape.cpu, shape.reserved_cpu),
                "memory": _minus(shape.memory, shape.reserved_memory),
                "pods": shape.pods,
            },
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": "127.0.0.1"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": kubelet_version,
                "operatingSystem": "linux",
                "architecture": _arch(),
                "osImage": "pyocm embedded cluster",
                "containerRuntimeVersion": "",
                "kernelVersion": platform.release(),
            },
        },
    }


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def _minus(total: str, reserved: str) -> str:
    """``16Gi`` minus ``512Mi`` is ``15872Mi``, printed as Kubernetes prints quantities."""
    amount = quantity.parse_quantity(total)
    return str(amount + quantity.Quantity(-quantity.parse_quantity(reserved).value, amount.format))
