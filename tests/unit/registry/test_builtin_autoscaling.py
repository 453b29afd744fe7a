"""autoscaling/v2 HorizontalPodAutoscaler: defaults, validation and the printed row."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import autoscaling
from pyocm.apiserver.registry.printing import table
from pyocm.apiserver.registry.strategy import Context

CTX = Context(user=UserInfo(name="admin"), namespace="default")
Obj = dict[str, Any]
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def created(spec: Obj) -> Obj:
    obj: Obj = {"metadata": {"name": "web", "namespace": "default"}, "spec": spec}
    (info,) = autoscaling.resources()
    info.strategy.prepare_for_create(obj, CTX)
    return obj


def errors(spec: Obj) -> list[str]:
    (info,) = autoscaling.resources()
    return [e.message() for e in info.strategy.validate_create(created(spec), CTX)]


def test_defaults_add_a_cpu_target_and_complete_a_behavior() -> None:
    hpa = created(
        {
            "scaleTargetRef": TARGET,
            "maxReplicas": 5,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        }
    )
    spec = hpa["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert spec["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 60,
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    }
    assert spec["behavior"]["scaleUp"]["policies"][0] == {
        "type": "Pods",
        "value": 4,
        "periodSeconds": 15,
    }
    assert hpa["status"] == {"desiredReplicas": 0}
    assert "behavior" not in created({"scaleTargetRef": TARGET, "maxReplicas": 5})["spec"]


def test_validation() -> None:
    assert errors({"scaleTargetRef": TARGET, "maxReplicas": 5}) == []
    assert errors(
        {"scaleTargetRef": {"kind": "Deployment"}, "minReplicas": 3, "maxReplicas": 2}
    ) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
        "spec.scaleTargetRef.name: Required value",
    ]
    assert errors({"scaleTargetRef": TARGET, "maxReplicas": 0, "metrics": [{"type": "Magic"}]}) == [
        "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
        'spec.metrics[0].type: Unsupported value: "Magic": supported values: "Object", "Pods", "Resource", "External", "ContainerResource"',
    ]


def test_printed_row() -> None:
    hpa = created({"scaleTargetRef": TARGET, "maxReplicas": 5})
    hpa["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    hpa["status"] = {
        "currentReplicas": 2,
        "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}
        ],
    }
    now = datetime(2026, 1, 1, 0, 1, 0, tzinfo=UTC)
    found = table(autoscaling.COLUMNS, [hpa], include_object="None", revision=None, now=now)
    assert [c["name"] for c in found["columnDefinitions"]] == [
        "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age",
    ]  # fmt: skip
    assert found["rows"][0]["cells"] == ["web", "Deployment/web", "cpu: 40%/80%", "1", 5, 2, "60s"]
