"""``addon.open-cluster-management.io/v1alpha1``: the storage version of the add-on API.

ClusterManagementAddOn, ManagedClusterAddOn and AddOnDeploymentConfig are served in
``v1alpha1`` and ``v1beta1`` (:mod:`pyocm.api.addon_v1beta1`); **v1alpha1 is the storage
version** of all three, as upstream has it, and pyocm converts between the two natively
instead of through a conversion webhook. AddOnTemplate exists only in v1alpha1; its
``agentSpec`` is a whole ManifestWork spec (:mod:`pyocm.api.workspec`).
"""

from __future__ import annotations

from pyocm.api import addon_common, common, descriptor, wellknown, workspec
from pyocm.api import schema as s


def addon_configuration() -> s.Schema:
    """The pre-config-reference way to point at one add-on configuration CR (deprecated)."""
    return s.obj({"crName": s.string(), "crdName": s.string(), "lastObservedGeneration": s.int64()})


def _supported_config() -> s.Schema:
    default_config = s.obj(
        {"name": s.string(min_length=1), "namespace": s.string()}, required=("name",)
    )
    return s.obj(
        {
            "defaultConfig": default_config,
            "group": addon_common.config_group(),
            "resource": addon_common.config_resource(),
        },
        required=("resource",),
    )


CLUSTER_MANAGEMENT_ADDON = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1alpha1",
    kind="ClusterManagementAddOn",
    plural="clustermanagementaddons",
    singular="clustermanagementaddon",
    namespaced=False,
    short_names=("cma", "cmas"),
    status_subresource=True,
    printer_columns=(
        addon_common.DISPLAY_NAME_COLUMN,
        descriptor.PrinterColumn(
            name="CRD NAME", type="string", json_path=".spec.addOnConfiguration.crdName"
        ),
    ),
    storage=True,
    schema=s.kind_root(
        description="An add-on as the hub manages it: its configs and where to install it.",
        spec=s.obj(
            {
                "addOnConfiguration": addon_configuration(),
                "addOnMeta": addon_common.addon_meta(),
                "installStrategy": addon_common.install_strategy(),
                "supportedConfigs": s.array(
                    _supported_config(), list_type="map", map_keys=("group", "resource")
                ),
            },
            description="The add-on's configuration types and install strategy.",
        ),
        status=s.obj(
            {
                # Lower-case "c" is the v1alpha1 wire name.
                "defaultconfigReferences": addon_common.default_config_references(),
                "installProgressions": addon_common.install_progressions(),
            },
            description="Resolved default configs and rollout progress.",
        ),
        required=("spec",),
    ),
)


def _config_reference() -> s.Schema:
    return s.obj(
        {
            "desiredConfig": addon_common.config_spec_hash(),
            "group": addon_common.config_group(),
            "lastAppliedConfig": addon_common.config_spec_hash(),
            "lastObservedGeneration": s.int64(),
            "name": s.string(min_length=1),
            "namespace": s.string(),
            "resource": addon_common.config_resource(),
        },
        required=("name", "resource"),
    )


def _registration() -> s.Schema:
    subject = s.obj(
        {
            "groups": s.string_list(),
            "organizationUnit": s.string_list(),
            "user": s.string(),
        }
    )
    return s.obj(
        {"signerName": addon_common.signer_name(), "subject": subject},
        required=("signerName",),
    )


def _mca_status() -> s.Schema:
    return s.obj(
        {
            "addOnConfiguration": addon_configuration(),
            "addOnMeta": addon_common.addon_meta(),
            "conditions": common.conditions(),
            "configReferences": s.array(_config_reference()),
            "healthCheck": addon_common.health_check(),
            "kubeClientDriver": s.string(enum=addon_common.KUBE_CLIENT_DRIVERS),
            "namespace": s.string(description="Namespace the agent is installed in."),
            "registrations": s.array(_registration()),
            "relatedObjects": addon_common.related_objects(),
            "supportedConfigs": addon_common.supported_configs(),
        },
        description="What the add-on reports on this cluster.",
    )


def _mca_spec() -> s.Schema:
    return s.obj(
        {
            "configs": s.array(addon_common.addon_config()),
            "installNamespace": s.string(
                max_length=63,
                pattern=common.DNS_LABEL,
                default=wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE,
            ),
        },
        description="Per-cluster configs of the add-on.",
    )


MANAGED_CLUSTER_ADDON = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1alpha1",
    kind="ManagedClusterAddOn",
    plural="managedclusteraddons",
    singular="managedclusteraddon",
    namespaced=True,
    short_names=("mca", "mcas"),
    status_subresource=True,
    printer_columns=addon_common.MCA_PRINTER_COLUMNS,
    storage=True,
    schema=s.kind_root(
        description="An add-on installed on the cluster named by the namespace.",
        spec=_mca_spec(),
        status=_mca_status(),
        required=("spec",),
    ),
)

ADDON_DEPLOYMENT_CONFIG = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1alpha1",
    kind="AddOnDeploymentConfig",
    plural="addondeploymentconfigs",
    singular="addondeploymentconfig",
    namespaced=True,
    storage=True,
    schema=s.kind_root(
        description="How an add-on agent is deployed: variables, placement, registries, proxy.",
        spec=addon_common.deployment_config_spec(),
        required=("spec",),
    ),
)


def _hub_permission() -> s.Schema:
    single_namespace = s.obj(
        {"namespace": s.string(), "roleRef": common.role_ref()},
        required=("namespace", "roleRef"),
    )
    return s.obj(
        {
            "currentCluster": s.obj({"clusterRoleName": s.string()}, required=("clusterRoleName",)),
            "singleNamespace": single_namespace,
            "type": s.string(enum=("CurrentCluster", "SingleNamespace")),
        },
        required=("type",),
    )


def _custom_signer() -> s.Schema:
    signing_ca = s.obj({"name": s.string(), "namespace": s.string()}, required=("name",))
    subject = s.obj(
        {
            "groups": s.string_list(),
            "organizationUnit": s.string_list(),
            "user": s.string(),
        }
    )
    return s.obj(
        {
            "signerName": addon_common.signer_name(),
            "signingCA": signing_ca,
            "subject": subject,
        },
        required=("signerName", "signingCA"),
    )


def _template_registration() -> s.Schema:
    return s.obj(
        {
            "customSigner": _custom_signer(),
            "kubeClient": s.obj({"hubPermissions": s.array(_hub_permission())}),
            "type": s.string(enum=("KubeClient", "CustomSigner")),
        },
        required=("type",),
    )


ADDON_TEMPLATE = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1alpha1",
    kind="AddOnTemplate",
    plural="addontemplates",
    singular="addontemplate",
    namespaced=False,
    printer_columns=(
        descriptor.PrinterColumn(name="ADDON NAME", type="string", json_path=".spec.addonName"),
    ),
    storage=True,
    schema=s.kind_root(
        description="An add-on agent described as data: manifests plus registrations.",
        spec=s.obj(
            {
                "addonName": s.string(description="The add-on this template belongs to."),
                "agentSpec": workspec.manifest_work_spec(
                    description="The agent's objects, deployed as a ManifestWork."
                ),
                "registration": s.array(_template_registration()),
            },
            required=("addonName", "agentSpec"),
            description="The agent and its hub registrations.",
        ),
        required=("spec",),
    ),
)
