"""The workload kinds whose writes do more than default and validate: Pods (the fields
kube's default admission plugins add, and the initial status with its QoS class),
Services (allocated values a write leaves out are kept) and Jobs (the generated
selector)."""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.builtin import (
    batchvalidation,
    corevalidation,
    workloaddefaults,
)
from pyocm.apiserver.registry.builtin.poddefaults import child, items
from pyocm.apiserver.registry.builtin.workloadstrategy import WorkloadStrategy, field
from pyocm.apiserver.registry.strategy import STATUS, Context, Obj
from pyocm.kube import quantity

#: The taints DefaultTolerationSeconds tolerates for five minutes on every pod.
_DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_QOS_RESOURCES = ("cpu", "memory")


def qos_class(spec: Obj) -> str:
    """``qos.GetPodQOS``: BestEffort without CPU or memory requests and limits,
    Guaranteed when every container limits both and requests equal limits, else
    Burstable."""
    requests: dict[str, quantity.Quantity] = {}
    limits: dict[str, quantity.Quantity] = {}
    guaranteed = True
    for container in items(spec, "initContainers") + items(spec, "containers"):
        resources = child(container, "resources")
        _add_positive(requests, resources.get("requests"))
        if set(_add_positive(limits, resources.get("limits"))) != set(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    same = all(name in limits and limits[name].value == v.value for name, v in requests.items())
    return "Guaranteed" if guaranteed and same and len(requests) == len(limits) else "Burstable"


def _add_positive(total: dict[str, quantity.Quantity], found: Any) -> list[str]:
    """Add the positive CPU and memory amounts of ``found`` to ``total``; their names."""
    names = []
    for name in _QOS_RESOURCES:
        value = found.get(name) if isinstance(found, dict) else None
        try:
            amount = quantity.parse_quantity(str(value)) if value is not None else None
        except quantity.QuantityError:
            amount = None
        if amount is not None and amount.value > 0:
            names.append(name)
            total[name] = total[name] + amount if name in total else amount
    return names


def _admission_defaults(spec: Obj) -> None:
    """What kube's default admission plugins add to a new pod: the ``default`` service
    account (ServiceAccount; the account's token volume is not mounted here, as no kubelet
    runs), priority 0 (Priority), and five-minute tolerations of not-ready and unreachable
    nodes (DefaultTolerationSeconds)."""
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    spec["serviceAccount"] = spec["serviceAccountName"]
    if not spec.get("priorityClassName") and spec.get("priority") is None:
        spec["priority"] = 0
    if spec.get("preemptionPolicy") is None:
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    tolerations = items(spec, "tolerations")
    for key in _DEFAULT_TOLERATIONS:
        if not any(_tolerates(t, key) for t in tolerations):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
    spec["tolerations"] = tolerations


def _tolerates(toleration: Obj, key: str) -> bool:
    if toleration.get("effect") not in (None, "", "NoExecute"):
        return False
    if not toleration.get("key"):
        return toleration.get("operator") == "Exists"
    return bool(toleration.get("key") == key)


class PodStrategy(WorkloadStrategy):
    def __init__(self) -> None:
        super().__init__(
            default=workloaddefaults.pod,
            validate=corevalidation.pod,
            validate_update=corevalidation.pod_update,
            initial_status={},
            generation=False,
            fields={
                "spec.nodeName": field("spec", "nodeName"),
                "spec.restartPolicy": field("spec", "restartPolicy"),
                "spec.schedulerName": field("spec", "schedulerName"),
                "spec.serviceAccountName": field("spec", "serviceAccountName"),
                "spec.hostNetwork": lambda o: field("spec", "hostNetwork")(o) or "false",
                "status.phase": field("status", "phase"),
                "status.podIP": field("status", "podIP"),
                "status.nominatedNodeName": field("status", "nominatedNodeName"),
            },
        )

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = child(obj, "spec")
        _admission_defaults(spec)
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def _needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_ports(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (
        kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
    )


def sync_cluster_ips(spec: Obj) -> None:
    """``clusterIP`` and ``clusterIPs[0]`` are one value: fill whichever is missing."""
    ips = spec.get("clusterIPs")
    if spec.get("clusterIP") and not ips:
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif isinstance(ips, list) and ips and not spec.get("clusterIP"):
        spec["clusterIP"] = ips[0]


def keep_allocated(spec: Obj, old: Obj) -> None:
    """``patchAllocatedValues``: an update that leaves out the cluster IPs, IP families
    or node ports the service was given keeps them (``kubectl replace`` of the file the
    service was created from works)."""
    if _needs_cluster_ip(spec) and _needs_cluster_ip(old):
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(key) and old.get(key):
                spec[key] = old[key]
    if _needs_node_ports(spec) and _needs_node_ports(old):
        new_ports = items(spec, "ports")
        used = {p.get("nodePort") for p in items(old, "ports")} & {
            p.get("nodePort") for p in new_ports
        }
        by_name = {p.get("name") or "": p.get("nodePort") for p in items(old, "ports")}
        for port in new_ports:
            previous = by_name.get(port.get("name") or "")
            if not port.get("nodePort") and previous and previous not in used:
                port["nodePort"] = previous


class ServiceStrategy(WorkloadStrategy):
    """Cluster IPs and node ports are allocated by :mod:`serviceips` (it needs the
    store); this keeps them through updates."""

    def __init__(self) -> None:
        super().__init__(
            default=workloaddefaults.service,
            validate=corevalidation.service,
            validate_update=corevalidation.service_update,
            initial_status={"loadBalancer": {}},
            generation=False,
            name_rule=corevalidation.dns1035_label,
        )

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        sync_cluster_ips(child(obj, "spec"))

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        super().prepare_for_update(obj, old, ctx)
        if ctx.subresource != STATUS:
            spec = child(obj, "spec")
            keep_allocated(spec, child(old, "spec"))
            sync_cluster_ips(spec)


class JobStrategy(WorkloadStrategy):
    def __init__(self) -> None:
        super().__init__(
            default=workloaddefaults.job,
            validate=batchvalidation.job,
            validate_update=batchvalidation.job_update,
            initial_status={},
            fields={"status.successful": lambda o: field("status", "succeeded")(o) or "0"},
        )

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        batchvalidation.generate_selector(obj)
