"""``cluster.open-cluster-management.io/v1alpha1``: ClusterClaim and AddOnPlacementScore.

ClusterClaim is cluster scoped and lives on the managed cluster: the agent copies claims into
the ManagedCluster status. AddOnPlacementScore is namespaced (cluster namespace on the hub):
add-ons publish scores there that placements can prioritise by.

The rollout strategy types of this API version are in :mod:`pyocm.api.rollout`.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, wellknown
from pyocm.api import schema as s

CLUSTER_CLAIM = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1alpha1",
    kind="ClusterClaim",
    plural="clusterclaims",
    singular="clusterclaim",
    namespaced=False,
    schema=s.kind_root(
        description="A fact a managed cluster states about itself.",
        spec=s.obj(
            {"value": s.string(min_length=1, max_length=1024, description="The claimed value.")},
            description="The claim.",
        ),
    ),
)


def _score() -> s.Schema:
    return s.obj(
        {
            "name": s.string(description="Score name placements refer to."),
            "value": s.integer(format="int32", minimum=-100, maximum=100),
        },
        required=("name", "value"),
    )


ADDON_PLACEMENT_SCORE = descriptor.ResourceDescriptor(
    group=wellknown.CLUSTER_GROUP,
    version="v1alpha1",
    kind="AddOnPlacementScore",
    plural="addonplacementscores",
    singular="addonplacementscore",
    namespaced=True,
    status_subresource=True,
    schema=s.kind_root(
        description="Scores an add-on publishes for one cluster.",
        status=s.obj(
            {
                "conditions": common.conditions(),
                "scores": s.array(_score(), list_type="map", map_keys=("name",)),
                "validUntil": s.date_time(description="After this time the scores are stale."),
            },
            description="The scores.",
        ),
    ),
)
