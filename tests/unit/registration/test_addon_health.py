"""The hub's add-on health check (upstream healthcheck_controller.go): a cluster whose
Available is Unknown makes each of its add-ons Available Unknown with the cluster's
reason and message; any other cluster state leaves them alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.kube import status
from pyocm.kube.kinds import Kind
from pyocm.registration.hub.addonhealth import AddonHealthController
from pyocm.registration.hub.manager import build_hub_manager
from pyocm.runtime.informer import Informer

Obj = dict[str, Any]
REASON = "ManagedClusterLeaseUpdateStopped"
MESSAGE = "Registration agent stopped updating its lease."
LEASE_AVAILABLE = {
    "type": "Available",
    "status": "True",
    "reason": "ManagedClusterLeaseUpdated",
    "message": "hello add-on is available.",
    "lastTransitionTime": "2024-01-01T00:00:00Z",
}


def cluster(available: str | None, name: str = "c1") -> Obj:
    found: list[Obj] = [
        {
            "type": "HubAcceptedManagedCluster",
            "status": "True",
            "reason": "HubClusterAdminAccepted",
            "message": "Accepted by hub cluster admin",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }
    ]
    if available is not None:
        found.append(
            {
                "type": "ManagedClusterConditionAvailable",
                "status": available,
                "reason": REASON if available == "Unknown" else "ManagedClusterAvailable",
                "message": MESSAGE if available == "Unknown" else "Managed cluster is available",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        )
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"hubAcceptsClient": True},
        "status": {"conditions": found},
    }


def mca(name: str, namespace: str = "c1", *, conditions: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": f"{name}-7"},
        "spec": {},
        "status": {"conditions": conditions or []},
    }


class Hub:
    def __init__(self, *, refuse: str | None = None) -> None:
        self.patches: dict[str, Obj] = {}
        self.refuse = refuse

    async def patch(self, kind: Any, name: str, patch: Obj, **options: Any) -> Obj:
        assert kind == ocm.MANAGED_CLUSTER_ADDON
        assert options == {"namespace": "c1", "subresource": "status"}
        if name == self.refuse:
            raise status.internal("the store is down")
        self.patches[name] = patch
        return patch


def informer(kind: Kind, *objs: Obj) -> Informer:
    made = Informer(object(), kind)  # type: ignore[arg-type]
    for obj in objs:
        made.store.upsert(copy.deepcopy(obj))
    return made


async def reconcile(hub: Hub, clusters: list[Obj], mcas: list[Obj]) -> Hub:
    controller = AddonHealthController(
        hub,  # type: ignore[arg-type]
        informer(ocm.MANAGED_CLUSTER, *clusters),
        informer(ocm.MANAGED_CLUSTER_ADDON, *mcas),
        clock=FakeClock(),
    )
    await controller.reconcile("c1")
    return hub


def available(patch: Obj) -> Obj:
    [found] = [c for c in patch["status"]["conditions"] if c["type"] == "Available"]
    return found


@pytest.mark.parametrize("state", [None, "True", "False"])
async def test_a_cluster_not_unknown_leaves_its_addons_alone(state: str | None) -> None:
    hub = await reconcile(Hub(), [cluster(state)], [mca("hello")])
    assert hub.patches == {}


async def test_a_missing_cluster_is_nothing_to_do() -> None:
    hub = await reconcile(Hub(), [], [mca("hello")])
    assert hub.patches == {}


async def test_an_unknown_cluster_makes_each_of_its_addons_unknown_with_its_reason() -> None:
    hub = await reconcile(
        Hub(),
        [cluster("Unknown"), cluster("True", name="c2")],
        [
            mca("hello", conditions=[LEASE_AVAILABLE]),
            mca("other"),
            mca("elsewhere", namespace="c2"),
        ],
    )
    assert sorted(hub.patches) == ["hello", "other"]
    for name, patch in hub.patches.items():
        # Guarded by the version it was computed from, as upstream's patcher.
        assert patch["metadata"] == {"resourceVersion": f"{name}-7"}
        found = available(patch)
        assert (found["status"], found["reason"], found["message"]) == ("Unknown", REASON, MESSAGE)
    assert (
        hub.patches["hello"]["status"]["conditions"][0]["lastTransitionTime"]
        != (LEASE_AVAILABLE["lastTransitionTime"])
    )


async def test_addons_already_unknown_alike_are_not_patched_again() -> None:
    unknown = {**LEASE_AVAILABLE, "status": "Unknown", "reason": REASON, "message": MESSAGE}
    hub = await reconcile(Hub(), [cluster("Unknown")], [mca("hello", conditions=[unknown])])
    assert hub.patches == {}


async def test_one_failed_write_does_not_stop_the_others_and_is_retried() -> None:
    hub = Hub(refuse="a-first")
    with pytest.raises(status.ApiError):
        await reconcile(hub, [cluster("Unknown")], [mca("a-first"), mca("b-second")])
    assert list(hub.patches) == ["b-second"]


def test_the_hub_runs_it_on_clusters_and_addons() -> None:
    manager = build_hub_manager(object(), clock=FakeClock())  # type: ignore[arg-type]
    [controller] = [c for c in manager._controllers if c.name == "addon-healthcheck"]
    assert {informer.kind for informer in controller._informers} == {
        ocm.MANAGED_CLUSTER,
        ocm.MANAGED_CLUSTER_ADDON,
    }
