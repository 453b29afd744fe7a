"""``cluster.open-cluster-management.io/v1beta1``: Placement and PlacementDecision.

Both are namespaced. A Placement selects clusters from the ManagedClusterSets bound to its
namespace (predicates, taint tolerations, prioritizers, spread); the scheduler writes the
result into PlacementDecisions labelled with the placement's name, at most 100 per object.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, wellknown
from pyocm.api import schema as s

#: The taint key pattern (qualified name) written without the final group, as upstream does.
_TOPOLOGY_KEY = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
_GROUP_NAME = r"^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$"
_TAINT_EFFECTS = (
    wellknown.TAINT_NO_SELECT,
    wellknown.TAINT_PREFER_NO_SELECT,
    wellknown.TAINT_NO_SELECT_IF_NEW,
)


def claim_selector() -> s.Schema:
    """Requirements over cluster claims (name to value), matched like label requirements."""
    return s.obj({"matchExpressions": s.array(common.label_selector_requirement())})


def _cluster_selector() -> s.Schema:
    return s.obj(
        {
            "celSelector": s.obj({"celExpressions": s.string_list()}),
            "claimSelector": claim_selector(),
            "labelSelector": common.label_selector(),
        },
        description="All selectors must match (AND).",
    )


def _group_cluster_selector() -> s.Schema:
    return s.obj({"claimSelector": claim_selector(), "labelSelector": common.label_selector()})


def _decision_strategy() -> s.Schema:
    group = s.obj(
        {
            "groupClusterSelector": _group_cluster_selector(),
            "groupName": s.string(pattern=_GROUP_NAME),
        },
        required=("groupClusterSelector", "groupName"),
    )
    group_strategy = s.obj(
        {
            "clustersPerDecisionGroup": s.int_or_string(
                pattern=r"^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$",
                default="100%",
                description="Clusters per decision group, as a count or a percentage.",
            ),
            "decisionGroups": s.array(group),
        }
    )
    return s.obj({"groupStrategy": group_strategy})


def _prioritizer_policy() -> s.Schema:
    coordinate = s.obj(
        {
            "addOn": s.obj(
                {"resourceName": s.string(), "scoreName": s.string()},
                required=("resourceName", "scoreName"),
            ),
            "builtIn": s.string(),
            "type": s.string(enum=("BuiltIn", "AddOn"), default="BuiltIn"),
        },
        required=("type",),
    )
    configuration = s.obj(
        {
            "scoreCoordinate": coordinate,
            "weight": s.integer(format="int32", minimum=-10, maximum=10, default=1),
        },
        required=("scoreCoordinate",),
    )
    return s.obj(
        {
            "configurations": s.array(configuration),
            "mode": s.string(default="Additive", description="Additive or Exact."),
        }
    )


def _spread_policy() -> s.Schema:
    constraint = s.obj(
        {
            "maxSkew": s.integer(format="int32", minimum=1, default=1),
            "topologyKey": s.string(max_length=316, pattern=_TOPOLOGY_KEY),
            "topologyKeyType": s.string(enum=("Label", "Claim")),
            "whenUnsatisfiable": s.string(
                enum=("DoNotSchedule", "ScheduleAnyway"), default="ScheduleAnyway"
            ),
        },
        required=("topologyKey", "topologyKeyType"),
    )
    return s.obj({"spreadConstraints": s.array(constraint, max_items=8)})


def _toleration() -> s.Schema:
    return s.obj(
        {
            "effect": s.string(enum=_TAINT_EFFECTS),
            "key": s.string(max_length=316, pattern=common.QUALIFIED_NAME),
            "operator": s.string(default="Equal", description="Equal or Exists."),
            "tolerationSeconds": s.int64(description="How long the taint is tolerated."),
            "value": s.string(max_length=1024),
        }
    )


def _spec() -> s.Schema:
    return s.obj(
        {
            "clusterSets": s.string_list(description="Bound sets to select from; empty means all."),
            "decisionStrategy": _decision_strategy(),
            "numberOfClusters": s.int32(
                description="How many clusters to select; unset means all."
            ),
            "predicates": s.array(
                s.obj({"requiredClusterSelector": _cluster_selector()}),
                description="Cluster selectors, ORed.",
            ),
            "prioritizerPolicy": _prioritizer_policy(),
            "scoreRateLimit": s.string(pattern=r"^[0-9]+[hms]$", default="1m"),
            "sortBy": s.string(enum=("ClusterName", "Score"), default="ClusterName"),
            "spreadPolicy": _spread_policy(),
            "tolerations": s.array(_toleration()),
        },
        description="Which clusters to select and how.",
    )


def _decision_group_status() -> s.Schema:
    return s.obj(
        {
            "clusterCount": s.int32(default=0),
            "decisionGroupIndex": s.int32(),
            "decisionGroupName": s.string(),
            "decisions": s.string_list(description="Names of the PlacementDecisions of the group."),
        }
    )


def _status() -> s.Schema:
    return s.obj(
        {
            "conditions": common.conditions(),
            "decisionGroups": s.array(_decision_group_status()),
            "lastScoreUpdateTime": s.date_time(),
            "numberOfSelectedClusters": s.int32(),
        },
        description="The scheduling result.",
    )


PLACEMENT = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1beta1",
    kind="Placement",
    plural="placements",
    singular="placement",
    namespaced=True,
    status_subresource=True,
    printer_columns=(
        descriptor.condition_column("Succeeded", wellknown.PLACEMENT_SATISFIED),
        descriptor.condition_column("Reason", wellknown.PLACEMENT_SATISFIED, field_name="reason"),
        descriptor.PrinterColumn(
            name="SelectedClusters", type="integer", json_path=".status.numberOfSelectedClusters"
        ),
    ),
    schema=s.kind_root(
        description="Selects managed clusters from the cluster sets bound to its namespace.",
        spec=_spec(),
        status=_status(),
        required=("spec",),
    ),
)


def _decision() -> s.Schema:
    return s.obj(
        {
            "clusterName": s.string(),
            "reason": s.string(),
            "score": s.int64(),
        },
        required=("clusterName", "reason"),
    )


PLACEMENT_DECISION = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1beta1",
    kind="PlacementDecision",
    plural="placementdecisions",
    singular="placementdecision",
    namespaced=True,
    status_subresource=True,
    schema=s.kind_root(
        description="A slice of the clusters a Placement selected.",
        status=s.obj(
            {"decisions": s.array(_decision())},
            required=("decisions",),
            description="The selected clusters.",
        ),
    ),
)
