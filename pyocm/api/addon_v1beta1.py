"""``addon.open-cluster-management.io/v1beta1``: the served, non-storage add-on version.

Objects are stored as ``v1alpha1`` (:mod:`pyocm.api.addon_v1alpha1`); OCM's own controllers
and agents read and write this version. Differences from v1alpha1: ClusterManagementAddOn
has ``spec.defaultConfigs`` instead of ``supportedConfigs`` and no ``addOnConfiguration``;
ManagedClusterAddOn drops ``installNamespace`` (kept as an annotation) and describes
registrations as typed ``kubeClient``/``customSigner`` entries.
"""

from __future__ import annotations

from pyocm.api import addon_common, common, descriptor, wellknown
from pyocm.api import schema as s

REGISTRATION_TYPES = ("kubeClient", "customSigner")

CLUSTER_MANAGEMENT_ADDON = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1beta1",
    kind="ClusterManagementAddOn",
    plural="clustermanagementaddons",
    singular="clustermanagementaddon",
    namespaced=False,
    short_names=("cma", "cmas"),
    status_subresource=True,
    printer_columns=(addon_common.DISPLAY_NAME_COLUMN,),
    storage=False,
    schema=s.kind_root(
        description="An add-on as the hub manages it: its configs and where to install it.",
        spec=s.obj(
            {
                "addOnMeta": addon_common.addon_meta(),
                "defaultConfigs": s.array(
                    addon_common.addon_config(),
                    list_type="map",
                    map_keys=("group", "resource"),
                    description="Configuration types with their default objects.",
                ),
                "installStrategy": addon_common.install_strategy(),
            },
            description="The add-on's default configs and install strategy.",
        ),
        status=s.obj(
            {
                "defaultConfigReferences": addon_common.default_config_references(),
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
            "resource": addon_common.config_resource(),
        },
        required=("resource",),
    )


def _registration() -> s.Schema:
    kube_client = s.obj(
        {
            "driver": s.string(enum=addon_common.KUBE_CLIENT_DRIVERS),
            "subject": s.obj({"groups": s.string_list(), "user": s.string()}),
        }
    )
    custom_signer = s.obj(
        {
            "signerName": addon_common.signer_name(),
            "subject": s.obj(
                {
                    "groups": s.string_list(),
                    "organizationUnits": s.string_list(),
                    "user": s.string(),
                }
            ),
        },
        required=("signerName",),
    )
    return s.obj(
        {
            "customSigner": custom_signer,
            "kubeClient": kube_client,
            "type": s.string(enum=REGISTRATION_TYPES),
        },
        required=("type",),
    )


def _mca_status() -> s.Schema:
    return s.obj(
        {
            "addOnMeta": addon_common.addon_meta(),
            "conditions": common.conditions(),
            "configReferences": s.array(_config_reference()),
            "healthCheck": addon_common.health_check(),
            "namespace": s.string(description="Namespace the agent is installed in."),
            "registrations": s.array(_registration()),
            "relatedObjects": addon_common.related_objects(),
            "supportedConfigs": addon_common.supported_configs(),
        },
        description="What the add-on reports on this cluster.",
    )


MANAGED_CLUSTER_ADDON = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1beta1",
    kind="ManagedClusterAddOn",
    plural="managedclusteraddons",
    singular="managedclusteraddon",
    namespaced=True,
    short_names=("mca", "mcas"),
    status_subresource=True,
    printer_columns=addon_common.MCA_PRINTER_COLUMNS,
    storage=False,
    schema=s.kind_root(
        description="An add-on installed on the cluster named by the namespace.",
        spec=s.obj(
            {"configs": s.array(addon_common.addon_config())},
            description="Per-cluster configs of the add-on.",
        ),
        status=_mca_status(),
        required=("spec",),
    ),
)

ADDON_DEPLOYMENT_CONFIG = descriptor.ResourceDescriptor(
    group=wellknown.ADDON_GROUP,
    version="v1beta1",
    kind="AddOnDeploymentConfig",
    plural="addondeploymentconfigs",
    singular="addondeploymentconfig",
    namespaced=True,
    storage=False,
    schema=s.kind_root(
        description="How an add-on agent is deployed: variables, placement, registries, proxy.",
        spec=addon_common.deployment_config_spec(),
        required=("spec",),
    ),
)
