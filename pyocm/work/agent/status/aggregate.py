"""The work's own conditions, aggregated from its manifests' (upstream's
``conditions.AggregateManifestConditions`` and the manifest reconciler's ``Applied``).

* ``Available``, always: False ``ResourcesNotAvailable`` when any manifest is not
  available, else Unknown ``ResourcesStatusUnknown`` when any is unknown or none is
  available, else True ``ResourcesAvailable``.
* One condition per type that condition rules set on manifests (``Complete``,
  ``Degraded``, ``Progressing``, or any other), reason ``ConditionRulesAggregated``:
  False wins, then Unknown (also when no manifest has it True), then True — except
  ``Progressing``, True when any manifest is progressing. The message is the one
  manifest's when a single manifest has the condition, else ``Aggregated from <n>
  manifest conditions``. Rule conditions of an older generation are pruned.
* ``Applied``: True ``AppliedManifestWorkComplete`` when every manifest applied, False
  ``AppliedManifestWorkFailed`` when any failed, absent while no manifest says.

A work whose ``Complete`` is True is finished: upstream's agent stops applying it, and the
hub deletes it ``ttlSecondsAfterFinished`` after that condition's transition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pyocm.api.models.common import Condition
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifest as ManifestCondition,
)
from pyocm.work.agent.status.merge import (
    NewCondition,
    NewManifestCondition,
    is_true,
    set_conditions,
)
from pyocm.work.agent.status.rules import is_rule_condition

AVAILABLE = "Available"
APPLIED = "Applied"
COMPLETE = "Complete"
PROGRESSING = "Progressing"


@dataclass
class _Counts:
    true: int = 0
    false: int = 0
    unknown: int = 0
    message: str = ""

    @property
    def total(self) -> int:
        return self.true + self.false + self.unknown


def aggregate_manifest_conditions(
    manifests: Sequence[ManifestCondition], *, generation: int
) -> list[NewCondition]:
    """The work-level ``Available`` and rule conditions, sorted by type."""
    counts: dict[str, _Counts] = {AVAILABLE: _Counts()}
    for manifest in manifests:
        for condition in manifest.get("conditions") or []:
            if condition.get("type") != AVAILABLE and not is_rule_condition(condition):
                continue
            count = counts.setdefault(condition["type"], _Counts())
            status = condition.get("status")
            if status == "True":
                count.true += 1
            elif status == "False":
                count.false += 1
            elif status == "Unknown":
                count.unknown += 1
            if condition.get("message"):
                count.message = condition["message"]
    aggregated = [
        _available(count, generation, len(manifests))
        if type == AVAILABLE
        else _from_rules(type, count, generation)
        for type, count in counts.items()
    ]
    return sorted(aggregated, key=lambda c: c["type"])


def work_conditions(
    manifests: Sequence[ManifestCondition],
    *,
    generation: int,
    existing: Sequence[Condition],
    now: datetime,
) -> list[Condition]:
    """The work's conditions once the status sync has aggregated ``manifests``:
    ``existing`` with the aggregates set (transition times kept where the status did not
    change) and rule-made conditions of other generations pruned."""
    conditions = set_conditions(
        existing, aggregate_manifest_conditions(manifests, generation=generation), now=now
    )
    return prune_rule_conditions(conditions, generation=generation)


def prune_rule_conditions(conditions: Sequence[Condition], *, generation: int) -> list[Condition]:
    """``PruneConditionsGeneratedByConditionRules``: drop conditions a rule set at another
    generation (a rule removed from the spec changed the generation)."""
    return [
        c
        for c in conditions
        if not (is_rule_condition(c) and c.get("observedGeneration", 0) != generation)
    ]


def applied_work_condition(
    manifests: Sequence[ManifestCondition] | Sequence[NewManifestCondition], *, generation: int
) -> NewCondition | None:
    """The work's ``Applied`` condition from this apply pass's ``manifests`` (set it with
    :func:`~.merge.set_condition`); None when no manifest has an ``Applied`` condition
    (upstream then leaves the work's as it is)."""
    statuses = [
        c.get("status")
        for m in manifests
        for c in m.get("conditions") or []
        if c.get("type") == APPLIED
    ]
    if not statuses:
        return None
    if "False" in statuses:
        return {
            "type": APPLIED,
            "status": "False",
            "reason": "AppliedManifestWorkFailed",
            "message": "Failed to apply manifest work",
            "observedGeneration": generation,
        }
    return {
        "type": APPLIED,
        "status": "True",
        "reason": "AppliedManifestWorkComplete",
        "message": "Apply manifest work complete",
        "observedGeneration": generation,
    }


def applied_manifest_condition(
    error: BaseException | str | None, *, generation: int, ignore_fields_error: bool = False
) -> NewCondition:
    """A manifest's ``Applied`` condition after applying it: True
    ``AppliedManifestComplete``, or False ``AppliedManifestFailed`` with the error (or
    ``AppliedManifestSSAIgnoreFieldError`` when server-side apply's ignoreFields failed)."""
    if error is None:
        return {
            "type": APPLIED,
            "status": "True",
            "reason": "AppliedManifestComplete",
            "message": "Apply manifest complete",
            "observedGeneration": generation,
        }
    if ignore_fields_error:
        reason, message = (
            "AppliedManifestSSAIgnoreFieldError",
            f"Failed to process ignoreFields: {error}",
        )
    else:
        reason, message = "AppliedManifestFailed", f"Failed to apply manifest: {error}"
    return {
        "type": APPLIED,
        "status": "False",
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def work_complete(conditions: Sequence[Condition] | None) -> bool:
    """Whether the work is finished (``Complete`` True): the agent applies it no more."""
    return is_true(conditions, COMPLETE)


def manifest_complete(manifest: ManifestCondition | None) -> bool:
    """Whether a manifest is finished (its ``Complete`` True): it is not applied again."""
    return manifest is not None and is_true(manifest.get("conditions"), COMPLETE)


def _available(count: _Counts, generation: int, total: int) -> NewCondition:
    if count.false:
        status, reason = "False", "ResourcesNotAvailable"
        message = f"{count.false} of {total} resources are not available"
    elif count.unknown:
        status, reason = "Unknown", "ResourcesStatusUnknown"
        message = f"{count.unknown} of {total} resources have unknown status"
    elif not count.true:
        # the trailing space is upstream's
        status, reason, message = (
            "Unknown",
            "ResourcesStatusUnknown",
            "cannot get any available resource ",
        )
    else:
        status, reason, message = "True", "ResourcesAvailable", "All resources are available"
    return {
        "type": AVAILABLE,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def _from_rules(type: str, count: _Counts, generation: int) -> NewCondition:
    if type == PROGRESSING:  # progressing while any manifest is
        status = "True" if count.true else "Unknown" if count.unknown else "False"
    else:
        status = (
            "False" if count.false else "Unknown" if count.unknown or not count.true else "True"
        )
    if count.total == 1 and count.message:
        message = count.message
    else:
        message = f"Aggregated from {count.total} manifest conditions"
    return {
        "type": type,
        "status": status,
        "reason": "ConditionRulesAggregated",
        "message": message,
        "observedGeneration": generation,
    }
