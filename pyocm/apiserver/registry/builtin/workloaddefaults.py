"""Defaults of the workload and service kinds, as kube-apiserver 1.30 applies them.

One function per kind (``SetDefaults_<Kind>`` of ``pkg/apis/{apps,batch,core,networking}/v1``
with its feature gates as 1.30 has them), each calling :mod:`poddefaults` for the pod
template it holds. They fill only what is absent, on every write, as kube defaults every
object it decodes.
"""

from __future__ import annotations

from pyocm.apiserver.registry.builtin.poddefaults import (
    Obj,
    child,
    default_pod,
    default_template,
    items,
)

#: ``v1.DefaultClientIPServiceAffinitySeconds``: three hours.
CLIENT_IP_AFFINITY_SECONDS = 10800
_EXTERNAL_TYPES = ("NodePort", "LoadBalancer")


def _set_none(obj: Obj, key: str, value: object) -> None:
    """Set ``obj[key]`` when absent or null (a Go pointer left nil)."""
    if obj.get(key) is None:
        obj[key] = value


def deployment(obj: Obj) -> None:
    spec = child(obj, "spec")
    _set_none(spec, "replicas", 1)
    strategy = child(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        _set_none(rolling, "maxUnavailable", "25%")
        _set_none(rolling, "maxSurge", "25%")
    _set_none(spec, "revisionHistoryLimit", 10)
    _set_none(spec, "progressDeadlineSeconds", 600)
    default_template(spec)


def replica_set(obj: Obj) -> None:
    spec = child(obj, "spec")
    _set_none(spec, "replicas", 1)
    default_template(spec)


def stateful_set(obj: Obj) -> None:
    spec = child(obj, "spec")
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        child(strategy, "rollingUpdate")
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        _set_none(rolling, "partition", 0)
    # StatefulSetAutoDeletePVC is beta and on in 1.30.
    retention = child(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        if not retention.get(key):
            retention[key] = "Retain"
    _set_none(spec, "replicas", 1)
    _set_none(spec, "revisionHistoryLimit", 10)
    for claim in items(spec, "volumeClaimTemplates"):
        persistent_volume_claim(claim)
    default_template(spec)


def daemon_set(obj: Obj) -> None:
    spec = child(obj, "spec")
    strategy = child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        _set_none(rolling, "maxUnavailable", 1)
        _set_none(rolling, "maxSurge", 0)
    _set_none(spec, "revisionHistoryLimit", 10)
    default_template(spec)


def job(obj: Obj) -> None:
    """``SetDefaults_Job``. A Job without labels takes its template's label map itself
    (Go assigns the map), so the labels its selector generation adds to the template
    later appear on the Job too, as they do in Kubernetes."""
    spec = child(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _set_none(spec, "parallelism", 1)
    _set_none(spec, "backoffLimit", 6)
    metadata = child(obj, "metadata")
    template_labels = child(child(spec, "template"), "metadata").get("labels")
    if isinstance(template_labels, dict) and not metadata.get("labels"):
        metadata["labels"] = template_labels
    _set_none(spec, "completionMode", "NonIndexed")
    _set_none(spec, "suspend", False)
    # JobPodReplacementPolicy is beta and on in 1.30.
    if spec.get("podReplacementPolicy") is None:
        failed = spec.get("podFailurePolicy") is not None
        spec["podReplacementPolicy"] = "Failed" if failed else "TerminatingOrFailed"
    default_template(spec)


def cron_job(obj: Obj) -> None:
    spec = child(obj, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    _set_none(spec, "suspend", False)
    _set_none(spec, "successfulJobsHistoryLimit", 3)
    _set_none(spec, "failedJobsHistoryLimit", 1)
    job_spec = child(child(spec, "jobTemplate"), "spec")
    default_template(job_spec)


def service(obj: Obj) -> None:
    """``SetDefaults_Service`` (the allocated fields, cluster IPs and node ports, are
    the registry's: see :mod:`serviceips`)."""
    spec = child(obj, "spec")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        if client_ip.get("timeoutSeconds") is None:
            timeout = {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}
            spec["sessionAffinityConfig"] = {"clientIP": timeout}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in items(spec, "ports"):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    kind = spec["type"]
    external = kind in _EXTERNAL_TYPES or (kind == "ClusterIP" and spec.get("externalIPs"))
    if external and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in ("ClusterIP", *_EXTERNAL_TYPES):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer":
        _set_none(spec, "allocateLoadBalancerNodePorts", True)


def endpoints(obj: Obj) -> None:
    for subset in items(obj, "subsets"):
        for port in items(subset, "ports"):
            if not port.get("protocol"):
                port["protocol"] = "TCP"


def persistent_volume_claim(obj: Obj) -> None:
    """The claim's volume mode, and a status phase (``Pending``) where none is set."""
    _set_none(child(obj, "spec"), "volumeMode", "Filesystem")
    status = child(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def network_policy(obj: Obj) -> None:
    """Ports are TCP unless told; the policy types follow the rules given."""
    spec = child(obj, "spec")
    for rule in items(spec, "ingress") + items(spec, "egress"):
        for port in items(rule, "ports"):
            if not port.get("protocol"):
                port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def pod(obj: Obj) -> None:
    default_pod(obj)
