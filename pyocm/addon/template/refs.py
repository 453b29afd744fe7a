"""Which template and deployment config an add-on runs with: the MCA's config
references, read as upstream's template agent reads them (``AddonTemplateConfigRef``,
``GetDesiredAddOnTemplate``, ``GetDesiredAddOnDeploymentConfig``), from the hub
manager's caches.

Errors carry upstream's messages: they end up in the MCA's conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyocm.addon.agent import ADDON_DEPLOYMENT_CONFIG, ADDON_TEMPLATE
from pyocm.api import models
from pyocm.api.models.addon_v1alpha1 import AddOnDeploymentConfigSpec, AddOnTemplate
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn, ManagedClusterAddOn
from pyocm.runtime.cache import Store

Obj = dict[str, Any]


class TemplateError(Exception):
    """The add-on's template or deployment config cannot be had (upstream's message)."""


def config_ref(config_refs: Sequence[Mapping[str, Any]], group: str, resource: str) -> Obj | None:
    """``GetAddOnConfigRef``: the first reference of that group and resource."""
    for ref in config_refs:
        if ref.get("group") == group and ref.get("resource") == resource:
            return dict(ref)
    return None


def template_ref(config_refs: Sequence[Mapping[str, Any]]) -> Obj | None:
    return config_ref(config_refs, ADDON_TEMPLATE.group, ADDON_TEMPLATE.resource)


def template_based(addon: ManagedClusterAddOn) -> bool:
    """``FilterTemplateBasedAddOns``: the MCA has a template reference with a spec hash."""
    for ref in addon.get("status", {}).get("configReferences") or []:
        if (ref.get("group"), ref.get("resource")) == (
            ADDON_TEMPLATE.group,
            ADDON_TEMPLATE.resource,
        ) and ref.get("desiredConfig", {}).get("specHash"):
            return True
    return False


def supports_templates(cma: ClusterManagementAddOn | None) -> bool:
    """``SupportAddOnTemplate``: the CMA's default configs (v1beta1 ``defaultConfigs``)
    name the template kind, whatever the name."""
    if cma is None:
        return False
    return any(
        (c.get("group"), c.get("resource")) == (ADDON_TEMPLATE.group, ADDON_TEMPLATE.resource)
        for c in cma.get("spec", {}).get("defaultConfigs") or []
    )


def not_found(resource: str, name: str) -> str:
    """A Kubernetes NotFound message, as a lister or client returns it."""
    return f'{resource}.{ADDON_TEMPLATE.group} "{name}" not found'


def desired_template(
    templates: Store, name: str, config_refs: Sequence[Mapping[str, Any]]
) -> AddOnTemplate | None:
    """The template the references ask for, as cached now; None when they name none.
    Raises :class:`TemplateError` when it has no spec hash yet or is not there."""
    ref = template_ref(config_refs)
    if ref is None:
        return None
    desired = ref.get("desiredConfig") or {}
    if not desired.get("specHash"):
        raise TemplateError(f"addon {name} template desired spec hash is empty")
    found = templates.get(desired.get("name", ""))
    if found is None:
        # The generated lister's NotFound names the lowercase kind.
        raise TemplateError(not_found("addontemplate", desired.get("name", "")))
    return models.view(AddOnTemplate, found)


def addon_template(templates: Store, addon: ManagedClusterAddOn) -> AddOnTemplate:
    """The MCA's desired template (``Manifests``' lookup)."""
    meta = addon["metadata"]
    found = desired_template(
        templates, meta["name"], addon.get("status", {}).get("configReferences") or []
    )
    if found is None:
        raise TemplateError(
            f"addon {meta['namespace']}/{meta['name']} template not found in status"
        )
    return found


def default_template(templates: Store, cma: ClusterManagementAddOn | None) -> AddOnTemplate | None:
    """The template the CMA's default config references ask for, or None (upstream
    reads the add-on's manifest configs from it, not from a cluster's)."""
    if cma is None:
        return None
    refs = [
        {
            "group": r.get("group"),
            "resource": r.get("resource"),
            "desiredConfig": r.get("desiredConfig"),
        }
        for r in cma.get("status", {}).get("defaultConfigReferences") or []
    ]
    try:
        return desired_template(templates, cma["metadata"]["name"], refs)
    except TemplateError:
        return None


def deployment_config(
    configs: Store, addon: ManagedClusterAddOn
) -> AddOnDeploymentConfigSpec | None:
    """The spec of the AddOnDeploymentConfig the MCA's references name, or None when
    they name none. Raises :class:`TemplateError`."""
    ref = config_ref(
        addon.get("status", {}).get("configReferences") or [],
        ADDON_DEPLOYMENT_CONFIG.group,
        ADDON_DEPLOYMENT_CONFIG.resource,
    )
    if ref is None:
        return None
    desired = ref.get("desiredConfig") or {}
    if not desired.get("specHash"):
        name = addon["metadata"]["name"]
        raise TemplateError(f"addon {name} deployment config desired spec hash is empty")
    key = f"{desired.get('namespace', '')}/{desired.get('name', '')}"
    found = configs.get(key)
    if found is None:
        raise TemplateError(not_found("addondeploymentconfigs", desired.get("name", "")))
    spec: AddOnDeploymentConfigSpec = found.get("spec") or {}
    return spec
