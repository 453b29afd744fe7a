"""``cluster.open-cluster-management.io/v1``: ManagedCluster, the hub's record of one cluster.

Cluster scoped. The registration agent creates it; a hub admin accepts it by setting
``spec.hubAcceptsClient``; the agent reports health, capacity, version and claims in
``status``. ``leaseDurationSeconds`` defaults to 60 through the schema, not a webhook.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, wellknown
from pyocm.api import schema as s

#: Taint effects: never select, prefer not to select, keep only clusters already selected.
TAINT_EFFECTS = (
    wellknown.TAINT_NO_SELECT,
    wellknown.TAINT_PREFER_NO_SELECT,
    wellknown.TAINT_NO_SELECT_IF_NEW,
)


def taint() -> s.Schema:
    """A ManagedCluster taint; ``timeAdded`` is stamped by the hub, never by the client."""
    return s.obj(
        {
            "effect": s.string(enum=TAINT_EFFECTS, description="How placements treat the taint."),
            "key": s.string(max_length=316, pattern=common.QUALIFIED_NAME),
            "timeAdded": s.date_time(nullable=True, description="When the taint was added."),
            "value": s.string(max_length=1024),
        },
        required=("effect", "key"),
    )


def _client_config() -> s.Schema:
    return s.obj(
        {
            "caBundle": s.string(format="byte", description="PEM CA bundle for the URL."),
            "url": s.string(description="An https URL of the cluster's API server."),
        },
        required=("url",),
    )


def _spec() -> s.Schema:
    return s.obj(
        {
            "hubAcceptsClient": s.boolean(
                description="Whether the hub admin accepted the cluster."
            ),
            "leaseDurationSeconds": s.int32(
                default=60, description="How often the agent renews its lease."
            ),
            "managedClusterClientConfigs": s.array(_client_config()),
            "taints": s.array(taint(), description="Taints that repel placements."),
        },
        description="What the hub wants for this cluster.",
    )


def _claim() -> s.Schema:
    return s.obj(
        {
            "name": s.string(min_length=1, max_length=253),
            "value": s.string(min_length=1, max_length=1024),
        }
    )


def _managed_namespace() -> s.Schema:
    return s.obj(
        {
            "clusterSet": s.string(
                description="The ManagedClusterSet that asks for the namespace."
            ),
            "conditions": common.conditions(),
            "name": s.string(max_length=63, pattern=common.DNS_LABEL),
        },
        required=("clusterSet", "name"),
    )


def _status() -> s.Schema:
    return s.obj(
        {
            "allocatable": common.resource_list(description="Schedulable resources."),
            "capacity": common.resource_list(description="Total resources of all nodes."),
            "clusterClaims": s.array(_claim(), description="Claims collected from the cluster."),
            "conditions": common.conditions(),
            "managedNamespaces": s.array(
                _managed_namespace(), list_type="map", map_keys=("clusterSet", "name")
            ),
            "version": s.obj({"kubernetes": s.string()}, description="Versions of the cluster."),
        },
        description="What the agent observed about this cluster.",
    )


MANAGED_CLUSTER = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1",
    kind="ManagedCluster",
    plural="managedclusters",
    singular="managedcluster",
    namespaced=False,
    short_names=("mcl", "mcls"),
    status_subresource=True,
    printer_columns=(
        descriptor.PrinterColumn(
            name="Hub Accepted", type="boolean", json_path=".spec.hubAcceptsClient"
        ),
        descriptor.PrinterColumn(
            name="Managed Cluster URLs",
            type="string",
            json_path=".spec.managedClusterClientConfigs[*].url",
        ),
        descriptor.condition_column("Joined", wellknown.CLUSTER_JOINED),
        descriptor.condition_column("Available", wellknown.CLUSTER_AVAILABLE),
        descriptor.age_column(),
    ),
    schema=s.kind_root(
        description="A cluster managed by this hub.",
        spec=_spec(),
        status=_status(),
    ),
)
