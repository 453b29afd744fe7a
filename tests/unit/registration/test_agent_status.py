"""The agent's status computation over an in-memory managed side: the ManagedSide
protocol is what the fleet simulator implements too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pyocm.api import conditions, wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.registration.agent.status import (
    ClaimOptions,
    StatusReporter,
    select_claims,
    sum_resources,
)

Obj = dict[str, Any]
LABEL = "clusterset.open-cluster-management.io/hub"


class MemorySide:
    def __init__(self) -> None:
        self.healthy = True
        self.node_list: list[Obj] = [
            {
                "status": {
                    "capacity": {"cpu": "4", "memory": "8Gi"},
                    "allocatable": {"cpu": "3900m", "memory": "7Gi"},
                }
            },
            {
                "spec": {"unschedulable": True},
                "status": {
                    "capacity": {"cpu": "2", "memory": "4Gi"},
                    "allocatable": {"cpu": "2", "memory": "4Gi"},
                },
            },
        ]
        self.claim_list: list[Obj] = []
        self.namespaces: dict[str, dict[str, str]] = {"old": {LABEL: "true"}, "mine": {}}
        self.refused: set[str] = set()

    async def health(self) -> tuple[bool, str]:
        return self.healthy, "status code: 500, etcd failed"

    async def nodes(self) -> list[Obj]:
        return self.node_list

    async def version(self) -> str:
        return "v1.31.2"

    async def claims(self) -> list[Obj]:
        return self.claim_list

    async def labelled_namespaces(self, label: str) -> list[str]:
        return [n for n, labels in self.namespaces.items() if labels.get(label) == "true"]

    async def label_namespace(self, name: str, *, label: str, value: str) -> None:
        if name in self.refused:
            raise ApiError(
                code=403, reason="Forbidden", message=f'namespaces "{name}" is forbidden'
            )
        self.namespaces.setdefault(name, {})[label] = value


def accepted_cluster() -> Obj:
    return {
        "status": {
            "conditions": [
                {
                    "type": wellknown.CLUSTER_HUB_ACCEPTED,
                    "status": "True",
                    "reason": "x",
                    "message": "x",
                }
            ],
            "capacity": {"example.com/gpu": "1"},
        }
    }


def claim(name: str, value: str = "v", **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}, "spec": {"value": value}}


def test_sums_and_claims() -> None:
    side = MemorySide()
    assert sum_resources(side.node_list, "capacity") == {"cpu": "6", "memory": "12Gi"}
    claims = [
        claim("zeta"),
        claim("alpha"),
        claim("id.k8s.io"),
        claim("x.mine"),
        claim("hidden", **{wellknown.SPOKE_ONLY_LABEL: "true"}),
    ]
    chosen, cut = select_claims(claims, ClaimOptions(max_custom=1, reserved_suffixes=(".mine",)))
    assert [c["name"] for c in chosen] == ["id.k8s.io", "x.mine", "alpha"]
    assert cut == 1


async def test_status_is_reported_only_once_accepted() -> None:
    reporter = StatusReporter(
        MemorySide(), clock=FakeClock(), claims=ClaimOptions(), namespace_label=LABEL
    )  # type: ignore[arg-type]
    assert await reporter.desired({"status": {"conditions": []}}) is None
    status = await reporter.desired(accepted_cluster())
    assert status is not None
    assert conditions.is_true(status["conditions"], wellknown.CLUSTER_JOINED)
    assert conditions.is_true(status["conditions"], wellknown.CLUSTER_AVAILABLE)
    assert status["version"] == {"kubernetes": "v1.31.2"}
    assert status["capacity"] == {"example.com/gpu": "1", "cpu": "6", "memory": "12Gi"}, (
        "others' capacity is kept"
    )
    assert status["allocatable"] == {"cpu": "3900m", "memory": "7Gi"}, (
        "unschedulable nodes add no allocatable"
    )


async def test_available_turns_false_only_after_twenty_seconds_of_failures() -> None:
    side = MemorySide()
    clock = FakeClock(start=datetime(2026, 1, 1, tzinfo=UTC))
    reporter = StatusReporter(side, clock=clock, claims=ClaimOptions(), namespace_label=LABEL)  # type: ignore[arg-type]
    cluster = accepted_cluster()
    cluster["status"] = await reporter.desired(cluster)
    side.healthy = False
    for _ in range(4):
        status = await reporter.desired(cluster)
        assert status is not None and conditions.is_true(
            status["conditions"], wellknown.CLUSTER_AVAILABLE
        )
        assert reporter.retry_after == 5.0
        clock.advance(5)
    status = await reporter.desired(cluster)
    assert status is not None
    available = conditions.find(status["conditions"], wellknown.CLUSTER_AVAILABLE) or {}
    assert available["status"] == "False"
    assert available["reason"] == "ManagedClusterKubeAPIServerUnavailable"
    assert available["message"] == "The kube-apiserver is not ok, status code: 500, etcd failed"
    assert timedelta(seconds=20) <= clock.now() - datetime(2026, 1, 1, tzinfo=UTC)


async def test_managed_namespaces_are_applied_and_released() -> None:
    side = MemorySide()
    side.refused.add("locked")
    reporter = StatusReporter(side, clock=FakeClock(), claims=ClaimOptions(), namespace_label=LABEL)  # type: ignore[arg-type]
    cluster = accepted_cluster()
    cluster["status"]["managedNamespaces"] = [
        {"name": "apps", "clusterSet": "team"},
        {"name": "locked", "clusterSet": "team"},
    ]
    status = await reporter.desired(cluster)
    assert status is not None
    applied, locked = status["managedNamespaces"]
    assert applied["conditions"][0]["reason"] == "NamespaceApplied"
    assert locked["conditions"][0]["status"] == "False"
    assert locked["conditions"][0]["reason"] == "NamespaceApplyFailed"
    assert locked["conditions"][0]["message"].startswith("Failed to apply namespace: ")
    assert side.namespaces["apps"] == {LABEL: "true"}
    assert side.namespaces["old"] == {LABEL: "false"}, "no longer listed: kept, marked false"
    assert side.namespaces["mine"] == {}, "namespaces this hub never managed are left alone"
    assert cluster["status"]["managedNamespaces"][0].get("conditions") is None, "input untouched"
