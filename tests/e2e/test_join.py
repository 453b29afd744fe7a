"""A managed cluster joins a real hub: bootstrap token, CSR, admin acceptance, then the
agent's own certificate, Joined and Available, inventory, lease, and removal."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.local.embedded import EmbeddedCluster, NodeShape
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.errors import AgentError
from pyocm.registration.agent.managed import KubeManagedSide
from pyocm.registration.agent.status import ClaimOptions
from pyocm.registration.hub.accept import accept_cluster
from pyocm.runtime.client import Api
from pyocm.sim.memory import MemoryCluster
from pyocm.testing import HubProcess
from tests.agents import accept, available, bootstrap_kubeconfig, condition, running_agent
from tests.support import eventually

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


@pytest_asyncio.fixture
async def managed(tmp_path: Path) -> AsyncIterator[EmbeddedCluster]:
    cluster = EmbeddedCluster(
        name="m", data_dir=tmp_path / "managed", nodes=2, shape=NodeShape(cpu="4", memory="8Gi")
    )
    await cluster.start()
    yield cluster
    await cluster.stop()


async def test_join_accept_available_then_delete(
    hub: HubProcess, api: Api, managed: EmbeddedCluster, unique: str
) -> None:
    name = f"join-{unique}"
    for index in range(3):
        await managed.api.create(
            ocm.CLUSTER_CLAIM,
            {"metadata": {"name": f"custom-{index}"}, "spec": {"value": str(index)}},
        )
    await managed.api.create(
        ocm.CLUSTER_CLAIM,
        {
            "metadata": {"name": "secret-ish", "labels": {wellknown.SPOKE_ONLY_LABEL: ""}},
            "spec": {"value": "x"},
        },
    )
    states: list[str] = []
    agent = RegistrationAgent(
        bootstrap=await bootstrap_kubeconfig(api, hub),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(
            cluster_name=name, claims=ClaimOptions(max_custom=2), poll=0.1, healthcheck_period=5
        ),
        on_state=states.append,
    )
    running = asyncio.create_task(agent.run())
    try:
        created = await eventually(lambda: api.get(ocm.MANAGED_CLUSTER, name))
        assert created["spec"]["hubAcceptsClient"] is False
        await eventually(
            lambda: asyncio.sleep(0, any(s.startswith("waiting for the hub admin") for s in states))
        )
        await accept(api, name)

        async def available() -> Obj | None:
            cluster = await api.get(ocm.MANAGED_CLUSTER, name)
            return (
                cluster
                if condition(cluster, wellknown.CLUSTER_AVAILABLE).get("status") == "True"
                else None
            )

        cluster = await eventually(available)
        assert condition(cluster, wellknown.CLUSTER_JOINED)["reason"] == "ManagedClusterJoined"
        status = cluster["status"]
        assert status["version"]["kubernetes"] == "v1.30.0"
        assert status["capacity"]["cpu"] == "8" and status["capacity"]["memory"] == "16Gi"
        assert status["allocatable"]["cpu"] == "7800m"
        claims = [c["name"] for c in status["clusterClaims"]]
        assert claims == ["id.k8s.io", "custom-0", "custom-1"], (
            "reserved first, custom capped, spoke-only hidden"
        )
        uid = (await managed.api.get(kinds.NAMESPACE, "kube-system"))["metadata"]["uid"]
        assert status["clusterClaims"][0]["value"] == uid

        secret = await managed.api.get(
            kinds.SECRET, "hub-kubeconfig-secret", namespace="open-cluster-management-agent"
        )
        assert set(secret["data"]) == {
            "kubeconfig",
            "tls.crt",
            "tls.key",
            "cluster-name",
            "agent-name",
        }
        assert base64.b64decode(secret["data"]["cluster-name"]).decode() == name
        identity = await managed.api.get(
            kinds.CONFIGMAP, "cluster-identity", namespace="open-cluster-management-agent"
        )
        assert identity["data"] == {"cluster-name": name, "cluster-uid": uid}

        lease = await api.get(kinds.LEASE, "managed-cluster-lease", namespace=name)
        assert lease["spec"]["renewTime"]

        # Taints follow availability: the unreachable taint of a fresh cluster goes away.
        async def untainted() -> bool:
            return not (await api.get(ocm.MANAGED_CLUSTER, name))["spec"].get("taints")

        await eventually(untainted)

        await api.delete(ocm.MANAGED_CLUSTER, name)
        assert await asyncio.wait_for(running, 20) == "deleted"
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_a_second_cluster_cannot_take_a_registered_name(
    hub: HubProcess, api: Api, managed: EmbeddedCluster, unique: str
) -> None:
    name = f"taken-{unique}"
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}})
    await api.patch(
        ocm.MANAGED_CLUSTER,
        name,
        {"status": {"clusterClaims": [{"name": "id.k8s.io", "value": "another-uid"}]}},
        subresource="status",
    )
    agent = RegistrationAgent(
        bootstrap=await bootstrap_kubeconfig(api, hub),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(cluster_name=name, poll=0.1),
    )
    with pytest.raises(
        AgentError, match=f'already has a managed cluster "{name}" registered by another cluster'
    ):
        await asyncio.wait_for(agent.run(), 20)


async def test_an_expired_token_is_refused_with_a_clear_error(
    hub: HubProcess, api: Api, managed: EmbeddedCluster, unique: str
) -> None:
    token = bootstraptoken.generate()
    secret = bootstraptoken.token_secret(token, now=datetime(2020, 1, 1, tzinfo=UTC))
    await api.create(kinds.SECRET, secret)
    agent = RegistrationAgent(
        bootstrap=build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, token=str(token)),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(cluster_name=f"expired-{unique}", poll=0.1),
    )
    with pytest.raises(AgentError, match="refused the bootstrap credential"):
        await asyncio.wait_for(agent.run(), 20)


async def test_auto_approval_joins_without_an_admin(
    tmp_path: Path, managed: EmbeddedCluster
) -> None:
    token = bootstraptoken.generate()
    auto = HubProcess(
        tmp_path / "auto-hub",
        extra_args=[
            "--feature-gates",
            "ManagedClusterAutoApproval=true",
            "--auto-approved-csr-users",
            f"system:bootstrap:{token.id}",
        ],
    ).start()
    try:
        async with Api.from_kubeconfig(auto.kubeconfig) as hub_api:
            await hub_api.create(
                kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC))
            )
            agent = RegistrationAgent(
                bootstrap=build_kubeconfig(server=auto.url, ca_pem=auto.ca_pem, token=str(token)),
                managed=KubeManagedSide(managed.api),
                options=AgentOptions(cluster_name="auto", poll=0.1),
            )
            running = asyncio.create_task(agent.run())
            try:

                async def available() -> Obj | None:
                    cluster = await hub_api.get(ocm.MANAGED_CLUSTER, "auto")
                    return (
                        cluster
                        if condition(cluster, wellknown.CLUSTER_AVAILABLE).get("status") == "True"
                        else None
                    )

                # This test starts a hub of its own: on a loaded machine its controllers
                # may take a while to come up.
                cluster = await eventually(available, timeout=60)
                assert wellknown.AUTO_ACCEPTED_ANNOTATION in cluster["metadata"]["annotations"]
                csrs = (await hub_api.list(kinds.CSR))["items"]
                assert [c["status"]["conditions"][0]["reason"] for c in csrs] == [
                    "AutoApprovedByHubCSRApprovingController"
                ]
                # A later deny sticks: auto-acceptance happens once.
                await hub_api.patch(
                    ocm.MANAGED_CLUSTER, "auto", {"spec": {"hubAcceptsClient": False}}
                )
                assert await asyncio.wait_for(running, 60) == "denied"
                assert (await hub_api.get(ocm.MANAGED_CLUSTER, "auto"))["spec"][
                    "hubAcceptsClient"
                ] is False
            finally:
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
    finally:
        auto.stop()


async def test_join_waits_out_missing_bootstrap_rights(
    hub: HubProcess, api: Api, managed: EmbeddedCluster, unique: str
) -> None:
    token = bootstraptoken.generate()
    secret = bootstraptoken.token_secret(token, now=datetime.now(UTC))
    del secret["stringData"]["auth-extra-groups"]  # not in system:bootstrappers:managedcluster
    await api.create(kinds.SECRET, secret)
    states: list[str] = []
    name = f"late-{unique}"
    agent = RegistrationAgent(
        bootstrap=build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, token=str(token)),
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(cluster_name=name, poll=0.1),
        on_state=states.append,
    )
    running = asyncio.create_task(agent.run())
    try:
        await eventually(
            lambda: asyncio.sleep(0, any(s.startswith("cannot join yet") for s in states))
        )
        assert not running.done(), "a forbidden bootstrap is retried, not fatal"
        await api.create(
            kinds.CLUSTER_ROLE_BINDING,
            {
                "metadata": {"name": f"late-{unique}"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "open-cluster-management:bootstrap",
                },
                "subjects": [
                    {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "User",
                        "name": f"system:bootstrap:{token.id}",
                    }
                ],
            },
        )
        await eventually(lambda: api.get(ocm.MANAGED_CLUSTER, name))
        await eventually(
            lambda: asyncio.sleep(0, any(s.startswith("waiting for the hub admin") for s in states))
        )
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_accept_approves_the_csr_once_the_hub_granted_access(
    hub: HubProcess, api: Api, managed: EmbeddedCluster, unique: str
) -> None:
    """``pyocm accept`` holds the approval until the hub reports the cluster accepted, so
    the agent's first request with its certificate finds its RBAC in place."""
    name = f"grant-{unique}"
    async with running_agent(api, hub, managed, name, accept_it=False):

        async def asked() -> bool:
            listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
            return bool(listed["items"])

        await eventually(asked)
        approved = await accept_cluster(api, name)
        assert len(approved) == 1
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        assert condition(cluster, wellknown.CLUSTER_HUB_ACCEPTED).get("status") == "True", (
            "accepted before the certificate could be issued"
        )
        await eventually(lambda: available(api, name))


async def test_accept_with_wait_returns_at_once_for_a_cluster_accepted_before(
    api: Api, unique: str
) -> None:
    """``pyocm up`` restarted on its data directory accepts its clusters again; their
    join CSRs were cleaned up long ago and their agents hold certificates, so nothing
    will ever ask to join. Waiting for a request would fail after the timeout."""
    name = f"again-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER,
        {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}},
    )
    try:
        assert await accept_cluster(api, name, wait=True, timeout=5, grant_wait=0.5) == []
    finally:
        await api.delete(ocm.MANAGED_CLUSTER, name)


async def test_a_waiting_agent_sees_at_once_its_csr_deleted_or_denied(
    hub: HubProcess, api: Api, unique: str
) -> None:
    # The agent watches its CSR instead of reading it every ``poll`` seconds (30 here):
    # every change below is seen within moments.
    name = f"wait-{unique}"
    states: list[str] = []
    bootstrap = await bootstrap_kubeconfig(api, hub)
    async with Api.from_config(bootstrap) as joining:  # the hub knows the new token
        await eventually(lambda: joining.list(ocm.MANAGED_CLUSTER, fields="metadata.name=x"))
    agent = RegistrationAgent(
        bootstrap=bootstrap,
        managed=MemoryCluster(),
        options=AgentOptions(cluster_name=name, poll=30),
        on_state=states.append,
    )
    running = asyncio.create_task(agent.run())
    try:

        async def pending() -> Obj | None:
            listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
            return listed["items"][0] if listed["items"] else None

        first = await eventually(pending, timeout=10)
        await eventually(lambda: asyncio.sleep(0, states[-1].startswith("waiting for the hub admin")))
        await api.delete(kinds.CSR, first["metadata"]["name"])

        async def recreated() -> Obj | None:
            found = await pending()
            return found if found and found["metadata"]["uid"] != first["metadata"]["uid"] else None

        again = await eventually(recreated, timeout=10)
        again.setdefault("status", {})["conditions"] = [
            {"type": "Denied", "status": "True", "reason": "NotYou", "message": "denied by a test"}
        ]
        await api.update(kinds.CSR, again, subresource="approval")
        await eventually(
            lambda: asyncio.sleep(0, states[-1] == f"csr {again['metadata']['name']} was denied on the hub; waiting for a new approval"),
            timeout=10,
        )
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
