"""Validation of core ``v1`` Pods, Services and PersistentVolumeClaims, after
``pkg/apis/core/validation`` (Kubernetes 1.30), for the mistakes a manifest makes first.

Where kube's message ends in a field-by-field diff of the Go structs (an update that
changes an immutable pod or claim spec), the sentence is kept and the diff left out.
"""

from __future__ import annotations

import re
from typing import Any

from pyocm.apiserver.registry.builtin import podvalidation
from pyocm.apiserver.registry.builtin.poddefaults import items
from pyocm.kube import names, selectors
from pyocm.kube.status import FieldError, duplicate, forbidden, invalid, not_supported, required

Obj = dict[str, Any]
_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_AFFINITIES = ["ClientIP", "None"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_POD_UPDATE = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
    "be set to 1 if it was previously negative)"
)
_CLAIM_UPDATE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: the name rule of Services."""
    problems = []
    if len(value) > names.DNS1123_LABEL_MAX_LENGTH:
        problems.append(names.max_len_error(names.DNS1123_LABEL_MAX_LENGTH))
    if not re.fullmatch(_DNS1035_FMT, value):
        problems.append(names.regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return problems


def pod(obj: Obj) -> list[FieldError]:
    """``ValidatePod``: the pod spec, and images without surrounding blanks."""
    spec = _spec(obj)
    errs = podvalidation.validate_pod_spec(spec, "spec")
    for key in ("containers", "initContainers"):
        for i, container in enumerate(items(spec, key)):
            image = str(container.get("image") or "")
            if image != image.strip():
                message = "must not have leading or trailing whitespace"
                errs.append(invalid(f"spec.{key}[{i}].image", image, message))
    node = str(spec.get("nodeName") or "")
    if node:
        errs += [invalid("spec.nodeName", node, m) for m in names.is_dns1123_subdomain(node)]
    return errs


def pod_update(obj: Obj, old: Obj) -> list[FieldError]:
    """``ValidatePodUpdate``: besides images, the active deadline, added tolerations and
    (once) the grace period, a pod spec does not change. A pod not yet bound may be bound
    (``spec.nodeName`` set once), as the binding subresource would."""
    new, previous = dict(_spec(obj)), dict(_spec(old))
    for spec in (new, previous):
        for key in ("containers", "initContainers"):
            spec[key] = [{**c, "image": ""} for c in items(spec, key)]
        for key in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
            spec.pop(key, None)
    if not previous.get("nodeName"):
        new.pop("nodeName", None)
        previous.pop("nodeName", None)
    return [] if new == previous else [forbidden("spec", _POD_UPDATE)]


def service(obj: Obj) -> list[FieldError]:
    """``ValidateService``: ports, type, external name, selector, session affinity."""
    spec = _spec(obj)
    kind = spec.get("type") or ""
    ports = items(spec, "ports")
    errs: list[FieldError] = []
    headless = spec.get("clusterIP") == "None"
    if not ports and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    if kind == "ExternalName":
        if spec.get("clusterIPs"):
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if not cname:
            errs.append(required("spec.externalName"))
        else:
            errs += [
                invalid("spec.externalName", cname, m) for m in names.is_dns1123_subdomain(cname)
            ]
    port_names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _service_port(port, f"spec.ports[{i}]", len(ports) > 1, port_names)
    if spec.get("selector") is not None:
        errs += selectors.validate_labels(spec.get("selector") or {}, "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(required("spec.sessionAffinity"))
    elif affinity not in _AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, _AFFINITIES))
    if not kind:
        errs.append(required("spec.type"))
    elif kind not in _SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen:
            errs.append(duplicate(f"spec.ports[{i}]", {"protocol": key[0], "port": key[1]}))
        seen.add(key)
    return errs


def _service_port(port: Obj, path: str, need_name: bool, taken: set[str]) -> list[FieldError]:
    """``validateServicePort``."""
    errs: list[FieldError] = []
    name = str(port.get("name") or "")
    if need_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs += podvalidation.label_errors(name, f"{path}.name")
        if name in taken:
            errs.append(duplicate(f"{path}.name", name))
        taken.add(name)
    errs += podvalidation.port_number_errors(f"{path}.port", port.get("port") or 0)
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(required(f"{path}.protocol"))
    elif protocol not in _PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, str):
        problems = podvalidation.port_name_problems(target)
        errs += [invalid(f"{path}.targetPort", target, m) for m in problems]
    else:
        errs += podvalidation.port_number_errors(f"{path}.targetPort", target or 0)
    return errs


def service_update(obj: Obj, old: Obj) -> list[FieldError]:
    """A service keeps its cluster IPs (unless it is or becomes ExternalName, or both
    sides are headless)."""
    new, previous = _spec(obj), _spec(old)
    if "ExternalName" in (new.get("type"), previous.get("type")):
        return []
    if new.get("clusterIP") == "None" and previous.get("clusterIP") == "None":
        return []
    ips, old_ips = list(new.get("clusterIPs") or []), list(previous.get("clusterIPs") or [])
    if len(ips) != len(old_ips):
        return []
    return [
        invalid(f"spec.clusterIPs[{i}]", ips, "may not change once set")
        for i, ip in enumerate(old_ips)
        if ips[i] != ip
    ]


def persistent_volume_claim(obj: Obj) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``: access modes and a storage request."""
    spec = _spec(obj)
    errs: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        errs.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    requests = (spec.get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        errs.append(required("spec.resources[storage]"))
    return errs


def persistent_volume_claim_update(obj: Obj, old: Obj) -> list[FieldError]:
    """A claim's spec is fixed but for its storage request, volume attributes class and
    (binding) volume name."""
    new, previous = dict(_spec(obj)), dict(_spec(old))
    for spec in (new, previous):
        spec.pop("volumeAttributesClassName", None)
        resources = dict(spec.get("resources") or {})
        resources.pop("requests", None)
        spec["resources"] = resources
    if not previous.get("volumeName"):
        new.pop("volumeName", None)
        previous.pop("volumeName", None)
    return [] if new == previous else [forbidden("spec", _CLAIM_UPDATE)]
