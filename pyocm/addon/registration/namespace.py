"""The install namespace from the add-on's AddOnDeploymentConfig (upstream's
``AgentInstallNamespaceFromDeploymentConfigFunc``).

The framework reads an ADC's ``agentInstallNamespace`` only through this helper, which
an add-on sets as its ``install_namespace``: the registration controller then writes it
into ``status.namespace`` over the default and the v1alpha1 annotation. An add-on
whose ManagedClusterAddOn names no ADC among its ``status.configReferences`` gets ""
(the default namespace)."""

from __future__ import annotations

from pyocm.addon.agent import InstallNamespace
from pyocm.api import catalog, shapes, wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.kube.kinds import Kind
from pyocm.runtime.client import Api

ADC_RESOURCE = "addondeploymentconfigs"


def _adc_kind() -> Kind:
    found = catalog.find(
        group=wellknown.ADDON_GROUP, version="v1beta1", kind="AddOnDeploymentConfig"
    )
    return Kind(found.group, found.version, found.kind, found.plural, found.namespaced)


ADDON_DEPLOYMENT_CONFIG = _adc_kind()


class DeploymentConfigError(Exception):
    """The ADC the add-on names cannot be read yet."""


def install_namespace_from_deployment_config() -> InstallNamespace:
    async def install_namespace(api: Api, addon: ManagedClusterAddOn) -> str:
        name = addon["metadata"]["name"]
        for ref in addon.get("status", {}).get("configReferences") or []:
            if ref.get("group", "") != wellknown.ADDON_GROUP or ref["resource"] != ADC_RESOURCE:
                continue
            desired = ref.get("desiredConfig")
            if desired is None or not desired.get("specHash"):
                raise DeploymentConfigError(
                    f"failed to get deployment config for addon {name}: "
                    f"addon {name} deployment config desired spec hash is empty"
                )
            adc = await api.get(
                ADDON_DEPLOYMENT_CONFIG, desired["name"], namespace=desired.get("namespace")
            )
            return str(shapes.mapping(adc.get("spec")).get("agentInstallNamespace") or "")
        return ""

    return install_namespace
