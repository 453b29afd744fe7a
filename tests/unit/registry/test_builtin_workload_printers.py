"""Workload and service kinds: the ``kubectl get`` rows kube-apiserver's printers make."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pyocm.apiserver.registry.builtin import coreprinters, workloadprinters
from pyocm.apiserver.registry.printing import Column, table

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
CREATED = "2026-01-01T11:55:00Z"
Obj = dict[str, Any]


def row(columns: tuple[Column, ...], obj: Obj) -> dict[str, Any]:
    obj = {
        "metadata": {"name": "x", "creationTimestamp": CREATED, **obj.get("metadata", {})},
        **obj,
    }
    found = table(columns, [obj], include_object="None", revision=None, now=NOW)
    names = [c["name"] for c in found["columnDefinitions"]]
    return dict(zip(names, found["rows"][0]["cells"], strict=True))


def test_deployment_row() -> None:
    obj = {
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "spec": {"containers": [{"name": "a", "image": "i:1"}, {"name": "b", "image": "j"}]}
            },
        },
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
    assert row(workloadprinters.DEPLOYMENT, obj) == {
        "Name": "x",
        "Ready": "2/3",
        "Up-to-date": 3,
        "Available": 2,
        "Age": "5m",
        "Containers": "a,b",
        "Images": "i:1,j",
        "Selector": "app=web",
    }


def pod(status: Obj, **spec: Any) -> Obj:
    return {"spec": {"containers": [{"name": "c"}, {"name": "d"}], **spec}, "status": status}


@pytest.mark.parametrize(
    ("status", "ready", "shown", "restarts"),
    [
        ({"phase": "Pending"}, "0/2", "Pending", "0"),
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "c",
                        "ready": True,
                        "state": {"running": {}},
                        "restartCount": 1,
                        "lastState": {"terminated": {"finishedAt": "2026-01-01T11:58:00Z"}},
                    },
                    {"name": "d", "ready": True, "state": {"running": {}}},
                ],
            },
            "2/2",
            "Running",
            "1 (2m ago)",
        ),
        (
            {
                "phase": "Pending",
                "containerStatuses": [
                    {"name": "c", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
                    {"name": "d", "ready": True, "state": {"running": {}}},
                ],
            },
            "1/2",
            "ImagePullBackOff",
            "0",
        ),
        (
            {
                "phase": "Failed",
                "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 3}}}],
            },
            "0/2",
            "ExitCode:3",
            "0",
        ),
    ],
)
def test_pod_rows(status: Obj, ready: str, shown: str, restarts: str) -> None:
    found = row(coreprinters.POD, pod(status))
    assert (found["Ready"], found["Status"], found["Restarts"]) == (ready, shown, restarts)


def test_pod_wide_columns_and_terminating() -> None:
    obj = pod({"phase": "Running", "podIPs": [{"ip": "10.0.0.9"}]}, nodeName="node-1")
    obj["metadata"] = {"deletionTimestamp": "2026-01-01T11:59:00Z"}
    found = row(coreprinters.POD, obj)
    assert (found["Status"], found["IP"], found["Node"]) == ("Terminating", "10.0.0.9", "node-1")
    assert (found["Nominated Node"], found["Readiness Gates"]) == ("<none>", "<none>")


def test_service_rows() -> None:
    cluster_ip = {
        "spec": {"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "selector": {"app": "a"},
                 "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
    }  # fmt: skip
    found = row(coreprinters.SERVICE, cluster_ip)
    assert [found[k] for k in ("Type", "Cluster-IP", "External-IP", "Port(s)", "Selector")] == [
        "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "app=a",
    ]  # fmt: skip
    balancer = {"spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.0.11"],
                         "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}}  # fmt: skip
    found = row(coreprinters.SERVICE, balancer)
    assert (found["External-IP"], found["Port(s)"]) == ("<pending>", "80:30080/TCP")
    headless = {"spec": {"type": "ClusterIP", "clusterIPs": ["None"]}}
    assert row(coreprinters.SERVICE, headless)["Port(s)"] == "<none>"


@pytest.mark.parametrize(
    ("conditions", "deleting", "shown"),
    [
        ([], False, "Running"),
        ([{"type": "Complete", "status": "True"}], False, "Complete"),
        ([{"type": "Failed", "status": "True"}], False, "Failed"),
        ([{"type": "Suspended", "status": "True"}], False, "Suspended"),
        ([{"type": "Suspended", "status": "True"}], True, "Terminating"),
        ([{"type": "Complete", "status": "False"}], False, "Running"),
    ],
)
def test_job_status_column(conditions: list[Obj], deleting: bool, shown: str) -> None:
    obj: Obj = {"spec": {"completions": 2}, "status": {"succeeded": 1, "conditions": conditions}}
    if deleting:
        obj["metadata"] = {"deletionTimestamp": CREATED}
    found = row(workloadprinters.JOB, obj)
    assert (found["Status"], found["Completions"]) == (shown, "1/2")


def test_job_duration_and_parallel_completions() -> None:
    obj = {
        "spec": {"parallelism": 3},
        "status": {"startTime": "2026-01-01T11:56:00Z", "completionTime": "2026-01-01T11:57:30Z"},
    }
    found = row(workloadprinters.JOB, obj)
    assert (found["Completions"], found["Duration"]) == ("0/1 of 3", "90s")
    assert row(workloadprinters.JOB, {"spec": {}})["Duration"] == ""


def test_other_workload_rows() -> None:
    sts = row(
        workloadprinters.STATEFUL_SET, {"spec": {"replicas": 3}, "status": {"readyReplicas": 1}}
    )
    assert sts["Ready"] == "1/3"
    rs = row(
        workloadprinters.REPLICA_SET,
        {"spec": {"replicas": 2, "selector": {}}, "status": {"replicas": 2}},
    )
    assert (rs["Desired"], rs["Current"], rs["Ready"], rs["Selector"]) == (2, 2, 0, "<none>")
    ds = row(
        workloadprinters.DAEMON_SET,
        {"spec": {"template": {"spec": {"nodeSelector": {"b": "2", "a": "1"}}}}},
    )
    assert ds["Node Selector"] == "a=1,b=2"
    cj = row(workloadprinters.CRON_JOB, {"spec": {"schedule": "*/5 * * * *", "suspend": False}})
    assert (cj["Schedule"], cj["Timezone"], cj["Suspend"], cj["Last Schedule"]) == (
        "*/5 * * * *", "<none>", False, "<none>",
    )  # fmt: skip


def test_core_and_networking_rows() -> None:
    addresses = [{"ip": f"10.0.0.{i}"} for i in range(1, 5)]
    ep = row(
        coreprinters.ENDPOINTS, {"subsets": [{"addresses": addresses, "ports": [{"port": 80}]}]}
    )
    assert ep["Endpoints"] == "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."
    assert row(coreprinters.ENDPOINTS, {})["Endpoints"] == "<none>"
    claim = {
        "spec": {"volumeName": "pv-1", "storageClassName": "fast", "volumeMode": "Filesystem"},
        "status": {
            "phase": "Bound",
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
        },
    }
    found = row(coreprinters.PERSISTENT_VOLUME_CLAIM, claim)
    assert [found[k] for k in ("Status", "Volume", "Capacity", "Access Modes", "StorageClass")] == [
        "Bound", "pv-1", "1Gi", "RWO", "fast",
    ]  # fmt: skip
    pdb = row(coreprinters.POD_DISRUPTION_BUDGET, {"spec": {"maxUnavailable": "10%"}})
    assert (pdb["Min Available"], pdb["Max Unavailable"]) == ("N/A", "10%")
    netpol = row(coreprinters.NETWORK_POLICY, {"spec": {"podSelector": {}}})
    assert netpol["Pod-Selector"] == "<none>"
    ingress = row(coreprinters.INGRESS, {"spec": {"rules": [{"host": "a.com"}], "tls": [{}]}})
    assert (ingress["Class"], ingress["Hosts"], ingress["Ports"]) == ("<none>", "a.com", "80, 443")
    owned = {"metadata": {"ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}]},
        "revision": 2}  # fmt: skip
    found = row(coreprinters.CONTROLLER_REVISION, owned)
    assert (found["Controller"], found["Revision"]) == ("statefulset.apps/db", 2)
