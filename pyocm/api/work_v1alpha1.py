"""``work.open-cluster-management.io/v1alpha1``: ManifestWorkReplicaSet.

Namespaced. Stamps one ManifestWork from ``spec.manifestWorkTemplate`` into every cluster
the referenced Placements select, rolling changes out by each placement's strategy, and
summarises how those works are doing.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, rollout, wellknown, workspec
from pyocm.api import schema as s

_PLACEMENT_VERIFIED = wellknown.MWRS_PLACEMENT_VERIFIED
_WORKS_APPLIED = wellknown.MWRS_MANIFESTWORK_APPLIED


def _placement_ref() -> s.Schema:
    return s.obj(
        {
            "name": s.string(min_length=1, description="A Placement in the same namespace."),
            "rolloutStrategy": rollout.rollout_strategy(
                default={"all": {"progressDeadline": "None"}, "type": rollout.ALL}
            ),
        },
        required=("name",),
    )


def _summary() -> s.Schema:
    counts = ("applied", "available", "degraded", "desiredTotal", "progressing", "total", "updated")
    return s.obj({name: s.integer() for name in counts})


def _status() -> s.Schema:
    placement_summary = s.obj(
        {
            "availableDecisionGroups": s.string(),
            "name": s.string(),
            "summary": _summary(),
        }
    )
    return s.obj(
        {
            "conditions": common.conditions(),
            "placementSummary": s.array(placement_summary),
            "summary": _summary(),
        },
        description="How the stamped works are doing.",
    )


def _spec() -> s.Schema:
    return s.obj(
        {
            "cascadeDeletionPolicy": s.string(
                enum=("Background", "Foreground"), default="Background"
            ),
            "manifestWorkTemplate": workspec.manifest_work_spec(
                description="The ManifestWork spec stamped into each selected cluster."
            ),
            "placementRefs": s.array(_placement_ref(), min_items=1),
        },
        required=("cascadeDeletionPolicy", "placementRefs"),
        description="The template and where it goes.",
    )


MANIFEST_WORK_REPLICA_SET = descriptor.ResourceDescriptor(
    group=wellknown.WORK_GROUP,
    version="v1alpha1",
    kind="ManifestWorkReplicaSet",
    plural="manifestworkreplicasets",
    singular="manifestworkreplicaset",
    namespaced=True,
    short_names=("mwrs",),
    status_subresource=True,
    printer_columns=(
        descriptor.condition_column(
            "Placement", _PLACEMENT_VERIFIED, field_name="reason", description="Reason"
        ),
        descriptor.condition_column("Found", _PLACEMENT_VERIFIED, description="Configured"),
        descriptor.condition_column(
            "ManifestWorks", _WORKS_APPLIED, field_name="reason", description="Reason"
        ),
        descriptor.condition_column("Applied", _WORKS_APPLIED, description="Applied"),
    ),
    schema=s.kind_root(
        description="Deploys one ManifestWork to every cluster some Placements select.",
        spec=_spec(),
        status=_status(),
    ),
)
