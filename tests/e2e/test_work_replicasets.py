"""ManifestWorkReplicaSets on a real hub with the gate ``ManifestWorkReplicaSet`` on: a set
whose placement is missing says so; with the gate off nothing acts on a set.

(Deploy, rollout and cleanup against written PlacementDecisions need a hub whose own
placement controller does not rewrite them: to follow.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

OWNER = "work.open-cluster-management.io/manifestworkreplicaset"
PLACEMENT_NAME = "work.open-cluster-management.io/placementname"
FINALIZER = "work.open-cluster-management.io/manifest-work-cleanup"
TEMPLATE = {
    "workload": {
        "manifests": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "default"},
                "data": {"a": "b"},
            }
        ]
    }
}


@pytest.fixture(scope="module")
def gated_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = HubProcess(
        tmp_path_factory.mktemp("mwrs-hub"),
        extra_args=["--feature-gates", "ManifestWorkReplicaSet=true"],
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest_asyncio.fixture
async def hub_api(gated_hub: HubProcess) -> AsyncIterator[Api]:
    async with Api.from_kubeconfig(gated_hub.kubeconfig) as client:
        yield client


async def namespaces(api: Api, *names: str) -> None:
    for name in names:
        await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})


async def replica_set(api: Api, ns: str, name: str, ref: dict[str, Any]) -> None:
    await api.create(
        ocm.MANIFEST_WORK_REPLICA_SET,
        {
            "metadata": {"name": name, "namespace": ns, "labels": {"team": "a"}},
            "spec": {"placementRefs": [ref], "manifestWorkTemplate": TEMPLATE},
        },
    )


async def works_of(api: Api, ns: str, name: str) -> dict[str, Any]:
    """The set's works by cluster."""
    found = await api.list(ocm.MANIFEST_WORK, labels=f"{OWNER}={ns}.{name}")
    return {w["metadata"]["namespace"]: w for w in found["items"]}


def condition_of(obj: Any, type: str) -> tuple[str, str]:
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == type:
            return c["status"], c["reason"]
    raise AssertionError(f"no {type} condition yet")


async def test_a_missing_placement_is_reported(hub_api: Api, unique: str) -> None:
    ns = f"mwrs-{unique}"
    await namespaces(hub_api, ns)
    await replica_set(hub_api, ns, "app", {"name": "nowhere"})

    async def reported() -> bool:
        got = await hub_api.get(ocm.MANIFEST_WORK_REPLICA_SET, "app", namespace=ns)
        assert condition_of(got, "PlacementVerified") == ("False", "PlacementDecisionNotFound")
        return True

    await eventually(reported)


async def test_nothing_acts_with_the_gate_off(api: Api, unique: str, hub: HubProcess) -> None:
    ns, cluster = f"mwrs-{unique}", f"c-{unique}"
    await namespaces(api, ns, cluster)
    await api.create(ocm.PLACEMENT, {"metadata": {"name": "p", "namespace": ns}, "spec": {}})
    await replica_set(api, ns, "app", {"name": "p"})
    await asyncio.sleep(3)
    assert await works_of(api, ns, "app") == {}
    got = await api.get(ocm.MANIFEST_WORK_REPLICA_SET, "app", namespace=ns)
    assert not got["metadata"].get("finalizers") and not got.get("status", {}).get("conditions")


@pytest.fixture
def hub(ocm_hub: HubProcess) -> HubProcess:
    """The shared hub (the gate at its default, off) for the ``api`` fixture."""
    return ocm_hub
