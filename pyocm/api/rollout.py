"""The rollout strategy of ``cluster.open-cluster-management.io/v1alpha1``.

ClusterManagementAddOn install strategies and ManifestWorkReplicaSet placement references
both embed it: how fast a change spreads over the clusters a placement selected
(all at once, a bounded number at a time, or one decision group at a time).
"""

from __future__ import annotations

from typing import Any

from pyocm.api import schema as s

ALL = "All"
PROGRESSIVE = "Progressive"
PROGRESSIVE_PER_GROUP = "ProgressivePerGroup"

#: A count or a percentage up to 100%.
_COUNT_OR_PERCENT = r"^((100|[0-9]{1,2})%|[0-9]+)$"
#: A Go-like duration in whole hours, minutes or seconds, or ``None`` for "wait forever".
_DEADLINE = r"^(([0-9])+[h|m|s])|None$"


def _timing_fields() -> dict[str, s.Schema]:
    """Fields every strategy has: failure budget, settle time, per-cluster deadline."""
    return {
        "maxFailures": s.int_or_string(
            pattern=_COUNT_OR_PERCENT,
            default=0,
            description="Failed clusters tolerated before the rollout stops.",
        ),
        "minSuccessTime": s.string(
            default="0", description="How long a success must hold before moving on."
        ),
        "progressDeadline": s.string(
            pattern=_DEADLINE,
            default="None",
            description="How long to wait for one cluster before counting it failed.",
        ),
        # pyocm's one addition: older OCM APIs named progressDeadline "timeout", and
        # YAML written for them (seed 003's upgrade example) still uses it. Taken, with
        # no default, and read as progressDeadline when that is unset
        # (pyocm.work.rollout.progress_deadline).
        "timeout": s.string(
            pattern=_DEADLINE,
            description="Deprecated: the older name of progressDeadline (pyocm only).",
        ),
    }


def _mandatory_groups() -> s.Schema:
    group = s.obj({"groupIndex": s.int32(), "groupName": s.string()})
    return s.array(group, description="Decision groups that must succeed first.")


def _progressive() -> s.Schema:
    return s.obj(
        {
            "mandatoryDecisionGroups": _mandatory_groups(),
            "maxConcurrency": s.int_or_string(
                pattern=_COUNT_OR_PERCENT, description="Clusters updated at the same time."
            ),
            **_timing_fields(),
        }
    )


def _progressive_per_group() -> s.Schema:
    return s.obj({"mandatoryDecisionGroups": _mandatory_groups(), **_timing_fields()})


def rollout_strategy(*, default: Any) -> s.Schema:
    """A ``RolloutStrategy``; the default of the whole object differs between embedding kinds."""
    return s.obj(
        {
            "all": s.obj(_timing_fields()),
            "progressive": _progressive(),
            "progressivePerGroup": _progressive_per_group(),
            "type": s.string(enum=(ALL, PROGRESSIVE, PROGRESSIVE_PER_GROUP), default=ALL),
        },
        default=default,
        description="How the change rolls out over the selected clusters.",
    )
