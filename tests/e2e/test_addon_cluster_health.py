"""Add-on health follows a silent cluster through a real hub: once the hub's lease
controller finds a cluster's agent stopped renewing its lease (Available Unknown),
every ManagedClusterAddOn of that cluster is Available Unknown with the cluster's
reason and message (upstream's registration healthcheck_controller.go); the add-ons of
a cluster still Available keep what their agent reported.

No agents run: the test writes what they would report, and the hub's lease controller
judges the lease it created itself when the cluster was accepted."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]
NOW = "2024-01-01T00:00:00Z"
LEASE_AVAILABLE = {
    "type": "Available",
    "status": "True",
    "reason": "ManagedClusterAddOnLeaseUpdated",
    "message": "hello add-on is available.",
    "lastTransitionTime": NOW,
}


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    return ocm_hub


async def accepted(api: Api, name: str) -> None:
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}}
    )

    async def namespace_made() -> bool:
        await api.get(kinds.NAMESPACE, name)
        found = await api.get(ocm.MANAGED_CLUSTER, name)
        return conditions.find(conditions.of(found), wellknown.CLUSTER_HUB_ACCEPTED) is not None

    await eventually(namespace_made)


async def report_available(api: Api, cluster: str) -> None:
    """What the cluster's agent writes when its API server is healthy."""

    async def written() -> bool:
        found = await api.get(ocm.MANAGED_CLUSTER, cluster)
        kept = [c for c in conditions.of(found) if c.get("type") != wellknown.CLUSTER_AVAILABLE]
        available = {
            "type": wellknown.CLUSTER_AVAILABLE,
            "status": "True",
            "reason": "ManagedClusterAvailable",
            "message": "Managed cluster is available",
            "lastTransitionTime": NOW,
        }
        await api.patch(
            ocm.MANAGED_CLUSTER,
            cluster,
            {
                "metadata": {"resourceVersion": found["metadata"]["resourceVersion"]},
                "status": {"conditions": [*kept, available]},
            },
            subresource="status",
        )
        return True

    await eventually(written)


async def addon(api: Api, cluster: str, name: str, *, reported: bool = True) -> None:
    """An add-on, Available as its agent's Lease made it (``reported``)."""
    await api.create(
        ocm.MANAGED_CLUSTER_ADDON, {"metadata": {"name": name, "namespace": cluster}, "spec": {}}
    )
    if reported:
        await api.patch(
            ocm.MANAGED_CLUSTER_ADDON,
            name,
            {"status": {"conditions": [LEASE_AVAILABLE]}},
            namespace=cluster,
            subresource="status",
        )


async def available(api: Api, cluster: str, name: str) -> tuple[str, str, str]:
    found = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
    condition = conditions.find(conditions.of(found), wellknown.ADDON_AVAILABLE) or {}
    return condition.get("status", ""), condition.get("reason", ""), condition.get("message", "")


async def test_addons_of_an_unknown_cluster_are_unknown_and_others_untouched(
    api: Api, unique: str
) -> None:
    healthy, silent = f"healthy-{unique}", f"silent-{unique}"
    try:
        # A cluster whose agent reports, with an add-on it reported Available.
        await accepted(api, healthy)
        await report_available(api, healthy)
        await addon(api, healthy, "hello")
        # Another, whose agent reported its add-ons and then fell silent: a short lease
        # makes the hub's lease controller call it Unknown within seconds.
        await accepted(api, silent)
        await addon(api, silent, "hello")
        await addon(api, silent, "second")
        await api.patch(ocm.MANAGED_CLUSTER, silent, {"spec": {"leaseDurationSeconds": 1}})

        async def cluster_unknown() -> Obj:
            found = await api.get(ocm.MANAGED_CLUSTER, silent)
            condition = conditions.find(conditions.of(found), wellknown.CLUSTER_AVAILABLE)
            assert condition is not None and condition["status"] == "Unknown"
            return condition

        unknown = await eventually(cluster_unknown, timeout=30)
        assert (unknown["reason"], unknown["message"]) == (
            "ManagedClusterLeaseUpdateStopped",
            "Registration agent stopped updating its lease.",
        )
        expected = ("Unknown", unknown["reason"], unknown["message"])

        async def addons_unknown() -> bool:
            for name in ("hello", "second"):
                assert await available(api, silent, name) == expected
            return True

        await eventually(addons_unknown)
        # An add-on enabled while its cluster is already Unknown is Unknown too.
        await addon(api, silent, "late", reported=False)

        async def late_unknown() -> bool:
            assert await available(api, silent, "late") == expected
            return True

        await eventually(late_unknown)
        # The healthy cluster's add-on was decided before (its cluster's changes came
        # first to the same one-worker queue) and kept what its agent reported.
        assert await available(api, healthy, "hello") == (
            "True",
            LEASE_AVAILABLE["reason"],
            LEASE_AVAILABLE["message"],
        )
    finally:
        for cluster in (healthy, silent):
            with contextlib.suppress(ApiError):
                await api.delete(ocm.MANAGED_CLUSTER, cluster)
