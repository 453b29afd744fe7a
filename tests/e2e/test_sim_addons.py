"""Add-ons on simulated clusters against a hub running helloworld: the real add-on
registration of each simulated agent (its CSR approved by the add-on's rules, the Secret
written into the cluster's memory, health from the Lease) with a simulated add-on agent
renewing the Lease."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.runtime.client import Api
from pyocm.sim.fleet import Fleet, FleetOptions
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.testing import HubProcess
from tests.agents import condition
from tests.conftest import hub_process
from tests.support import eventually

INSTALL_NS = "open-cluster-management-agent-addon"
SECRET = "helloworld-hub-kubeconfig"
#: Health looked at twice a second, so Available follows the Lease within the test.
FAST = AddOnOptions(health_period=0.5)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "sim-addon-hub", ["--addons", "helloworld"])


@contextlib.asynccontextmanager
async def running(fleet: Fleet) -> AsyncIterator[None]:
    task = asyncio.create_task(fleet.run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def mca(cluster: str) -> dict[str, object]:
    return {
        "metadata": {
            "name": "helloworld",
            "namespace": cluster,
            # v1alpha1's spec.installNamespace, as v1beta1 keeps it.
            "annotations": {wellknown.ADDON_INSTALL_NAMESPACE_ANNOTATION: INSTALL_NS},
        },
        "spec": {},
    }


async def in_spoke(spoke: MemorySpoke, kind: kinds.Kind, name: str) -> dict[str, object] | None:
    try:
        return await spoke.get(kind, name, namespace=INSTALL_NS)
    except ApiError as err:
        assert err.code == 404
        return None


async def test_simulated_clusters_register_their_addons_and_report_health(
    hub: HubProcess, api: Api, unique: str
) -> None:
    options = FleetOptions(
        clusters=2, prefix=f"{unique}-", join_rate=50, auto_accept=True, addons=FAST
    )
    fleet = Fleet(api, server=hub.url, ca_pem=hub.ca_pem, options=options)
    enabled, other = fleet.members
    async with running(fleet):
        await eventually(lambda: asyncio.sleep(0, fleet.counts().get("available") == 2), timeout=60)
        await api.create(ocm.MANAGED_CLUSTER_ADDON, mca(enabled.name))

        # Its own certificate: a CSR for this cluster's add-on, approved by its rules.
        async def approved() -> bool:
            labels = (
                f"{wellknown.ADDON_NAME_LABEL}=helloworld,"
                f"{wellknown.CLUSTER_NAME_LABEL}={enabled.name}"
            )
            csrs = (await api.list(kinds.CSR, labels=labels))["items"]
            reasons = [c["reason"] for csr in csrs for c in csr["status"].get("conditions", [])]
            return reasons == ["AutoApprovedByHubCSRApprovingController"]

        await eventually(approved, timeout=60)

        # The Secret in the cluster's memory, then the simulated agent's Lease, then
        # Available on the hub from that Lease.
        async def available() -> bool:
            found = await api.get(ocm.MANAGED_CLUSTER_ADDON, "helloworld", namespace=enabled.name)
            got = condition(found, wellknown.ADDON_AVAILABLE)
            return (got.get("status"), got.get("reason")) == (
                "True",
                "ManagedClusterAddOnLeaseUpdated",
            )

        await eventually(available, timeout=60)
        secret = await in_spoke(enabled.spoke, kinds.SECRET, SECRET)
        assert secret is not None
        data = secret["data"]
        assert isinstance(data, dict)
        assert base64.b64decode(data["cluster-name"]) == enabled.name.encode()
        assert b"kind: Config" in base64.b64decode(data["kubeconfig"])
        namespace = await enabled.spoke.get(kinds.NAMESPACE, INSTALL_NS)
        assert namespace["metadata"]["labels"] == {
            "open-cluster-management.io/created-by-klusterlet": "klusterlet"
        }
        lease = await in_spoke(enabled.spoke, kinds.LEASE, "helloworld")
        assert lease is not None
        assert fleet.addon_agents() == 1 and fleet.addon_leases() == 1
        assert await in_spoke(other.spoke, kinds.SECRET, SECRET) is None

        # Disabled: the agent's add-on side deletes the Secret, and the simulated add-on
        # agent, having no credential left, stops.
        await api.delete(ocm.MANAGED_CLUSTER_ADDON, "helloworld", namespace=enabled.name)

        async def removed() -> bool:
            gone = await in_spoke(enabled.spoke, kinds.SECRET, SECRET) is None
            return gone and fleet.addon_agents() == 0

        await eventually(removed, timeout=60)
