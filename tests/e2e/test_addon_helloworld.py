"""The helloworld add-on through its whole life on real processes (issue 21's done-when):
a hub running the add-on (``pyocm hub --addons helloworld``), a joined embedded cluster
and its registration agent, the add-on enabled with ``pyocm addon enable``, its agent
run as a process (``pyocm addon agent``) with the credential its registration issued,
Available from its Lease, Available lost when the agent stops, and everything removed
when the add-on is disabled."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import condition, embedded, running_agent
from tests.cli import Running, pyocm
from tests.conftest import hub_process
from tests.support import eventually

INSTALL_NS = "open-cluster-management-agent-addon"
ROLE_BINDING = "open-cluster-management:helloworld:clusterrole:agent"
#: The registration agent checks add-on Leases often, with a short grace, for the test.
FAST = AddOnOptions(health_period=0.5, lease_grace=3.0)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "addon-hub", ["--addons", "helloworld"])


async def available(api: Api, cluster: str) -> tuple[str, str]:
    found = await api.get(ocm.MANAGED_CLUSTER_ADDON, "helloworld", namespace=cluster)
    available = condition(found, "Available")
    return str(available.get("status")), str(available.get("reason"))


async def missing(read: object) -> bool:
    try:
        await read  # type: ignore[misc]
    except ApiError as err:
        return err.code == 404
    return False


async def test_enable_register_run_lose_and_disable(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"hw-{unique}"
    managed = await embedded(tmp_path, "m")
    k = ["--kubeconfig", str(hub.kubeconfig)]
    try:
        async with running_agent(api, hub, managed, cluster, addons=FAST):
            # The hub made the add-on's ClusterManagementAddOn when it started.
            await eventually(lambda: api.get(ocm.CLUSTER_MANAGEMENT_ADDON, "helloworld"))
            done = await asyncio.to_thread(
                pyocm, "addon", "enable", "--names", "helloworld", "--clusters", cluster, *k
            )
            assert done.returncode == 0, done.stderr

            # Registered: the CSR approved by the add-on's rules, the Secret on the
            # cluster, the agent's permission on the hub, the agent's manifests in a work.
            async def approved() -> bool:
                labels = f"{wellknown.ADDON_NAME_LABEL}=helloworld"
                csrs = (await api.list(kinds.CSR, labels=labels))["items"]
                mine = [c for c in csrs if cluster in c["metadata"]["name"]]
                reasons = [c["reason"] for c in mine[0]["status"]["conditions"]] if mine else []
                return "AutoApprovedByHubCSRApprovingController" in reasons

            await eventually(approved)
            secret = await eventually(
                lambda: managed.api.get(
                    kinds.SECRET, "helloworld-hub-kubeconfig", namespace=INSTALL_NS
                )
            )
            assert b"kind: Config" in base64.b64decode(secret["data"]["kubeconfig"])
            await eventually(lambda: api.get(kinds.ROLE_BINDING, ROLE_BINDING, namespace=cluster))
            await eventually(
                lambda: api.get(ocm.MANIFEST_WORK, "addon-helloworld-deploy-0", namespace=cluster)
            )
            assert await available(api, cluster) == ("Unknown", "ManagedClusterAddOnLeaseNotFound")

            # The agent as a process: its Lease makes the add-on Available, and it copies
            # the cluster's ConfigMaps with the hub credential it was issued.
            agent = Running(
                "addon", "agent", "helloworld", "--kubeconfig", str(managed.kubeconfig),
                "--cluster-name", cluster, "--addon-namespace", INSTALL_NS,
            )  # fmt: skip
            try:

                async def up() -> bool:
                    return await available(api, cluster) == (
                        "True",
                        "ManagedClusterAddOnLeaseUpdated",
                    )

                await eventually(up)
                body = {"metadata": {"name": "hello", "namespace": cluster}, "data": {"a": "b"}}
                await api.create(kinds.CONFIGMAP, body)
                copied = await eventually(
                    lambda: managed.api.get(kinds.CONFIGMAP, "hello", namespace=INSTALL_NS)
                )
                assert copied["data"] == {"a": "b"}
            finally:
                agent.stop()

            # The agent stopped: its Lease runs out and Available says so.
            async def lost() -> bool:
                status, reason = await available(api, cluster)
                return status != "True" and reason == "ManagedClusterAddOnLeaseUpdateStopped"

            await eventually(lost)

            done = await asyncio.to_thread(
                pyocm, "addon", "disable", "--names", "helloworld", "--clusters", cluster, *k
            )
            assert done.returncode == 0, done.stderr

            async def removed() -> bool:
                return all(
                    [
                        await missing(
                            api.get(ocm.MANAGED_CLUSTER_ADDON, "helloworld", namespace=cluster)
                        ),
                        await missing(
                            api.get(
                                ocm.MANIFEST_WORK, "addon-helloworld-deploy-0", namespace=cluster
                            )
                        ),
                        await missing(api.get(kinds.ROLE_BINDING, ROLE_BINDING, namespace=cluster)),
                        await missing(
                            managed.api.get(
                                kinds.SECRET, "helloworld-hub-kubeconfig", namespace=INSTALL_NS
                            )
                        ),
                    ]
                )

            await eventually(removed)
    finally:
        await managed.stop()
