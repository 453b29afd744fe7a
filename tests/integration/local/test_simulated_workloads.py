"""An embedded cluster's simulated workloads, against its real API server: objects
created through the API get the status a healthy cluster would give them, follow their
spec, hold still once written, satisfy kubectl's own readiness checks, and get nothing
when the simulation is off."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.kube.workloadsim import MARK, simulated_status
from pyocm.local import workloads
from pyocm.local.embedded import EmbeddedCluster
from pyocm.runtime.client import Api
from tests.support import eventually

Obj = dict[str, Any]
NS = "apps"
LABELS = {"app": "web"}
TEMPLATE: Obj = {
    "metadata": {"labels": LABELS},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
}


@contextlib.asynccontextmanager
async def embedded(data_dir: Path, **options: Any) -> AsyncIterator[EmbeddedCluster]:
    """A started embedded cluster; once stopped, no task of it may be left running."""
    cluster = EmbeddedCluster(name="sim", data_dir=data_dir, **options)
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
    leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not leftover, f"tasks left running: {leftover}"


def deployment(name: str, replicas: int = 1) -> Obj:
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": LABELS}, "template": TEMPLATE},
    }


async def status_of(api: Api, kind: Kind, name: str) -> Obj:
    found: Obj = (await api.get(kind, name, namespace=NS)).get("status") or {}
    return found


def condition(status: Obj, type: str) -> Obj:
    found = [c for c in status.get("conditions") or [] if c.get("type") == type]
    assert found, f"no {type} condition in {status}"
    return dict(found[0])


async def test_workloads_get_a_healthy_clusters_status_and_follow_their_spec(
    tmp_path: Path,
) -> None:
    async with embedded(tmp_path / "sim", nodes=2) as cluster:
        api = cluster.api
        await api.create(kinds.NAMESPACE, {"metadata": {"name": NS}})
        await api.create(kinds.DEPLOYMENT, deployment("web"))
        await api.create(
            kinds.JOB,
            {
                "metadata": {"name": "pi", "namespace": NS},
                "spec": {"template": {"spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}},
            },
        )
        await api.create(
            kinds.POD,
            {
                "metadata": {"name": "solo", "namespace": NS},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "busybox",
                            "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        )
        await api.create(
            kinds.DAEMON_SET,
            {
                "metadata": {"name": "agent", "namespace": NS},
                "spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE},
            },
        )
        for kind, name in ((kinds.STATEFUL_SET, "db"), (kinds.REPLICA_SET, "bare")):
            await api.create(kind, {**deployment(name, replicas=2), "kind": kind.kind})
        await api.create(
            kinds.POD,
            {
                "metadata": {"name": "sidecars", "namespace": NS},
                "spec": {
                    "initContainers": [
                        {"name": "setup", "image": "busybox"},
                        {"name": "proxy", "image": "envoy", "restartPolicy": "Always"},
                    ],
                    "containers": [{"name": "app", "image": "app"}],
                },
            },
        )
        await api.create(
            kinds.PERSISTENT_VOLUME_CLAIM,
            {
                "metadata": {"name": "data", "namespace": NS},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        )

        async def deployment_available() -> bool:
            status = await status_of(api, kinds.DEPLOYMENT, "web")
            available = condition(status, "Available")
            assert (available["status"], available["reason"]) == (
                "True",
                "MinimumReplicasAvailable",
            )
            assert available["message"] == "Deployment has minimum availability." + MARK
            assert condition(status, "Progressing")["reason"] == "NewReplicaSetAvailable"
            return bool(status["readyReplicas"] == status["availableReplicas"] == 1)

        async def job_complete() -> bool:
            status = await status_of(api, kinds.JOB, "pi")
            return bool(
                condition(status, "Complete")["status"] == "True" and status["succeeded"] == 1
            )

        async def pod_running() -> bool:
            status = await status_of(api, kinds.POD, "solo")
            assert status.get("phase") == "Running"
            assert condition(status, "Ready")["status"] == "True"
            assert status["qosClass"] == "Guaranteed"
            return bool(status["containerStatuses"][0]["ready"])

        async def daemons_ready() -> bool:
            return (await status_of(api, kinds.DAEMON_SET, "agent")).get("numberReady") == 2

        async def claim_bound() -> bool:
            status = await status_of(api, kinds.PERSISTENT_VOLUME_CLAIM, "data")
            return status.get("phase") == "Bound" and status.get("capacity") == {"storage": "1Gi"}

        async def sets_ready() -> bool:
            stateful = await status_of(api, kinds.STATEFUL_SET, "db")
            replica_set = await status_of(api, kinds.REPLICA_SET, "bare")
            assert stateful.get("currentRevision", "").startswith("db-")
            return stateful.get("readyReplicas") == replica_set.get("readyReplicas") == 2

        async def sidecars_run() -> bool:
            status = await status_of(api, kinds.POD, "sidecars")
            setup, proxy = status["initContainerStatuses"]
            assert setup["state"]["terminated"]["reason"] == "Completed"
            return "running" in proxy["state"] and status["containerStatuses"][0]["ready"] is True

        checks = (deployment_available, job_complete, pod_running, daemons_ready, claim_bound)
        for check in (*checks, sets_ready, sidecars_run):
            await eventually(check)

        scaled = await api.patch(kinds.DEPLOYMENT, "web", {"spec": {"replicas": 3}}, namespace=NS)

        async def scaled_up() -> bool:
            status = await status_of(api, kinds.DEPLOYMENT, "web")
            generation = scaled["metadata"]["generation"]
            return bool(
                status.get("observedGeneration") == generation and status["readyReplicas"] == 3
            )

        await eventually(scaled_up)
        await _holds_still(
            api,
            [
                (kinds.DEPLOYMENT, "web"),
                (kinds.JOB, "pi"),
                (kinds.POD, "solo"),
                (kinds.POD, "sidecars"),
                (kinds.DAEMON_SET, "agent"),
                (kinds.PERSISTENT_VOLUME_CLAIM, "data"),
                (kinds.STATEFUL_SET, "db"),
                (kinds.REPLICA_SET, "bare"),
            ],
        )
        await _kubectl_agrees(cluster.kubeconfig)

        claim = await api.get(ocm.CLUSTER_CLAIM, workloads.CLAIM_NAME)
        assert claim["spec"]["value"] == workloads.CLAIM_SIMULATED


async def _holds_still(api: Api, objects: list[tuple[Kind, str]]) -> None:
    """What was written reads back unchanged: recomputing it later gives the stored
    status, and no object is written again."""
    versions = []
    later = datetime.now(UTC) + timedelta(minutes=10)
    for kind, name in objects:
        stored = await api.get(kind, name, namespace=NS)
        assert simulated_status(kind, stored, nodes=2, now=later) == stored["status"], name
        versions.append(stored["metadata"]["resourceVersion"])
    await asyncio.sleep(1.0)
    for (kind, name), version in zip(objects, versions, strict=True):
        assert (await api.get(kind, name, namespace=NS))["metadata"][
            "resourceVersion"
        ] == version, name


async def _kubectl_agrees(kubeconfig: Path) -> None:
    """kubectl's own readiness checks pass (run without blocking: the server is in this loop)."""
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is not on PATH"
    for args in (
        ["rollout", "status", "deployment/web", "--timeout=20s"],
        ["rollout", "status", "daemonset/agent", "--timeout=20s"],
        ["rollout", "status", "statefulset/db", "--timeout=20s"],
        ["wait", "--for=condition=Complete", "job/pi", "--timeout=20s"],
        ["wait", "--for=condition=Ready", "pod/solo", "--timeout=20s"],
    ):
        process = await asyncio.create_subprocess_exec(
            kubectl,
            "--kubeconfig",
            str(kubeconfig),
            "-n",
            NS,
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode == 0, f"kubectl {' '.join(args)}: {output.decode()}"


async def test_with_the_simulation_off_nothing_gets_status_and_the_claim_goes(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "sim"
    async with embedded(data_dir) as cluster:
        await cluster.api.create(kinds.NAMESPACE, {"metadata": {"name": NS}})
        started = asyncio.get_running_loop().time()
        await cluster.api.create(kinds.DEPLOYMENT, deployment("before"))
        await eventually(lambda: _has_status(cluster.api, "before"))
        took = asyncio.get_running_loop().time() - started
        before = await cluster.api.get(kinds.DEPLOYMENT, "before", namespace=NS)
        assert (await cluster.api.get(ocm.CLUSTER_CLAIM, workloads.CLAIM_NAME))["spec"][
            "value"
        ] == "simulated"

    async with embedded(data_dir, simulate_workloads=False) as cluster:
        with pytest.raises(ApiError) as gone:
            await cluster.api.get(ocm.CLUSTER_CLAIM, workloads.CLAIM_NAME)
        assert gone.value.code == 404
        await cluster.api.create(kinds.DEPLOYMENT, deployment("after"))
        # Several times what the simulation took to act: it would have by now.
        await asyncio.sleep(max(1.0, 3 * took))
        assert await status_of(cluster.api, kinds.DEPLOYMENT, "after") == {}
        await cluster.api.patch(kinds.DEPLOYMENT, "before", {"spec": {"replicas": 2}}, namespace=NS)
        await asyncio.sleep(max(0.5, took))
        assert await status_of(cluster.api, kinds.DEPLOYMENT, "before") == before["status"]


async def _has_status(api: Api, name: str) -> bool:
    return bool(await status_of(api, kinds.DEPLOYMENT, name))
