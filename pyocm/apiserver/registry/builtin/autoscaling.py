"""``autoscaling/v2`` HorizontalPodAutoscaler: stored, defaulted, validated and printed
as kube-apiserver 1.30 does. No autoscaler acts on it here (no metrics exist): its status
is what a client writes through ``/status``. (Kubernetes also serves the older
``autoscaling/v1``; only v2, the preferred version, is served here.)"""

from __future__ import annotations

import copy
from datetime import datetime

from pyocm.apiserver.registry.builtin.poddefaults import Obj, child, items, mapping
from pyocm.apiserver.registry.builtin.printcells import column, get, int_at
from pyocm.apiserver.registry.builtin.workloadstrategy import WorkloadStrategy
from pyocm.apiserver.registry.printing import AGE, NAME
from pyocm.apiserver.registry.resources import ResourceInfo, SubresourceInfo
from pyocm.apiserver.registry.strategy import STATUS
from pyocm.kube import names
from pyocm.kube.status import FieldError, invalid, not_supported, required

#: ``autoscaling.DefaultCPUUtilization``.
DEFAULT_CPU_UTILIZATION = 80
_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
             "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                          {"type": "Percent", "value": 100, "periodSeconds": 15}]}  # fmt: skip
_SCALE_DOWN = {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
               "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}  # fmt: skip
_SOURCE_TYPES = ["Object", "Pods", "Resource", "External", "ContainerResource"]
_SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource",
                  "External": "external", "ContainerResource": "containerResource"}  # fmt: skip


def default(obj: Obj) -> None:
    """``SetDefaults_HorizontalPodAutoscaler``: one replica at least, CPU at 80% when no
    metric is given, and a given behavior completed with the default rules."""
    spec = child(obj, "spec")
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for key, rules in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            given = mapping(behavior, key)
            behavior[key] = {
                **copy.deepcopy(rules),
                **{k: v for k, v in given.items() if v is not None},
            }


def validate(obj: Obj) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerSpec``: replica bounds, the target, the metrics'
    types."""
    spec = mapping(obj, "spec")
    errs: list[FieldError] = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if isinstance(low, int) and low < 1:
        errs.append(invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        errs.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and high < low:
        message = "must be greater than or equal to `minReplicas`"
        errs.append(invalid("spec.maxReplicas", high, message))
    target = mapping(spec, "scaleTargetRef")
    found = _reference(target, "spec.scaleTargetRef")
    if found:
        return errs + found
    for i, metric in enumerate(items(spec, "metrics")):
        kind = metric.get("type") or ""
        path = f"spec.metrics[{i}].type"
        if not kind:
            errs.append(required(path, "must specify a metric source type"))
        if kind not in _SOURCE_TYPES:
            errs.append(not_supported(path, kind, _SOURCE_TYPES))
    return errs


def _reference(ref: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        value = str(ref.get(key) or "")
        if not value:
            errs.append(required(f"{path}.{key}"))
        errs += [invalid(f"{path}.{key}", value, m) for m in names.is_path_segment_name(value)]
    return errs


def _target(spec: Obj, current: Obj | None, name: str) -> str:
    """One metric of ``formatHPAMetrics``."""
    target = mapping(spec, "target")
    if target.get("averageValue") is not None:
        now = (current or {}).get("averageValue")
        shown = f"{now if now is not None else '<unknown>'}/{target['averageValue']}"
        return f"{name}: {shown}" if name else shown
    if target.get("value") is not None:
        now = (current or {}).get("value")
        return f"{now if now is not None else '<unknown>'}/{target['value']}"
    now = (current or {}).get("averageUtilization")
    wanted = target.get("averageUtilization")
    shown = f"{f'{now}%' if now is not None else '<unknown>'}/{f'{wanted}%' if wanted is not None else '<auto>'}"
    return f"{name}: {shown}"


def _metrics(obj: Obj, _: datetime) -> str:
    specs = items(mapping(obj, "spec"), "metrics")
    if not specs:
        return "<none>"
    statuses = items(mapping(obj, "status"), "currentMetrics")
    shown = []
    for i, metric in enumerate(specs):
        field = _SOURCE_FIELDS.get(str(metric.get("type") or ""))
        if field is None:
            shown.append("<unknown type>")
            continue
        source = mapping(metric, field)
        current = mapping(statuses[i], field).get("current") if i < len(statuses) else None
        name = str(source.get("name") or "") if field in ("resource", "containerResource") else ""
        text = _target(source, current if isinstance(current, dict) else None, name)
        if field in ("object", "external") and "averageValue" in mapping(source, "target"):
            text += " (avg)"
        shown.append(text)
    if len(shown) > 2:
        return ", ".join(shown[:2]) + f" + {len(shown) - 2} more..."
    return ", ".join(shown)


COLUMNS = (
    NAME,
    column(
        "Reference",
        "string",
        lambda o, _: (
            f"{get(o, 'spec', 'scaleTargetRef', 'kind') or ''}/{get(o, 'spec', 'scaleTargetRef', 'name') or ''}"
        ),
    ),
    column("Targets", "string", _metrics),
    column("MinPods", "string", lambda o, _: str(get(o, "spec", "minReplicas") or "<unset>")),
    column("MaxPods", "string", lambda o, _: int_at(o, "spec", "maxReplicas")),
    column("Replicas", "string", lambda o, _: int_at(o, "status", "currentReplicas")),
    AGE,
)


def resources() -> list[ResourceInfo]:
    strategy = WorkloadStrategy(
        default=default, validate=validate, initial_status={"desiredReplicas": 0}
    )
    info = ResourceInfo(
        group="autoscaling",
        version="v2",
        kind="HorizontalPodAutoscaler",
        plural="horizontalpodautoscalers",
        singular="horizontalpodautoscaler",
        namespaced=True,
        strategy=strategy,
        columns=COLUMNS,
        short_names=("hpa",),
        categories=("all",),
        subresources=(SubresourceInfo(STATUS),),
    )
    return [info]
