"""Defaults of pods and pod templates, as kube-apiserver 1.30 applies them.

Kubernetes defaults a built-in object every time it decodes one (``SetDefaults_*`` in
``pkg/apis/{core,apps,batch}/v1/defaults.go`` plus the ``+default`` markers of
``k8s.io/api``). The functions here do the same to the JSON object, in place: each
fills only what is absent, so applying one twice changes nothing. Go's encoder also
writes a non-pointer struct even when it is empty (a container's ``resources: {}``, a
pod's ``securityContext: {}``), which is reproduced where a client would see it. The
kinds' own defaults, which call these for their templates, are in :mod:`workloaddefaults`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

#: ``v1.DefaultTerminationGracePeriodSeconds``, ``v1.TerminationMessagePathDefault``.
GRACE_PERIOD = 30
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
SCHEDULER = "default-scheduler"
#: Mode bits of secret, configMap, downwardAPI and projected volumes (0644).
VOLUME_MODE = 420
_SOURCED_VOLUMES = ("secret", "configMap", "downwardAPI", "projected")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                   "failureThreshold": 3}  # fmt: skip


def child(obj: Obj, key: str) -> Obj:
    """``obj[key]`` as a dict, created (or replacing a null) when absent."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def mapping(obj: Any, key: str) -> Obj:
    """``obj[key]`` when it is a dict, else an empty one (``obj`` is left alone)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def items(obj: Obj, key: str) -> list[Obj]:
    """The dict items of the list ``obj[key]`` (none when absent or not a list)."""
    value = obj.get(key)
    return [i for i in value if isinstance(i, dict)] if isinstance(value, list) else []


def image_tag(image: str) -> str:
    """The tag of an image reference as ``parsers.ParseImageName`` reads it: ``latest``
    when neither a tag nor a digest is given, ``""`` for a digest alone."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    return tag or ("" if digest else "latest")


def default_container(container: Obj) -> None:
    if not container.get("imagePullPolicy"):
        latest = image_tag(str(container.get("image") or "")) == "latest"
        container["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    container.setdefault("terminationMessagePath", TERMINATION_MESSAGE_PATH)
    container.setdefault("terminationMessagePolicy", "File")
    if not isinstance(container.get("resources"), dict):
        container["resources"] = {}
    for port in items(container, "ports"):
        port.setdefault("protocol", "TCP")
    for env in items(container, "env"):
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")
    for name in _PROBES:
        probe = container.get(name)
        if isinstance(probe, dict):
            _default_probe(probe)
    lifecycle = container.get("lifecycle")
    for hook in lifecycle.values() if isinstance(lifecycle, dict) else ():
        if isinstance(hook, dict) and isinstance(hook.get("httpGet"), dict):
            _default_http_get(hook["httpGet"])


def _default_probe(probe: Obj) -> None:
    for key, value in _PROBE_DEFAULTS.items():
        if not probe.get(key):
            probe[key] = value
    if isinstance(probe.get("httpGet"), dict):
        _default_http_get(probe["httpGet"])


def _default_http_get(action: Obj) -> None:
    action.setdefault("path", "/")
    action.setdefault("scheme", "HTTP")


def default_volume(volume: Obj) -> None:
    """A volume naming no source is an emptyDir; sourced ones get their file mode."""
    if not any(isinstance(v, dict) for k, v in volume.items() if k != "name"):
        volume["emptyDir"] = {}
    for source in _SOURCED_VOLUMES:
        found = volume.get(source)
        if isinstance(found, dict) and found.get("defaultMode") is None:
            found["defaultMode"] = VOLUME_MODE
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict):
        host_path.setdefault("type", "")
    projected = volume.get("projected")
    for projection in items(projected, "sources") if isinstance(projected, dict) else ():
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            token.setdefault("expirationSeconds", 3600)


def default_pod_spec(spec: Obj) -> None:
    """``SetDefaults_PodSpec`` and the defaults of everything a pod spec holds."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    if not isinstance(spec.get("securityContext"), dict):
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = GRACE_PERIOD
    spec.setdefault("schedulerName", SCHEDULER)
    _service_account(spec)
    for container in items(spec, "initContainers") + items(spec, "containers"):
        default_container(container)
    for volume in items(spec, "volumes"):
        default_volume(volume)


def _service_account(spec: Obj) -> None:
    """The round trip through the internal version: ``serviceAccountName`` comes from the
    deprecated ``serviceAccount`` when unset (``Convert_v1_PodSpec_To_core_PodSpec``), and
    ``serviceAccount`` is written back as ``serviceAccountName`` (the reverse)."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if isinstance(name, str) and name:
        spec["serviceAccountName"] = spec["serviceAccount"] = name


def default_template(owner_spec: Obj) -> None:
    """The pod template a workload's spec holds."""
    template = child(owner_spec, "template")
    default_pod_spec(child(template, "spec"))


def default_pod(pod: Obj) -> None:
    """``SetDefaults_Pod``: the pod spec defaults, requests taken from limits, and
    service links on."""
    spec = child(pod, "spec")
    default_pod_spec(spec)
    for container in items(spec, "initContainers") + items(spec, "containers"):
        resources = child(container, "resources")
        limits = resources.get("limits")
        if isinstance(limits, dict) and limits:
            requests = child(resources, "requests")
            for resource, quantity in limits.items():
                requests.setdefault(resource, quantity)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork"):
        for container in items(spec, "initContainers") + items(spec, "containers"):
            for port in items(container, "ports"):
                if not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")
