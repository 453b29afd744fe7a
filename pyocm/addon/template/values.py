"""The values a template renders with (upstream's ``templateagent/values.go`` and the
addon-framework's ``addonfactory`` helpers the template add-on manager wires in).

Four sources, each overriding the one before: the defaults (``HUB_KUBECONFIG``, only for a
template with a ``registration`` list), the cluster's image-registries annotation, the
AddOnDeploymentConfig (its customized variables, and its node placement, registries,
install namespace, proxy and resource requirements), and the built-ins (``CLUSTER_NAME``,
``INSTALL_NAMESPACE``), which nothing overrides.

Values whose key starts ``__`` are private: the decorators read them, templates never
see them. A customized variable may carry a private key's name: upstream sorts every
value by key alone, so such a variable lands among the private values as a string (and
the decorator that finds a string where it expects a placement rejects it, as upstream
does), unless the config's own field of that kind is set and replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyocm.addon.template import gojson
from pyocm.api import wellknown
from pyocm.api.models.addon_v1alpha1 import AddOnTemplateSpec
from pyocm.api.models.addon_v1beta1 import (
    AddOnDeploymentConfigSpec,
    AddOnDeploymentConfigSpecRegistry,
    AddOnDeploymentConfigSpecResourceRequirement,
)
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.common import ResourceRequirements

NODE_PLACEMENT = "__NODE_PLACEMENT"
REGISTRIES = "__REGISTRIES"
INSTALL_NAMESPACE = "__INSTALL_NAMESPACE"
PROXY = "__PROXY"
RESOURCE_REQUIREMENTS = "__RESOURCE_REQUIREMENTS"
PRIVATE_KEYS = frozenset(
    {NODE_PLACEMENT, REGISTRIES, INSTALL_NAMESPACE, PROXY, RESOURCE_REQUIREMENTS}
)

HUB_KUBECONFIG_PATH = "/managed/hub-kubeconfig/kubeconfig"


class RenderError(Exception):
    """Rendering failed; ``str()`` is upstream's error message."""


@dataclass(frozen=True)
class RegexRequirement:
    """One ``resourceRequirements`` entry as the framework compiles it: the container ID
    ``<resource>:<name>:<container>`` with a lone ``*`` part matching anything."""

    pattern: str
    resources: ResourceRequirements


@dataclass
class Values:
    """What one render uses.

    ``preset`` is injected as env into every container, in this order: the default
    keys sorted, then the built-in keys sorted, each with its final value. ``public``
    is what ``{{NAME}}`` renders; ``private`` is what the decorators read.
    """

    preset: list[tuple[str, str]] = field(default_factory=list)
    public: dict[str, str] = field(default_factory=dict)
    private: dict[str, object] = field(default_factory=dict)


def get_values(
    *,
    template_spec: AddOnTemplateSpec,
    cluster: ManagedCluster,
    deployment_config: AddOnDeploymentConfigSpec | None,
) -> Values:
    """The values, merged in upstream's order (see the module docstring)."""
    defaults = {"HUB_KUBECONFIG": HUB_KUBECONFIG_PATH} if _has_registration(template_spec) else {}
    public: dict[str, str] = dict(defaults)
    private: dict[str, object] = {}
    sources = [registries_from_annotation(cluster)]
    if deployment_config is not None:
        sources.append(deployment_config_values(deployment_config))
    for source in sources:
        for key, value in source.items():
            if key in PRIVATE_KEYS:
                private[key] = value
            elif isinstance(value, str):
                public[key] = value
    builtins = {"CLUSTER_NAME": cluster.get("metadata", {}).get("name", "")}
    namespace = private.get(INSTALL_NAMESPACE)
    if isinstance(namespace, str):
        builtins["INSTALL_NAMESPACE"] = namespace
    # Upstream goes through a struct with omitempty fields: an empty value is no value.
    builtins = {k: v for k, v in builtins.items() if v}
    public.update(builtins)
    keys = sorted(defaults) + sorted(builtins)
    return Values(preset=[(k, public[k]) for k in keys], public=public, private=private)


def _has_registration(spec: AddOnTemplateSpec) -> bool:
    # Go's nil test on the slice: an empty list is not nil.
    return spec.get("registration") is not None


def registries_from_annotation(cluster: ManagedCluster) -> dict[str, object]:
    """``__REGISTRIES`` from the cluster's ``open-cluster-management.io/image-registries``
    annotation (``{"registries": [{"mirror": ..., "source": ...}]}``); nothing when the
    annotation is absent, empty or lists no registry."""
    text = (cluster.get("metadata", {}).get("annotations") or {}).get(
        wellknown.IMAGE_REGISTRIES_ANNOTATION, ""
    )
    if not text:
        return {}
    try:
        document = gojson.loads(text)
    except gojson.GoJSONError as exc:
        raise RenderError(str(exc)) from None
    registries = _decode_registries(document)
    return {REGISTRIES: registries} if registries else {}


def _decode_registries(document: Any) -> list[AddOnDeploymentConfigSpecRegistry]:
    """The annotation decoded into upstream's ``struct{Registries []ImageMirror}``, with
    Go's type errors and its case-insensitive field names (the last matching key wins)."""
    if document is None:
        return []
    if not isinstance(document, dict):
        raise _type_error(document, "Go value", "templateagent.ImageRegistries")
    items = _field(document, "registries")
    if items is None:
        return []
    if not isinstance(items, list):
        raise _type_error(
            items, "Go struct field ImageRegistries.registries", "[]v1beta1.ImageMirror"
        )
    return [_decode_mirror(item) for item in items]


def _decode_mirror(item: Any) -> AddOnDeploymentConfigSpecRegistry:
    if item is None:
        return {"mirror": ""}
    if not isinstance(item, dict):
        raise _type_error(item, "Go struct field ImageRegistries.registries", "v1beta1.ImageMirror")
    mirror: AddOnDeploymentConfigSpecRegistry = {"mirror": ""}
    for name in ("mirror", "source"):
        value = _field(item, name)
        if value is not None and not isinstance(value, str):
            raise _type_error(value, f"Go struct field ImageMirror.registries.{name}", "string")
        if value is not None:
            mirror[name] = value  # type: ignore[literal-required]
    return mirror


def _field(document: dict[str, Any], name: str) -> Any:
    found = None
    for key, value in document.items():
        if key.lower() == name:
            found = value
    return found


def _type_error(value: Any, where: str, go_type: str) -> RenderError:
    return RenderError(
        f"json: cannot unmarshal {gojson.type_name(value)} into {where} of type {go_type}"
    )


def deployment_config_values(spec: AddOnDeploymentConfigSpec) -> dict[str, object]:
    """The config's values, in the order upstream's template manager merges them (later
    ones replace earlier ones of the same key): customized variables, node placement,
    registries, install namespace, proxy, resource requirements."""
    values: dict[str, object] = {}
    for variable in spec.get("customizedVariables") or []:
        values[variable["name"]] = variable.get("value", "")
    if spec.get("nodePlacement") is not None:
        values[NODE_PLACEMENT] = spec["nodePlacement"]
    if spec.get("registries") is not None:
        values[REGISTRIES] = spec["registries"]
    if spec.get("agentInstallNamespace"):
        values[INSTALL_NAMESPACE] = spec["agentInstallNamespace"]
    proxy = spec.get("proxyConfig") or {}
    if any(proxy.get(k) for k in ("httpProxy", "httpsProxy", "noProxy", "caBundle")):
        values[PROXY] = proxy
    if spec.get("resourceRequirements") is not None:
        values[RESOURCE_REQUIREMENTS] = regex_requirements(spec["resourceRequirements"])
    return values


def regex_requirements(
    requirements: list[AddOnDeploymentConfigSpecResourceRequirement],
) -> list[RegexRequirement]:
    """The framework's ``GetRegexResourceRequirements``: ``*`` parts become ``.+`` and
    the ID is anchored; an ID without exactly three parts is an error."""
    compiled = []
    for item in requirements:
        parts = item["containerID"].split(":")
        if len(parts) != 3:
            raise RenderError(f"invalid ContainerID: {item['containerID']}")
        parts = [".+" if part == "*" else part for part in parts]
        compiled.append(RegexRequirement(f"^{':'.join(parts)}$", item.get("resources") or {}))
    return compiled


def matches(pattern: str, container_id: str) -> bool:
    """Go's ``regexp.MatchString``; a pattern that does not compile matches nothing (upstream
    logs it and goes on). ``$`` is Go's end of text, not Python's end-or-newline."""
    try:
        return re.search(_go_dollar(pattern), container_id) is not None
    except re.error:
        return False


def _go_dollar(pattern: str) -> str:
    return (
        pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern
    )
