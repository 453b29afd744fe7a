"""An add-on defined by an AddOnTemplate, as the framework's controllers see it
(upstream's ``CRDTemplateAgentAddon``; ocm-behaviour.md 4.6 to 4.9).

Its manifests are the template's ``agentSpec.workload.manifests`` rendered for the
cluster (:mod:`pyocm.addon.template.render`) with the AddOnDeploymentConfig the MCA's
references name; its agent registers as the template's ``registration`` says
(:mod:`pyocm.addon.template.registration`); its health is the Deployments' and
DaemonSets' availability as the work agent reports it (``WorkloadAvailability``), or
the agent's Lease when the template asks for it (pyocm's annotation
``addons.pyocm.io/health-prober: Lease``).
The framework acts only on MCAs whose template reference has a spec hash
(``FilterTemplateBasedAddOns``) and renders only once the MCA is ``Configured``.

The template, the deployment config and the CMA are read from the hub manager's
caches at each call, so every pass uses the versions the MCA's references now name.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyocm.addon.agent import (
    BUILT_IN_CONFIGS,
    AgentAddonOptions,
    HealthProberType,
    Obj,
)
from pyocm.addon.template import refs
from pyocm.addon.template.registration import TemplateRegistration
from pyocm.addon.template.render import RenderError, render_manifests
from pyocm.api import models, wellknown
from pyocm.api.models.addon_v1alpha1 import AddOnTemplate
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn, ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfig as ManifestConfig
from pyocm.base.clock import Clock
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api

#: The cluster annotation naming image mirrors (``ClusterImageRegistriesAnnotationKey``).
REGISTRIES_ANNOTATION = "open-cluster-management.io/image-registries"
#: pyocm's annotation on an AddOnTemplate choosing Lease health (see ``_health``).
HEALTH_PROBER_ANNOTATION = "addons.pyocm.io/health-prober"


@dataclass(frozen=True)
class Caches:
    """The hub manager's caches a template add-on reads."""

    templates: Store
    deployment_configs: Store
    cmas: Store


class TemplateAddon:
    """Template add-on ``name``."""

    def __init__(self, name: str, *, caches: Caches, clock: Clock) -> None:
        self.name = name
        self.caches = caches
        self.registration = TemplateRegistration(name, templates=caches.templates, clock=clock)

    def options(self) -> AgentAddonOptions:
        return AgentAddonOptions(
            name=self.name,
            registration=self.registration.option(),
            health=self._health(),
            manifest_configs=self._manifest_configs(),
            install_namespace=self.install_namespace,
            supported_configs=BUILT_IN_CONFIGS,
            config_check=True,
            mca_filter=refs.template_based,
            deploy_trigger=registries_changed,
        )

    def _default_template(self) -> AddOnTemplate | None:
        cma = models.view(ClusterManagementAddOn, self.caches.cmas.get(self.name))
        return refs.default_template(self.caches.templates, cma)

    def _health(self) -> HealthProberType:
        """Upstream's template add-ons are healthy from their workloads. pyocm lets the
        default template say ``addons.pyocm.io/health-prober: Lease`` for an agent that
        keeps a Lease (the seed's first way), told by each cluster's registration agent.
        Any other value is the workload probe (an upstream hub ignores the annotation)."""
        template = self._default_template()
        annotations = {} if template is None else template["metadata"].get("annotations") or {}
        if annotations.get(HEALTH_PROBER_ANNOTATION) == HealthProberType.LEASE:
            return HealthProberType.LEASE
        return HealthProberType.WORKLOAD_AVAILABILITY

    def _manifest_configs(self) -> list[ManifestConfig]:
        """The default template's ``agentSpec.manifestConfigs`` (upstream reads them from
        the CMA's default, not from each cluster's template)."""
        template = self._default_template()
        if template is None:
            return []
        found: list[ManifestConfig] = template["spec"]["agentSpec"].get("manifestConfigs") or []  # type: ignore[assignment]
        return found

    async def manifests(self, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> list[Obj]:
        """The rendered objects; raises :class:`~pyocm.addon.template.refs.TemplateError`
        or :class:`~pyocm.addon.template.render.RenderError` with upstream's message."""
        template = refs.addon_template(self.caches.templates, addon)
        config = refs.deployment_config(self.caches.deployment_configs, addon)
        return render_manifests(
            addon_name=self.name,
            template_spec=template["spec"],
            cluster=cluster,
            deployment_config=config,
        )

    async def install_namespace(self, _api: Api, addon: ManagedClusterAddOn) -> str:
        """``TemplateAgentRegistrationNamespaceFunc``: the namespace of the template's
        first Deployment (else first DaemonSet, else the default), unless the
        deployment config names one."""
        template = refs.addon_template(self.caches.templates, addon)
        namespace = workload_namespace(template) or wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE
        try:
            config = refs.deployment_config(self.caches.deployment_configs, addon)
        except refs.TemplateError as err:
            raise refs.TemplateError(
                f"failed to get deployment config for addon {self.name}: {err}"
            ) from None
        return (config or {}).get("agentInstallNamespace") or namespace


def registries_changed(old: ManagedCluster, new: ManagedCluster) -> bool:
    """``ClusterImageRegistriesAnnotationChanged``: the image mirrors of the cluster's
    annotation feed the rendering."""
    key = REGISTRIES_ANNOTATION

    def value(cluster: ManagedCluster) -> str | None:
        return (cluster["metadata"].get("annotations") or {}).get(key)

    return value(old) != value(new)


def workload_namespace(template: AddOnTemplate) -> str:
    """The namespace of the first Deployment, else of the first DaemonSet ("" if none)."""
    first_daemonset = ""
    for manifest in template["spec"]["agentSpec"].get("workload", {}).get("manifests") or []:
        if not isinstance(manifest, dict):
            continue
        # Group and kind, as upstream's conversion checks them (any version of apps).
        kind, group = manifest.get("kind"), str(manifest.get("apiVersion") or "").rpartition("/")[0]
        namespace = str((manifest.get("metadata") or {}).get("namespace") or "")
        if kind == "Deployment" and group == "apps":
            return namespace
        if kind == "DaemonSet" and group == "apps" and not first_daemonset:
            first_daemonset = namespace
    return first_daemonset


__all__ = ["Caches", "RenderError", "TemplateAddon", "workload_namespace"]
