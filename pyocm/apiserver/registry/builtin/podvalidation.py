"""Validation of pod specs and pod templates: the checks a wrong manifest meets first.

A focused subset of ``ValidatePodTemplateSpec`` / ``ValidatePodSpec`` from
``pkg/apis/core/validation`` (Kubernetes 1.30), with kube's field paths and messages:
containers present, each named (an RFC 1123 label, unique) and with an image, ports,
environment variable names, volume names and mounts, pull and termination-message
policies, restart and DNS policies, node selector labels and the service account name.
Types were checked earlier against the published schema (:mod:`knownfields`); what is
not checked here (resources, probes, security contexts, affinity) is accepted as given.
"""

from __future__ import annotations

import re
from typing import Any

from pyocm.apiserver.registry.builtin.poddefaults import Obj, items, mapping
from pyocm.kube import names, objectmeta, selectors
from pyocm.kube.status import ErrorType, FieldError, duplicate, invalid, not_supported, required

_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
_ENV_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', "
    "'-', or '.', and must not start with a digit"
)


def not_found(path: str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, path, "", value)


def port_number_errors(path: str, value: Any) -> list[FieldError]:
    """``IsValidPortNum``."""
    if isinstance(value, int) and 1 <= value <= 65535:
        return []
    return [invalid(path, value, "must be between 1 and 65535, inclusive")]


def port_name_problems(name: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME."""
    problems = []
    if len(name) > 15:
        problems.append(names.max_len_error(15))
    if not _PORT_NAME_CHARSET.match(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        problems.append("must contain at least one letter (a-z)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return problems


def label_errors(value: str, path: str) -> list[FieldError]:
    """``ValidateDNS1123Label`` at ``path``."""
    return [invalid(path, value, msg) for msg in names.is_dns1123_label(value)]


def validate_template(template: Any, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the template's labels (reported at ``<path>.labels``,
    as kube does), annotations and pod spec."""
    template = template if isinstance(template, dict) else {}
    metadata = mapping(template, "metadata")
    errs = selectors.validate_labels(metadata.get("labels") or {}, f"{path}.labels")
    errs += objectmeta.validate_annotations(
        metadata.get("annotations") or {}, f"{path}.annotations"
    )
    spec = mapping(template, "spec")
    errs += validate_pod_spec(spec, f"{path}.spec")
    if spec.get("ephemeralContainers"):
        errs.append(
            FieldError(
                ErrorType.FORBIDDEN,
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


def validate_pod_spec(spec: Obj, path: str) -> list[FieldError]:
    """``ValidatePodSpec``, in kube's order, for the fields listed in the module doc."""
    volumes, errs = _volumes(items(spec, "volumes"), f"{path}.volumes")
    containers = items(spec, "containers")
    if not containers:
        errs.append(required(f"{path}.containers"))
    errs += _containers(containers, volumes, f"{path}.containers", set())
    regular = {str(c.get("name") or "") for c in containers}
    errs += _containers(items(spec, "initContainers"), volumes, f"{path}.initContainers", regular)
    restart = spec.get("restartPolicy") or ""
    if not restart:
        errs.append(required(f"{path}.restartPolicy"))
    elif restart not in _RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    dns = spec.get("dnsPolicy") or ""
    if not dns:
        errs.append(required(f"{path}.dnsPolicy"))
    elif dns not in _DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", dns, _DNS_POLICIES))
    errs += selectors.validate_labels(spec.get("nodeSelector") or {}, f"{path}.nodeSelector")
    account = str(spec.get("serviceAccountName") or "")
    if account:
        errs += [
            invalid(f"{path}.serviceAccountName", account, msg)
            for msg in names.is_dns1123_subdomain(account)
        ]
    return errs


def _volumes(volumes: list[Obj], path: str) -> tuple[set[str], list[FieldError]]:
    """``ValidateVolumes`` for names: the valid volumes' names, and the errors."""
    valid: set[str] = set()
    errs: list[FieldError] = []
    for i, volume in enumerate(volumes):
        name = str(volume.get("name") or "")
        at = f"{path}[{i}].name"
        found = label_errors(name, at) if name else [required(at)]
        if name in valid:
            found.append(duplicate(at, name))
        if found:
            errs += found
        else:
            valid.add(name)
    return valid, errs


def _containers(
    containers: list[Obj], volumes: set[str], path: str, taken: set[str]
) -> list[FieldError]:
    """Each container's common checks; names unique in the list and apart from ``taken``
    (init containers may not reuse a regular container's name)."""
    errs: list[FieldError] = []
    seen = set(taken)
    for i, container in enumerate(containers):
        at = f"{path}[{i}]"
        errs += _container(container, volumes, at)
        name = str(container.get("name") or "")
        if name in seen:
            errs.append(duplicate(f"{at}.name", name))
        seen.add(name)
    return errs


def _container(container: Obj, volumes: set[str], path: str) -> list[FieldError]:
    """``validateContainerCommon``."""
    name = str(container.get("name") or "")
    errs = label_errors(name, f"{path}.name") if name else [required(f"{path}.name")]
    if not container.get("image"):
        errs.append(required(f"{path}.image"))
    policy = container.get("terminationMessagePolicy") or ""
    if not policy:
        errs.append(required(f"{path}.terminationMessagePolicy"))
    elif policy not in _MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", policy, _MESSAGE_POLICIES))
    errs += _ports(items(container, "ports"), f"{path}.ports")
    errs += _env(items(container, "env"), f"{path}.env")
    errs += _mounts(items(container, "volumeMounts"), volumes, f"{path}.volumeMounts")
    pull = container.get("imagePullPolicy") or ""
    if not pull:
        errs.append(required(f"{path}.imagePullPolicy"))
    elif pull not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    return errs


def _ports(ports: list[Obj], path: str) -> list[FieldError]:
    """``validateContainerPorts``."""
    errs: list[FieldError] = []
    port_names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        name = str(port.get("name") or "")
        if name:
            problems = port_name_problems(name)
            errs += [invalid(f"{at}.name", name, msg) for msg in problems]
            if not problems and name in port_names:
                errs.append(duplicate(f"{at}.name", name))
            port_names.add(name)
        number = port.get("containerPort") or 0
        if not number:
            errs.append(required(f"{at}.containerPort"))
        else:
            errs += port_number_errors(f"{at}.containerPort", number)
        if port.get("hostPort"):
            errs += port_number_errors(f"{at}.hostPort", port["hostPort"])
        protocol = port.get("protocol") or ""
        if not protocol:
            errs.append(required(f"{at}.protocol"))
        elif protocol not in _PORT_PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", protocol, _PORT_PROTOCOLS))
    return errs


def env_name_problems(name: str) -> list[str]:
    """``IsEnvVarName``."""
    problems = []
    if not re.fullmatch(_ENV_NAME_FMT, name):
        examples = ("my.env-name", "MY_ENV.NAME", "MyEnvName1")
        problems.append(names.regex_error(_ENV_NAME_MSG, _ENV_NAME_FMT, *examples))
    if name == ".":
        problems.append("must not be '.'")
    elif name == "..":
        problems.append("must not be '..'")
    elif name.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def _env(env: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, var in enumerate(env):
        name = str(var.get("name") or "")
        if not name:
            errs.append(required(f"{path}[{i}].name"))
        errs += [invalid(f"{path}[{i}].name", name, msg) for msg in env_name_problems(name)]
    return errs


def _mounts(mounts: list[Obj], volumes: set[str], path: str) -> list[FieldError]:
    """``ValidateVolumeMounts``: a mount names a valid volume and a unique path."""
    errs: list[FieldError] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        at = f"{path}[{i}]"
        name = str(mount.get("name") or "")
        if not name:
            errs.append(required(f"{at}.name"))
        if name not in volumes:
            errs.append(not_found(f"{at}.name", name))
        mount_path = str(mount.get("mountPath") or "")
        if not mount_path:
            errs.append(required(f"{at}.mountPath"))
        if mount_path in paths:
            errs.append(invalid(f"{at}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
    return errs
