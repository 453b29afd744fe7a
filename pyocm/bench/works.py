"""The ``works`` scenario of ``pyocm bench fleet``: ManifestWorks through a simulated fleet.

With the fleet joined and quiet, the hub's CPU is measured over a window without works;
then ``works_per_cluster`` ManifestWorks (a Deployment, a ConfigMap and a Service each)
are created for every cluster at once, and the report says when all were Applied and
Available on the hub, what the same window costs the hub with them, and how long a spec
change takes. Each simulated cluster runs the real work agent over its in-memory
objects (workload status simulated, as on an embedded cluster).

A spec change is timed from the hub's answer to the update until the hub shows the
work Applied at its new generation: that includes the agent's apply and its status
write, so it is an upper bound on the time the change takes to reach the cluster.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]
CREATE_WORKERS = 32
#: Works whose spec is changed one after another for the change-latency figure.
CHANGES = 200


def manifests(index: int, *, version: int = 1) -> list[Obj]:
    """One work's manifests: a Deployment, a ConfigMap and a Service."""
    name = f"bench-{index}"
    labels = {"app": name}
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"version": str(version)},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": labels, "ports": [{"port": 80}]},
        },
    ]


def work(cluster: str, index: int) -> Obj:
    return {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": f"bench-{index}", "namespace": cluster},
        "spec": {"workload": {"manifests": manifests(index)}},
    }


def done(obj: Obj | None, *, generation: int | None = None) -> bool:
    """Applied and Available, at ``generation`` when given (else the current one)."""
    if obj is None:
        return False
    wanted = generation or obj["metadata"].get("generation")
    found = (obj.get("status") or {}).get("conditions") or []
    applied = conditions.find(found, "Applied")
    return (
        conditions.is_true(found, "Applied")
        and conditions.is_true(found, "Available")
        and applied is not None
        and applied.get("observedGeneration") == wanted
    )


@dataclass
class WorkWatch:
    """The hub's ManifestWorks as they change: which are done, and when each change
    the bench waits for was first seen."""

    informer: Informer
    finished: set[str] = field(default_factory=set)
    #: key -> (generation waited for, monotonic time it was asked)
    waits: dict[str, tuple[int, float]] = field(default_factory=dict)
    #: Seconds each awaited change took.
    took: list[float] = field(default_factory=list)

    @classmethod
    def on(cls, admin: Api) -> WorkWatch:
        watch = cls(Informer(admin, ocm.MANIFEST_WORK))
        watch.informer.add_handler(watch._seen)
        return watch

    def _seen(self, change: Change) -> None:
        obj = change.new
        if obj is None:
            return
        meta = obj["metadata"]
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        if done(obj):
            self.finished.add(key)
        waiting = self.waits.get(key)
        if waiting and done(obj, generation=waiting[0]):
            self.took.append(time.monotonic() - waiting[1])
            del self.waits[key]


async def create_all(admin: Api, clusters: list[str], *, per_cluster: int) -> int:
    """Create every work with a few concurrent writers; return how many were created."""
    queue: asyncio.Queue[Obj] = asyncio.Queue()
    for cluster in clusters:
        for index in range(per_cluster):
            queue.put_nowait(work(cluster, index))
    total = queue.qsize()

    async def writer() -> None:
        while not queue.empty():
            await admin.create(ocm.MANIFEST_WORK, queue.get_nowait())

    await asyncio.gather(*(writer() for _ in range(CREATE_WORKERS)))
    return total


async def until_done(watch: WorkWatch, total: int, *, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while len(watch.finished) < total:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True


async def change_latencies(
    admin: Api, watch: WorkWatch, clusters: list[str], *, count: int = CHANGES
) -> tuple[list[float], int]:
    """Change the ConfigMap of ``count`` works (one work per cluster, round robin), one
    change every 50 ms; answer the seconds each took to show Applied at its new
    generation on the hub, and how many were asked (a change not seen within 30 s, or
    overtaken by the next change to the same work, is not among the seconds)."""
    for attempt in range(count):
        cluster = clusters[attempt % len(clusters)]
        body = {"spec": {"workload": {"manifests": manifests(0, version=attempt + 2)}}}
        asked = time.monotonic()
        updated = await admin.patch(ocm.MANIFEST_WORK, "bench-0", body, namespace=cluster)
        generation = int(updated["metadata"]["generation"])
        watch.waits[f"{cluster}/bench-0"] = (generation, asked)
        await asyncio.sleep(0.05)
    deadline = time.monotonic() + 30
    while watch.waits and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return sorted(watch.took), count
