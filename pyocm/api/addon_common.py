"""Add-on API pieces that are identical in ``v1alpha1`` and ``v1beta1``.

Add-ons are configured by references to other objects (an AddOnDeploymentConfig, an
AddOnTemplate, ...), named by group, resource, namespace and name; the controllers record
which configuration they want (``desiredConfig``), last applied and last knew to be good,
each with the spec hash of the referenced object. The install strategy, the add-on meta
and the whole AddOnDeploymentConfig spec are also shared by both versions.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, rollout, wellknown
from pyocm.api import schema as s

HEALTH_CHECK_MODES = ("Lease", "Customized")
INSTALL_STRATEGY_TYPES = ("Manual", "Placements")
KUBE_CLIENT_DRIVERS = ("csr", "token")
SIGNER_NAME = r"^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$"

DISPLAY_NAME_COLUMN = descriptor.PrinterColumn(
    name="DISPLAY NAME", type="string", json_path=".spec.addOnMeta.displayName"
)
MCA_PRINTER_COLUMNS = (
    descriptor.condition_column("Available", wellknown.ADDON_AVAILABLE),
    descriptor.condition_column("Degraded", wellknown.ADDON_DEGRADED),
    descriptor.condition_column("Progressing", wellknown.ADDON_PROGRESSING),
)


def config_group() -> s.Schema:
    return s.string(default="", description="API group of the configuration; empty is core.")


def config_resource() -> s.Schema:
    return s.string(min_length=1, description="Resource (plural) of the configuration.")


def signer_name() -> s.Schema:
    return s.string(min_length=5, max_length=571, pattern=SIGNER_NAME)


def addon_config() -> s.Schema:
    """A reference to one configuration object: group, resource, namespace, name."""
    return s.obj(
        {
            "group": config_group(),
            "name": s.string(min_length=1),
            "namespace": s.string(),
            "resource": config_resource(),
        },
        required=("name", "resource"),
    )


def config_spec_hash() -> s.Schema:
    """A configuration object plus the hash of its spec when it was recorded."""
    return s.obj(
        {"name": s.string(min_length=1), "namespace": s.string(), "specHash": s.string()},
        required=("name",),
    )


def config_group_resource() -> s.Schema:
    return s.obj({"group": config_group(), "resource": config_resource()}, required=("resource",))


def addon_meta() -> s.Schema:
    return s.obj(
        {"description": s.string(), "displayName": s.string()},
        description="How the add-on presents itself.",
    )


def _placement_strategy() -> s.Schema:
    return s.obj(
        {
            "configs": s.array(addon_config(), description="Overrides of the default configs."),
            "name": s.string(min_length=1),
            "namespace": s.string(min_length=1),
            "rolloutStrategy": rollout.rollout_strategy(default={"type": rollout.ALL}),
        },
        required=("name", "namespace"),
    )


def install_strategy() -> s.Schema:
    """Where the add-on is installed: nowhere automatically, or on placement decisions."""
    return s.obj(
        {
            "placements": s.array(
                _placement_strategy(), list_type="map", map_keys=("namespace", "name")
            ),
            "type": s.string(enum=INSTALL_STRATEGY_TYPES, default="Manual"),
        },
        default={"type": "Manual"},
        description="Which clusters get the add-on.",
    )


def default_config_references() -> s.Schema:
    reference = s.obj(
        {
            "desiredConfig": config_spec_hash(),
            "group": config_group(),
            "resource": config_resource(),
        },
        required=("resource",),
    )
    return s.array(reference, description="Default configurations with their spec hashes.")


def install_progressions() -> s.Schema:
    reference = s.obj(
        {
            "desiredConfig": config_spec_hash(),
            "group": config_group(),
            "lastAppliedConfig": config_spec_hash(),
            "lastKnownGoodConfig": config_spec_hash(),
            "resource": config_resource(),
        },
        required=("resource",),
    )
    progression = s.obj(
        {
            "conditions": common.conditions(),
            "configReferences": s.array(reference),
            "name": s.string(min_length=1),
            "namespace": s.string(min_length=1),
        },
        required=("name", "namespace"),
    )
    return s.array(progression, description="Rollout progress per placement.")


def supported_configs() -> s.Schema:
    return s.array(
        config_group_resource(),
        list_type="map",
        map_keys=("group", "resource"),
        description="Configuration types the add-on accepts.",
    )


def related_objects() -> s.Schema:
    related = s.obj(
        {"group": s.string(), "name": s.string(), "namespace": s.string(), "resource": s.string()},
        required=("group", "name", "resource"),
    )
    return s.array(related, description="Objects the add-on created or depends on.")


def health_check() -> s.Schema:
    return s.obj(
        {"mode": s.string(enum=HEALTH_CHECK_MODES, default="Lease")},
        description="How the add-on's health is determined.",
    )


def _customized_variable() -> s.Schema:
    return s.obj(
        {
            "name": s.string(max_length=255, pattern=r"^[a-zA-Z_][_a-zA-Z0-9]*$"),
            "value": s.string(max_length=1024),
        },
        required=("name",),
    )


def _resource_requirement() -> s.Schema:
    container_id = (
        r"^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$"
    )
    return s.obj(
        {
            "containerID": s.string(
                pattern=container_id, description="<resource>:<name>:<container>, * matches any."
            ),
            "resources": common.resource_requirements(),
        },
        required=("containerID", "resources"),
    )


def deployment_config_spec() -> s.Schema:
    """The AddOnDeploymentConfig spec: how an add-on agent is deployed on each cluster."""
    return s.obj(
        {
            "agentInstallNamespace": s.string(
                max_length=63,
                pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$",
                default=wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE,
            ),
            "customizedVariables": s.array(
                _customized_variable(), list_type="map", map_keys=("name",)
            ),
            "nodePlacement": s.obj(
                {"nodeSelector": s.string_map(), "tolerations": s.array(common.toleration())}
            ),
            "proxyConfig": s.obj(
                {
                    "caBundle": s.string(format="byte"),
                    "httpProxy": s.string(),
                    "httpsProxy": s.string(),
                    "noProxy": s.string(),
                }
            ),
            "registries": s.array(
                s.obj({"mirror": s.string(), "source": s.string()}, required=("mirror",))
            ),
            "resourceRequirements": s.array(
                _resource_requirement(), list_type="map", map_keys=("containerID",)
            ),
        },
        description="How the add-on agent is deployed.",
    )
