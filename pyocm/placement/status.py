"""A Placement's status as upstream's scheduling controller writes it: the number of
selected clusters, the decision groups, and the conditions PlacementSatisfied and
PlacementMisconfigured with upstream's reasons and messages (``newSatisfiedCondition``,
``newMisconfiguredCondition``).

The status is written once per reconcile, after the PlacementDecisions, and only when
it changed; the write carries the resourceVersion it was computed from, so a
concurrent writer makes it fail with 409 and the reconcile runs again.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta1 import (
    Placement,
    PlacementStatus,
    PlacementStatusDecisionGroup,
)
from pyocm.api.models.common import Condition
from pyocm.base.clock import Clock
from pyocm.runtime.client import Api


@dataclass(frozen=True)
class ConditionValue:
    """One condition's status, reason and message (its type is the caller's)."""

    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """What one scheduling pass found, as the conditions need it."""

    spec_cluster_sets: Sequence[str]
    eligible_cluster_sets: Sequence[str]
    bindings: int
    available: int
    selected: int
    unscheduled: int
    #: Why scheduling stopped (``<plugin>:<message>``), for a misconfigured placement.
    misconfigured: str | None = None


def satisfied(outcome: Outcome) -> ConditionValue:
    """``PlacementSatisfied``: the first rule that holds, in upstream's order."""
    if outcome.bindings == 0:
        return ConditionValue(
            "False",
            wellknown.REASON_NO_BINDINGS,
            "No valid ManagedClusterSetBindings found in placement namespace",
        )
    if not outcome.eligible_cluster_sets:
        named = ",".join(outcome.spec_cluster_sets)
        return ConditionValue(
            "False",
            wellknown.REASON_NO_INTERSECTION,
            f"None of ManagedClusterSets [{named}] is bound to placement namespace",
        )
    if outcome.available == 0:
        named = ",".join(outcome.eligible_cluster_sets)
        return ConditionValue(
            "False",
            wellknown.REASON_ALL_SETS_EMPTY,
            f"All ManagedClusterSets [{named}] have no member ManagedCluster",
        )
    # Upstream's next rule, a scheduler Error (NotAllDecisionsScheduled with the error),
    # comes from a failing lister; reading caches cannot fail so.
    if outcome.selected == 0:
        # Also what a misconfigured placement gets: its scheduling stopped with nothing chosen.
        return ConditionValue(
            "False",
            wellknown.REASON_NO_CLUSTER_MATCHED_PREDICATE,
            "No ManagedCluster matches any of the cluster predicate",
        )
    if outcome.unscheduled == 0:
        return ConditionValue(
            "True", wellknown.REASON_ALL_SCHEDULED, "All cluster decisions scheduled"
        )
    return ConditionValue(
        "False",
        wellknown.REASON_NOT_ALL_SCHEDULED,
        f"{outcome.unscheduled} cluster decisions unscheduled",
    )


def misconfigured(message: str | None) -> ConditionValue:
    """``PlacementMisconfigured``: True with ``message`` (``<plugin>:<message>``) when a
    step refused the spec."""
    if message is not None:
        return ConditionValue("True", wellknown.REASON_MISCONFIGURED, message)
    return ConditionValue(
        "False", wellknown.REASON_SUCCEED_CONFIGURED, "Placement configurations check pass"
    )


def desired_status(
    placement: Placement,
    outcome: Outcome,
    groups: Sequence[PlacementStatusDecisionGroup],
    *,
    clock: Clock,
) -> PlacementStatus:
    """The status ``placement`` should have: its current one with the counts and groups
    replaced and both conditions set (``lastTransitionTime`` moves only on a flip)."""
    current = placement.get("status", {})
    status: PlacementStatus = copy.deepcopy(current)
    status["numberOfSelectedClusters"] = outcome.selected
    status["decisionGroups"] = [copy.deepcopy(group) for group in groups]
    found = [models.wire(c) for c in copy.deepcopy(current.get("conditions", []))]
    now = clock.now()
    for type, value in (
        (wellknown.PLACEMENT_MISCONFIGURED, misconfigured(outcome.misconfigured)),
        (wellknown.PLACEMENT_SATISFIED, satisfied(outcome)),
    ):
        conditions.set_condition(
            found,
            type=type,
            status=value.status,
            reason=value.reason,
            message=value.message,
            now=now,
        )
    status["conditions"] = [models.view(Condition, c) for c in found]
    return status


async def write_status(api: Api, placement: Placement, status: PlacementStatus) -> bool:
    """Patch ``placement``'s status to ``status`` unless it is that already; return
    whether it wrote. The patch is guarded by the resourceVersion it was computed from."""
    if placement.get("status") == status:
        return False
    meta = placement["metadata"]
    patch = {
        "metadata": {"resourceVersion": meta["resourceVersion"]},
        "status": models.wire(status),
    }
    await api.patch(
        ocm.PLACEMENT,
        meta["name"],
        patch,
        namespace=meta["namespace"],
        subresource="status",
    )
    return True
