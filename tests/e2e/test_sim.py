"""The fleet simulator against a whole hub: simulated clusters are real agents."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any

import pytest

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube import kinds, timefmt
from pyocm.runtime.client import Api
from pyocm.sim.fleet import Fleet, FleetOptions
from pyocm.testing import HubProcess
from tests.cli import Running
from tests.support import eventually

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


@contextlib.asynccontextmanager
async def running(fleet: Fleet) -> Any:
    task = asyncio.create_task(fleet.run())
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_simulated_clusters_join_report_and_renew(
    hub: HubProcess, api: Api, unique: str
) -> None:
    options = FleetOptions(
        clusters=4,
        prefix=f"{unique}-",
        join_rate=50,
        auto_accept=True,
        lease_seconds=30,
        healthcheck_period=5,
    )
    fleet = Fleet(api, server=hub.url, ca_pem=hub.ca_pem, options=options)
    async with running(fleet):
        await eventually(lambda: asyncio.sleep(0, fleet.counts().get("available") == 4), timeout=60)
        for member in fleet.members:
            cluster = await api.get(ocm.MANAGED_CLUSTER, member.name)
            found = cluster["status"]["conditions"]
            assert conditions.is_true(found, wellknown.CLUSTER_JOINED)
            assert cluster["spec"]["leaseDurationSeconds"] == 30
            assert cluster["status"]["version"] == {"kubernetes": "v1.30.0"}
            assert cluster["status"]["capacity"]["cpu"] == "24", "3 nodes of 8 cpus"
            claims = {c["name"]: c["value"] for c in cluster["status"]["clusterClaims"]}
            assert claims["id.k8s.io"] == member.cluster.uid
            lease = await api.get(kinds.LEASE, "managed-cluster-lease", namespace=member.name)
            assert lease["spec"].get("renewTime")
        assert len(fleet.join_seconds()) == 4


async def test_churned_clusters_come_back_with_their_credential(
    hub: HubProcess, api: Api, unique: str
) -> None:
    options = FleetOptions(
        clusters=2,
        prefix=f"{unique}-",
        join_rate=50,
        auto_accept=True,
        healthcheck_period=5,
        churn=120,  # one every half second
        churn_downtime=0.5,
    )
    fleet = Fleet(api, server=hub.url, ca_pem=hub.ca_pem, options=options)
    seen: list[str] = []
    fleet.on_change = lambda member: seen.append(member.state)
    async with running(fleet):
        await eventually(lambda: asyncio.sleep(0, "away (churn)" in seen), timeout=60)
        await eventually(lambda: asyncio.sleep(0, seen[-1] == "available"), timeout=60)
    csrs = (await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={unique}-1"))["items"]
    assert len(csrs) == 1, "a cluster coming back keeps its certificate: no new join"


@pytest.mark.bench
async def test_a_rotation_storm_renews_every_certificate_at_once(
    hub: HubProcess, api: Api, unique: str
) -> None:
    options = FleetOptions(
        clusters=3, prefix=f"{unique}-", join_rate=50, auto_accept=True, healthcheck_period=5
    )
    fleet = Fleet(api, server=hub.url, ca_pem=hub.ca_pem, options=options)
    async with running(fleet):
        await eventually(lambda: asyncio.sleep(0, fleet.counts().get("available") == 3), timeout=60)
        before = {
            m.name: m.cluster.secrets["hub-kubeconfig-secret"]["tls.crt"] for m in fleet.members
        }
        # An agent's first renewal can come before the hub has made its lease or granted
        # its RBAC; such an agent renews at the start of its next session, so wait until
        # each has one renewal on schedule, and note when each is next due.
        await eventually(
            lambda: asyncio.sleep(0, all(m.agent and m.agent.lease_due for m in fleet.members)),
            timeout=90,
        )
        renewed = {
            m.name: (await api.get(kinds.LEASE, "managed-cluster-lease", namespace=m.name))["spec"][
                "renewTime"
            ]
            for m in fleet.members
        }
        due = {
            m.name: _wall(m.agent.lease_due[1])
            for m in fleet.members
            if m.agent and m.agent.lease_due
        }
        assert fleet.rotation_seconds() == []
        fleet.rotate()
        assert fleet.rotating == 3
        # A renewal the hub has not signed by the 5th read (up to 37 s) is seen at the 6th.
        await eventually(lambda: asyncio.sleep(0, len(fleet.rotation_seconds()) == 3), timeout=90)
        for member in fleet.members:
            assert member.cluster.secrets["hub-kubeconfig-secret"]["tls.crt"] != before[member.name]
            csrs = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={member.name}")
            reasons = sorted(c["status"]["conditions"][0]["reason"] for c in csrs["items"])
            assert reasons == [
                "AutoApprovedByHubCSRApprovingController",
                "AutoApprovedByPyocmAccept",
            ]
        # Each agent goes on with its new certificate, on its lease schedule: a rotation
        # is no reason to renew the lease again at once. The fleet counted 3 available
        # all along; the hub writes the rotated condition after the renewal is stored.
        await eventually(lambda: asyncio.sleep(0, fleet.counts().get("available") == 3), timeout=60)
        await eventually(lambda: _all_rotated(api, fleet), timeout=60)
        for member in fleet.members:
            lease = await api.get(kinds.LEASE, "managed-cluster-lease", namespace=member.name)
            renew_time = lease["spec"]["renewTime"]
            # Unchanged, or renewed on the schedule it had before the rotation (a second
            # of slack for the two clocks), never at the rotation itself.
            on_schedule = timefmt.parse_time(renew_time).timestamp() >= due[member.name] - 1.0
            assert renew_time == renewed[member.name] or on_schedule, (renew_time, due)


async def _all_rotated(api: Api, fleet: Fleet) -> bool:
    for member in fleet.members:
        cluster = await api.get(ocm.MANAGED_CLUSTER, member.name)
        found = (cluster.get("status") or {}).get("conditions") or []
        assert conditions.is_true(found, wellknown.CLUSTER_CERTIFICATE_ROTATED), member.name
    return True


def _wall(monotonic_due: float) -> float:
    """A monotonic due time as wall-clock seconds."""
    return time.time() + (monotonic_due - time.monotonic())


def test_the_sim_command_reports_its_fleet(hub: HubProcess, unique: str) -> None:
    process = Running(
        "sim",
        "--clusters",
        "3",
        "--auto-accept",
        "--prefix",
        f"{unique}-",
        "--kubeconfig",
        str(hub.kubeconfig),
    )
    try:
        process.wait_for(f"simulating 3 clusters against {hub.url}")
        process.wait_for(r"all 3 clusters are available; start to available: n=3 p50=", timeout=90)
    finally:
        code = process.stop(signal.SIGINT)
    assert code == 0, "\n".join(process.lines[-20:])


def test_the_sim_command_refuses_bad_options(hub: HubProcess) -> None:
    process = Running("sim", "--clusters", "0", "--kubeconfig", str(hub.kubeconfig))
    process.wait_for("--clusters must be at least 1")
    assert process.process.wait(timeout=30) == 2


async def test_simulated_clusters_apply_their_works(hub: HubProcess, api: Api, unique: str) -> None:
    options = FleetOptions(
        clusters=2, prefix=f"{unique}-", join_rate=50, auto_accept=True, healthcheck_period=5
    )
    fleet = Fleet(api, server=hub.url, ca_pem=hub.ca_pem, options=options)
    member = fleet.members[0]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }
    work = {
        "metadata": {"name": "web", "namespace": member.name},
        "spec": {
            "workload": {"manifests": [deployment]},
            "manifestConfigs": [
                {
                    "resourceIdentifier": {
                        "group": "apps",
                        "resource": "deployments",
                        "name": "web",
                        "namespace": "default",
                    },
                    "feedbackRules": [{"type": "WellKnownStatus"}],
                }
            ],
        },
    }
    async with running(fleet):
        await eventually(lambda: asyncio.sleep(0, fleet.counts().get("available") == 2), timeout=60)
        await api.create(ocm.MANIFEST_WORK, work)

        async def reported() -> Obj:
            got = await api.get(ocm.MANIFEST_WORK, "web", namespace=member.name)
            found = got.get("status", {}).get("conditions", [])
            assert conditions.is_true(found, "Applied") and conditions.is_true(found, "Available")
            return got

        done = await eventually(reported, timeout=60)
        feedback = done["status"]["resourceStatus"]["manifests"][0]["statusFeedback"]["values"]
        assert {
            "name": "ReadyReplicas",
            "fieldValue": {"type": "Integer", "integer": 2},
        } in feedback
        applied = await member.spoke.get(kinds.DEPLOYMENT, "web", namespace="default")
        assert applied["spec"]["replicas"] == 2
        # The other cluster got nothing.
        assert await fleet.members[1].spoke.list(kinds.DEPLOYMENT) == []
