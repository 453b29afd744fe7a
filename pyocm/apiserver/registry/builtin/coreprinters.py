"""``kubectl get`` columns of Pods, Services, Endpoints, PersistentVolumeClaims,
PodDisruptionBudgets, NetworkPolicies, Ingresses and ControllerRevisions, as
kube-apiserver 1.30's printers fill them (wide columns included, priority 1)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyocm.apiserver.registry.builtin.poddefaults import mapping
from pyocm.apiserver.registry.builtin.printcells import (
    Obj,
    column,
    dicts,
    format_labels,
    format_selector,
    get,
    int_at,
)
from pyocm.apiserver.registry.printing import AGE, NAME, human_duration
from pyocm.kube import timefmt

_NONE = "<none>"


def _when(value: Any) -> datetime | None:
    try:
        return timefmt.parse_time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _container_reason(status: Obj, reason: str) -> tuple[str, bool]:
    """A regular container's effect on the pod's shown reason, and whether it is ready
    and running."""
    state = mapping(status, "state")
    waiting, terminated = state.get("waiting"), state.get("terminated")
    if isinstance(waiting, dict) and waiting.get("reason"):
        return str(waiting["reason"]), False
    if isinstance(terminated, dict):
        if terminated.get("reason"):
            return str(terminated["reason"]), False
        if terminated.get("signal"):
            return f"Signal:{terminated['signal']}", False
        return f"ExitCode:{terminated.get('exitCode', 0)}", False
    return reason, bool(status.get("ready")) and isinstance(state.get("running"), dict)


def _pod_summary(pod: Obj) -> tuple[int, int, str, int, datetime | None]:
    """``printPod``'s ready count, container count, reason, restarts and last restart.
    (Init containers count only when they are still running the pod's initialization.)"""
    status = mapping(pod, "status")
    reason = str(status.get("reason") or status.get("phase") or "")
    for condition in dicts(status, "conditions"):
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    total = len(dicts(pod, "spec", "containers"))
    inits = dicts(pod, "spec", "initContainers")
    ready = restarts = 0
    last: datetime | None = None
    initializing = False
    for i, container in enumerate(dicts(status, "initContainerStatuses")):
        restarts += int_at(container, "restartCount")
        state = mapping(container, "state")
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(terminated, dict) and terminated.get("exitCode", 0) == 0:
            continue
        if isinstance(terminated, dict):
            reason = "Init:" + str(
                terminated.get("reason") or f"ExitCode:{terminated.get('exitCode')}"
            )
        elif isinstance(waiting, dict) and waiting.get("reason") not in (
            None,
            "",
            "PodInitializing",
        ):
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(inits)}"
        initializing = True
        break
    if not initializing:
        restarts, running = 0, False
        for container in reversed(dicts(status, "containerStatuses")):
            restarts += int_at(container, "restartCount")
            finished = _when(get(container, "lastState", "terminated", "finishedAt"))
            if finished is not None and (last is None or finished > last):
                last = finished
            reason, up = _container_reason(container, reason)
            if up:
                ready, running = ready + 1, True
        if reason == "Completed" and running:
            ready_condition = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in dicts(status, "conditions")
            )
            reason = "Running" if ready_condition else "NotReady"
    if get(pod, "metadata", "deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return ready, total, reason, restarts, last


def _restarts(pod: Obj, now: datetime) -> str:
    _, _, _, restarts, last = _pod_summary(pod)
    if restarts and last is not None:
        return f"{restarts} ({human_duration((now - last).total_seconds())} ago)"
    return str(restarts)


def _pod_ip(pod: Obj, _: datetime) -> str:
    ips = dicts(pod, "status", "podIPs")
    return str(ips[0].get("ip") or _NONE) if ips else _NONE


def _readiness_gates(pod: Obj, _: datetime) -> str:
    gates = dicts(pod, "spec", "readinessGates")
    if not gates:
        return _NONE
    conditions = {c.get("type"): c.get("status") for c in dicts(pod, "status", "conditions")}
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


POD = (
    NAME,
    column("Ready", "string", lambda o, _: "{}/{}".format(*_pod_summary(o)[:2])),
    column("Status", "string", lambda o, _: _pod_summary(o)[2]),
    column("Restarts", "string", _restarts),
    AGE,
    column("IP", "string", _pod_ip, priority=1),
    column("Node", "string", lambda o, _: str(get(o, "spec", "nodeName") or _NONE), priority=1),
    column(
        "Nominated Node",
        "string",
        lambda o, _: str(get(o, "status", "nominatedNodeName") or _NONE),
        priority=1,
    ),
    column("Readiness Gates", "string", _readiness_gates, priority=1),
)


def _external_ip(service: Obj, _: datetime) -> str:
    kind = get(service, "spec", "type")
    external = [str(ip) for ip in get(service, "spec", "externalIPs") or []]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or _NONE
    if kind == "LoadBalancer":
        found = sorted(
            {
                str(i.get("ip") or i.get("hostname"))
                for i in dicts(service, "status", "loadBalancer", "ingress")
                if i.get("ip") or i.get("hostname")
            }
        )
        balancers = ",".join(found)
        if len(balancers) > 16:
            balancers = balancers[:13] + "..."
        if external:
            return ",".join([*(balancers.split(",") if balancers else []), *external])
        return balancers or "<pending>"
    if kind == "ExternalName":
        return str(get(service, "spec", "externalName") or "")
    return "<unknown>"


def _service_ports(service: Obj, _: datetime) -> str:
    pieces = []
    for port in dicts(service, "spec", "ports"):
        node = port.get("nodePort")
        number, protocol = port.get("port"), port.get("protocol")
        pieces.append(f"{number}:{node}/{protocol}" if node else f"{number}/{protocol}")
    return ",".join(pieces) or _NONE


SERVICE = (
    NAME,
    column("Type", "string", lambda o, _: str(get(o, "spec", "type") or "")),
    column("Cluster-IP", "string", lambda o, _: str((get(o, "spec", "clusterIPs") or [_NONE])[0])),
    column("External-IP", "string", _external_ip),
    column("Port(s)", "string", _service_ports),
    AGE,
    column(
        "Selector", "string", lambda o, _: format_labels(get(o, "spec", "selector")), priority=1
    ),
)


def _endpoints(obj: Obj, _: datetime) -> str:
    """``formatEndpoints``: up to three ``ip:port``, then ``+ N more...``."""
    shown: list[str] = []
    count = 0
    for subset in dicts(obj, "subsets"):
        addresses = [str(a.get("ip", "")) for a in dicts(subset, "addresses")]
        ports = dicts(subset, "ports") or [{}]
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(shown) < 3:
                    number = port.get("port")
                    host = f"[{ip}]" if ":" in ip else ip
                    shown.append(f"{host}:{number}" if number is not None else ip)
    if not dicts(obj, "subsets"):
        return _NONE
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


ENDPOINTS = (NAME, column("Endpoints", "string", _endpoints), AGE)


def _access_modes(modes: Any) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
             "ReadWriteOncePod": "RWOP"}  # fmt: skip
    return ",".join(short[m] for m in short if isinstance(modes, list) and m in modes)


def _claim_class(obj: Obj) -> str:
    annotated = get(obj, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    return str(annotated or get(obj, "spec", "storageClassName") or "")


def _bound(obj: Obj, value: Any) -> Any:
    return value if get(obj, "spec", "volumeName") else ""


PERSISTENT_VOLUME_CLAIM = (
    NAME,
    column(
        "Status",
        "string",
        lambda o, _: (
            "Terminating"
            if get(o, "metadata", "deletionTimestamp")
            else str(get(o, "status", "phase") or "")
        ),
    ),
    column("Volume", "string", lambda o, _: str(get(o, "spec", "volumeName") or "")),
    column(
        "Capacity",
        "string",
        lambda o, _: _bound(o, str(get(o, "status", "capacity", "storage") or "")),
    ),
    column(
        "Access Modes",
        "string",
        lambda o, _: _bound(o, _access_modes(get(o, "status", "accessModes"))),
    ),
    column("StorageClass", "string", lambda o, _: _claim_class(o)),
    column(
        "VolumeAttributesClass",
        "string",
        lambda o, _: str(get(o, "spec", "volumeAttributesClassName") or "<unset>"),
    ),
    AGE,
    column(
        "VolumeMode",
        "string",
        lambda o, _: str(get(o, "spec", "volumeMode") or "<unset>"),
        priority=1,
    ),
)


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


POD_DISRUPTION_BUDGET = (
    NAME,
    column("Min Available", "string", lambda o, _: _int_or_string(get(o, "spec", "minAvailable"))),
    column(
        "Max Unavailable", "string", lambda o, _: _int_or_string(get(o, "spec", "maxUnavailable"))
    ),
    column(
        "Allowed Disruptions", "integer", lambda o, _: int_at(o, "status", "disruptionsAllowed")
    ),
    AGE,
)
NETWORK_POLICY = (
    NAME,
    column(
        "Pod-Selector", "string", lambda o, _: format_selector(get(o, "spec", "podSelector") or {})
    ),
    AGE,
)


def _hosts(obj: Obj, _: datetime) -> str:
    rules = dicts(obj, "spec", "rules")
    hosts = [str(r["host"]) for r in rules[:3] if r.get("host")]
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if len(rules) > 3 else text


def _ingress_address(obj: Obj, _: datetime) -> str:
    found = sorted(
        {
            str(i.get("ip") or i.get("hostname"))
            for i in dicts(obj, "status", "loadBalancer", "ingress")
            if i.get("ip") or i.get("hostname")
        }
    )
    text = ",".join(found)
    return text[:13] + "..." if len(text) > 16 else text


INGRESS = (
    NAME,
    column("Class", "string", lambda o, _: str(get(o, "spec", "ingressClassName") or _NONE)),
    column("Hosts", "string", _hosts),
    column("Address", "string", _ingress_address),
    column("Ports", "string", lambda o, _: "80, 443" if dicts(o, "spec", "tls") else "80"),
    AGE,
)


def _controller(obj: Obj, _: datetime) -> str:
    for ref in dicts(obj, "metadata", "ownerReferences"):
        if ref.get("controller") is True:
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "").lower()
            qualified = f"{kind}.{group}" if group else kind
            return f"{qualified}/{ref.get('name', '')}"
    return _NONE


CONTROLLER_REVISION = (
    NAME,
    column("Controller", "string", _controller),
    column("Revision", "integer", lambda o, _: int_at(o, "revision")),
    AGE,
)
