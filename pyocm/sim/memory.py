"""A managed cluster kept in memory, answering the agent's :class:`ManagedSide` questions."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class ClusterShape:
    """What a simulated cluster reports: its nodes, version and platform claims."""

    nodes: int = 3
    cpu: str = "8"
    memory: str = "32Gi"
    allocatable_cpu: str = "7800m"
    allocatable_memory: str = "31Gi"
    pods: str = "110"
    kube_version: str = "v1.30.0"
    #: The platform, and that workload status is simulated (the claim an embedded
    #: cluster publishes, shown by ``pyocm get clusters``).
    claims: tuple[tuple[str, str], ...] = (
        ("platform.open-cluster-management.io", "Other"),
        ("workloads.pyocm.io", "simulated"),
    )


@dataclass
class MemoryCluster:
    """One simulated cluster. ``healthy`` can be switched to make its API unavailable."""

    shape: ClusterShape = field(default_factory=ClusterShape)
    healthy: bool = True
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))
    secrets: dict[str, dict[str, bytes]] = field(default_factory=dict)
    identity: dict[str, str] = field(default_factory=dict)
    bootstrap: dict[str, Any] | None = None
    claim_values: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    #: When each secret was last saved (monotonic seconds): the fleet times renewals by it.
    saved_at: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value in self.shape.claims:
            self.claim_values.setdefault(name, value)

    async def load_secret(self, name: str) -> dict[str, bytes]:
        return dict(self.secrets.get(name, {}))

    async def save_secret(self, name: str, data: dict[str, bytes]) -> None:
        self.secrets[name] = dict(data)
        self.saved_at[name] = time.monotonic()

    async def load_identity(self) -> dict[str, str]:
        return dict(self.identity)

    async def save_identity(self, data: dict[str, str]) -> None:
        self.identity = dict(data)

    async def load_bootstrap(self, name: str) -> dict[str, Any] | None:
        return self.bootstrap

    async def cluster_uid(self) -> str:
        return self.uid

    async def version(self) -> str:
        return self.shape.kube_version

    async def nodes(self) -> list[Obj]:
        capacity = {"cpu": self.shape.cpu, "memory": self.shape.memory, "pods": self.shape.pods}
        allocatable = {
            "cpu": self.shape.allocatable_cpu,
            "memory": self.shape.allocatable_memory,
            "pods": self.shape.pods,
        }
        return [
            {
                "metadata": {"name": f"node-{i}"},
                "status": {"capacity": dict(capacity), "allocatable": dict(allocatable)},
            }
            for i in range(self.shape.nodes)
        ]

    async def claims(self) -> list[Obj]:
        return [
            {"metadata": {"name": name}, "spec": {"value": value}}
            for name, value in sorted(self.claim_values.items())
        ]

    async def ensure_claim(self, name: str, value: str) -> None:
        self.claim_values.setdefault(name, value)

    async def health(self) -> tuple[bool, str]:
        if self.healthy:
            return True, ""
        return False, "status code: 503, the simulated cluster is down"

    async def labelled_namespaces(self, label: str) -> list[str]:
        return [name for name, labels in self.namespaces.items() if labels.get(label) == "true"]

    async def label_namespace(self, name: str, *, label: str, value: str) -> None:
        self.namespaces.setdefault(name, {})[label] = value
