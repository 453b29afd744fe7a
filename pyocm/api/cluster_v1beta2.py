"""``cluster.open-cluster-management.io/v1beta2``: ManagedClusterSet and its bindings.

ManagedClusterSet (cluster scoped) groups clusters: by the exclusive
``cluster.open-cluster-management.io/clusterset=<set>`` label (the default), by a label
selector, or, as a pyocm addition from mission 002, by one exclusive ``key=value`` label
(``selectorType: ExclusiveLabel`` with ``exclusiveLabel``). The addition only extends the
upstream schema: every upstream field, default and enum value is kept, so upstream YAML
validates and defaults identically.

ManagedClusterSetBinding (namespaced, named after its set) makes a set usable by the
Placements of one namespace.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, wellknown
from pyocm.api import schema as s

SELECTOR_TYPES = (
    wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL,
    wellknown.SELECTOR_LABEL_SELECTOR,
    wellknown.SELECTOR_EXCLUSIVE_LABEL,
)
_DEFAULT_SELECTOR = {"selectorType": wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL}


def exclusive_label() -> s.Schema:
    """The pyocm ``ExclusiveLabel`` selector: sets using the same key never share a cluster."""
    return s.obj(
        {
            "key": s.string(description="Label key; sets with the same key are exclusive."),
            "value": s.string(description="Label value selecting this set's clusters."),
        },
        required=("key", "value"),
        description="The one label that selects clusters for selectorType ExclusiveLabel.",
    )


def _cluster_selector() -> s.Schema:
    return s.obj(
        {
            "exclusiveLabel": exclusive_label(),
            "labelSelector": common.label_selector(
                description="Selects clusters for selectorType LabelSelector."
            ),
            "selectorType": s.string(
                enum=SELECTOR_TYPES,
                default=wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL,
                description="How member clusters are selected.",
            ),
        },
        required=("selectorType",),
        default=_DEFAULT_SELECTOR,
        description="Selects the member clusters.",
    )


def _managed_namespace() -> s.Schema:
    return s.obj(
        {"name": s.string(max_length=63, pattern=common.DNS_LABEL)},
        required=("name",),
    )


MANAGED_CLUSTER_SET = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1beta2",
    kind="ManagedClusterSet",
    plural="managedclustersets",
    singular="managedclusterset",
    namespaced=False,
    short_names=("mclset", "mclsets"),
    status_subresource=True,
    printer_columns=(
        descriptor.condition_column("Empty", wellknown.CLUSTER_SET_EMPTY),
        descriptor.age_column(),
    ),
    schema=s.kind_root(
        description="A group of managed clusters that workloads can be placed on.",
        spec=s.obj(
            {
                "clusterSelector": _cluster_selector(),
                "managedNamespaces": s.array(
                    _managed_namespace(),
                    list_type="map",
                    map_keys=("name",),
                    description="Namespaces created on every member cluster.",
                ),
            },
            default={"clusterSelector": _DEFAULT_SELECTOR},
            description="How members are chosen.",
        ),
        status=s.obj(
            {"conditions": common.conditions(keyed_by_type=False)},
            description="Observed state of the set.",
        ),
    ),
)

MANAGED_CLUSTER_SET_BINDING = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1beta2",
    kind="ManagedClusterSetBinding",
    plural="managedclustersetbindings",
    singular="managedclustersetbinding",
    namespaced=True,
    short_names=("mclsetbinding", "mclsetbindings"),
    status_subresource=True,
    schema=s.kind_root(
        description="Makes a ManagedClusterSet available to the namespace it lives in.",
        spec=s.obj(
            {"clusterSet": s.string(min_length=1, description="Name of the bound set.")},
            description="The bound set.",
        ),
        status=s.obj(
            {"conditions": common.conditions(keyed_by_type=False)},
            description="Whether the set exists.",
        ),
    ),
)
