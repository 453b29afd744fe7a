"""An agent's life on a real hub: what its credential can and cannot touch, a lease that
stops and resumes, certificate rotation in virtual time, and one cluster on two hubs."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki.keys import generate_private_key
from pyocm.registration.agent import certs
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.managed import AGENT_NAMESPACE, KubeManagedSide
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import (
    agent_api,
    approve_pending,
    available,
    bootstrap_kubeconfig,
    condition,
    embedded,
    running_agent,
)
from tests.support import eventually

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


async def test_an_agent_reaches_only_its_own_cluster(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    a, b = f"a-{unique}", f"b-{unique}"
    managed_a, managed_b = await embedded(tmp_path, "ma"), await embedded(tmp_path, "mb")
    try:
        async with running_agent(api, hub, managed_a, a), running_agent(api, hub, managed_b, b):
            async with await agent_api(managed_a) as as_a:
                await as_a.get(ocm.MANAGED_CLUSTER, a)
                await as_a.get(kinds.LEASE, "managed-cluster-lease", namespace=a)
                for attempt in (
                    as_a.get(ocm.MANAGED_CLUSTER, b),
                    as_a.patch(
                        ocm.MANAGED_CLUSTER,
                        b,
                        {"status": {"clusterClaims": []}},
                        subresource="status",
                    ),
                    as_a.patch(ocm.MANAGED_CLUSTER, b, {"spec": {"hubAcceptsClient": False}}),
                    as_a.get(kinds.LEASE, "managed-cluster-lease", namespace=b),
                    as_a.get(kinds.NAMESPACE, b),
                    as_a.list(kinds.SECRET, namespace=b),
                    as_a.create(kinds.CONFIGMAP, {"metadata": {"name": "x", "namespace": b}}),
                ):
                    with pytest.raises(ApiError) as denied:
                        await attempt
                    assert denied.value.code == 403
                # CSRs: an agent sees only its own cluster's, whatever selector it asks with.
                mine = await as_a.list(kinds.CSR)
                assert {
                    c["metadata"]["labels"][wellknown.CLUSTER_NAME_LABEL] for c in mine["items"]
                } == {a}
                others = await as_a.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={b}")
                assert others["items"] == []
                theirs = (await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={b}"))[
                    "items"
                ][0]
                with pytest.raises(ApiError) as hidden:
                    await as_a.get(kinds.CSR, theirs["metadata"]["name"])
                assert hidden.value.code == 403
                # A CSR naming cluster B in its organization is never approved by the hub.
                forged = certs.csr_object(
                    certs.Subject(cluster=b, agent="evil"), generate_private_key()
                )
                forged["metadata"]["labels"] = {wellknown.CLUSTER_NAME_LABEL: b}  # type: ignore[index]
                made = await as_a.create(kinds.CSR, forged)
                await asyncio.sleep(1.0)
                csr = await api.get(kinds.CSR, made["metadata"]["name"])
                assert not (csr.get("status") or {}).get("conditions"), "a forged CSR stays pending"

            # Denied: access is cut at once (the lease can no longer be renewed).
            await api.patch(ocm.MANAGED_CLUSTER, a, {"spec": {"hubAcceptsClient": False}})

            async def lease_refused() -> bool:
                async with await agent_api(managed_a) as as_a:
                    try:
                        await as_a.get(kinds.LEASE, "managed-cluster-lease", namespace=a)
                    except ApiError as err:
                        return err.code == 403
                return False

            await eventually(lease_refused)
    finally:
        await managed_a.stop()
        await managed_b.stop()


async def test_lease_stops_unknown_and_unreachable_then_available_again(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name = f"lease-{unique}"
    managed = await embedded(tmp_path, "m")
    try:
        async with running_agent(api, hub, managed, name):
            await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"leaseDurationSeconds": 1}})
            await asyncio.sleep(1.5)  # the agent picks up the shorter period
        cluster = await eventually(lambda: available(api, name, "Unknown"), timeout=20)
        unknown = condition(cluster, wellknown.CLUSTER_AVAILABLE)
        assert unknown["reason"] == "ManagedClusterLeaseUpdateStopped"
        assert unknown["message"] == "Registration agent stopped updating its lease."

        async def unreachable() -> bool:
            found = await api.get(ocm.MANAGED_CLUSTER, name)
            return [t["key"] for t in found["spec"].get("taints") or []] == [
                wellknown.TAINT_UNREACHABLE
            ]

        await eventually(unreachable)
        # The restarted agent keeps its identity and credential: no new CSR, no acceptance.
        async with running_agent(api, hub, managed, name, accept_it=False):
            await eventually(lambda: available(api, name))

            async def untainted() -> bool:
                return not (await api.get(ocm.MANAGED_CLUSTER, name))["spec"].get("taints")

            await eventually(untainted)
        listed = await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}")
        assert len(listed["items"]) == 1
    finally:
        await managed.stop()


async def test_certificate_rotates_when_a_fifth_of_its_life_is_left(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name = f"rotate-{unique}"
    managed = await embedded(tmp_path, "m")
    clock = FakeClock(start=datetime.now(UTC))
    stop = asyncio.Event()

    # Virtual time runs 10x the wall clock: fast enough for the agent's polls, slow
    # enough that a join on a loaded machine keeps the agent's clock within the hub's
    # clock-sync grace (else it stops reporting status).
    async def tick() -> None:
        while not stop.is_set():
            clock.advance(0.1)
            await asyncio.sleep(0.01)

    # Virtual time stops at the first rotation: from then on the clock is ahead of every
    # certificate the hub signs, so the agent would rotate again and again.
    ticker: asyncio.Task[None] | None = asyncio.create_task(tick())
    try:
        async with running_agent(api, hub, managed, name, clock=clock):
            before = await managed.api.get(
                kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
            )
            chain = certs.load_chain(base64.b64decode(before["data"]["tls.crt"]))
            life = chain[0].not_valid_after_utc - chain[0].not_valid_before_utc
            clock.advance((life * 0.81).total_seconds())

            async def rotated() -> Obj | None:
                now = await managed.api.get(
                    kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
                )
                return now if now["data"]["tls.crt"] != before["data"]["tls.crt"] else None

            after = await eventually(rotated)
            stop.set()
        new_chain = certs.load_chain(base64.b64decode(after["data"]["tls.crt"]))
        assert certs.matches(
            new_chain[0],
            certs.Subject(
                cluster=name, agent=base64.b64decode(after["data"]["agent-name"]).decode()
            ),
        )
        csrs = (await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}"))["items"]
        reasons = [
            c["status"]["conditions"][0]["reason"]
            for c in csrs
            if (c.get("status") or {}).get("conditions")
        ]
        # Virtual time stays ahead of the hub's clock, so later certificates look old
        # too and may rotate again; every renewal is the hub's, the join was the admin's.
        assert reasons.count("AcceptedByTest") == 1
        assert reasons.count("AutoApprovedByHubCSRApprovingController") == len(reasons) - 1 >= 1
    finally:
        stop.set()
        if ticker is not None:
            await ticker
        await managed.stop()


async def test_one_cluster_joins_two_hubs_with_one_id(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name = f"two-{unique}"
    managed = await embedded(tmp_path, "m")
    other = HubProcess(tmp_path / "hub2").start()
    try:
        async with (
            Api.from_kubeconfig(other.kubeconfig) as api2,
            running_agent(api, hub, managed, name),
            running_agent(
                api2, other, managed, name, hub_kubeconfig_secret="hub2-kubeconfig-secret"
            ),
        ):
            first = await api.get(ocm.MANAGED_CLUSTER, name)
            second = await api2.get(ocm.MANAGED_CLUSTER, name)
        ids = [
            {c["name"]: c["value"] for c in x["status"]["clusterClaims"]}["id.k8s.io"]
            for x in (first, second)
        ]
        assert (
            ids[0]
            == ids[1]
            == (await managed.api.get(kinds.NAMESPACE, "kube-system"))["metadata"]["uid"]
        )
    finally:
        other.stop()
        await managed.stop()


async def test_an_expired_certificate_means_bootstrapping_again(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name = f"expired-{unique}"
    managed = await embedded(tmp_path, "m")
    try:
        async with running_agent(api, hub, managed, name):
            pass
        stored = await managed.api.get(
            kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
        )
        agent_name = base64.b64decode(stored["data"]["agent-name"]).decode()
        subject = certs.Subject(cluster=name, agent=agent_name)
        old_cert, old_key = hub.ca().issue_client(
            common_name=subject.common_name,
            organizations=subject.organizations,
            valid_for=timedelta(hours=1),
            now=datetime(2020, 1, 1, tzinfo=UTC),
        )
        stored["data"]["tls.crt"] = base64.b64encode(old_cert).decode()
        stored["data"]["tls.key"] = base64.b64encode(old_key).decode()
        await managed.api.update(kinds.SECRET, stored)
        async with running_agent(api, hub, managed, name, accept_it=False) as task:
            await approve_pending(api, name)  # the new bootstrap CSR needs the admin again

            async def fresh() -> Obj | None:
                now = await managed.api.get(
                    kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
                )
                crt = base64.b64decode(now["data"].get("tls.crt", ""))
                chain = certs.load_chain(crt)
                return now if chain and chain[0].not_valid_after_utc > datetime.now(UTC) else None

            await eventually(fresh)
            await eventually(lambda: available(api, name))
            assert not task.done()
        csrs = (await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}"))["items"]
        assert len(csrs) == 2, "the expired credential was replaced through a new bootstrap CSR"
        renewed = await managed.api.get(
            kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
        )
        chain = certs.load_chain(base64.b64decode(renewed["data"]["tls.crt"]))
        assert chain[0].not_valid_after_utc > datetime.now(UTC)
        assert base64.b64decode(renewed["data"]["agent-name"]).decode() == agent_name, (
            "identity kept"
        )
    finally:
        await managed.stop()


async def test_bootstrap_kubeconfig_from_a_secret_is_followed(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name = f"secret-{unique}"
    managed = await embedded(tmp_path, "m")
    states: list[str] = []

    async def put_bootstrap(config: Obj) -> None:
        body = {
            "metadata": {"name": "bootstrap-hub-kubeconfig", "namespace": AGENT_NAMESPACE},
            "stringData": {"kubeconfig": yaml.safe_dump(config)},
        }
        try:
            current = await managed.api.get(
                kinds.SECRET, "bootstrap-hub-kubeconfig", namespace=AGENT_NAMESPACE
            )
        except ApiError:
            await managed.api.create(kinds.SECRET, body)
            return
        await managed.api.update(
            kinds.SECRET, {**current, "data": {}, "stringData": body["stringData"]}
        )

    agent = RegistrationAgent(
        bootstrap=None,
        managed=KubeManagedSide(managed.api),
        options=AgentOptions(
            cluster_name=name, poll=0.1, healthcheck_period=2, bootstrap_check=0.2
        ),
        on_state=states.append,
    )
    task = asyncio.create_task(agent.run())
    try:
        await eventually(
            lambda: asyncio.sleep(
                0, any(s.startswith("waiting for the bootstrap secret") for s in states)
            )
        )
        await put_bootstrap(await bootstrap_kubeconfig(api, hub))
        await approve_pending(api, name)
        await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": True}})
        await eventually(lambda: available(api, name))
        # A new token for the same hub: the agent restarts its session with the same
        # certificate, as upstream restarts and finds its hub kubeconfig still valid.
        await put_bootstrap(await bootstrap_kubeconfig(api, hub))
        restarted = "restarting: the bootstrap kubeconfig changed"
        await eventually(
            lambda: asyncio.sleep(0, restarted in states and states[-1] == "available")
        )
        assert not task.done()
        csrs = (await api.list(kinds.CSR, labels=f"{wellknown.CLUSTER_NAME_LABEL}={name}"))["items"]
        assert len(csrs) == 1, "the same hub: no new join"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await managed.stop()
