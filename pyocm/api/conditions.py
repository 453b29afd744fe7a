"""``metav1.Condition`` lists as plain dicts, with apimachinery's ``meta.SetStatusCondition``
semantics.

Controllers keep a status condition list in the object dict they got from the API; these
helpers change it in place and say whether anything changed, so a controller patches
status only when it must.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

from pyocm.kube import timefmt

Obj = dict[str, Any]
#: A condition as a plain dict or as a typed model (``pyocm.api.models.common.Condition``).
C = TypeVar("C", bound=Mapping[str, Any])


def of(obj: Mapping[str, Any]) -> list[Obj]:
    """``obj``'s ``status.conditions``; a status or list of the wrong type (another writer
    may have stored anything) reads as no conditions, an item that is no object as absent."""
    status = obj.get("status")
    found = status.get("conditions") if isinstance(status, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def find(conditions: Sequence[C] | None, type: str) -> C | None:
    """The condition of ``type``, or None (items that are not objects are skipped)."""
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == type:
            return cast(C, condition)  # isinstance narrowed it to a plain dict; it is a C
    return None


def is_true(conditions: Sequence[Mapping[str, Any]] | None, type: str) -> bool:
    """Whether the condition of ``type`` exists with status ``"True"``."""
    condition = find(conditions, type)
    return condition is not None and condition.get("status") == "True"


def set_condition(
    conditions: list[Obj],
    *,
    type: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    observed_generation: int | None = None,
) -> bool:
    """Add or update the condition of ``type``; return whether the list changed.

    As in ``meta.SetStatusCondition``, ``lastTransitionTime`` moves to ``now`` only when
    the status changes (or the condition is new), so it records when the state last
    flipped rather than when it was last written.
    """
    existing = find(conditions, type)
    if existing is None:
        condition: Obj = {
            "type": type,
            "status": status,
            "lastTransitionTime": timefmt.format_time(now),
            "reason": reason,
            "message": message,
        }
        if observed_generation is not None:
            condition["observedGeneration"] = observed_generation
        conditions.append(condition)
        return True
    changed = False
    if existing.get("status") != status:
        existing["status"] = status
        existing["lastTransitionTime"] = timefmt.format_time(now)
        changed = True
    for key, value in (("reason", reason), ("message", message)):
        if existing.get(key) != value:
            existing[key] = value
            changed = True
    if (
        observed_generation is not None
        and existing.get("observedGeneration") != observed_generation
    ):
        existing["observedGeneration"] = observed_generation
        changed = True
    return changed


def remove_condition(conditions: list[Obj], type: str) -> bool:
    """Remove the condition of ``type``; return whether it was there."""
    kept = [c for c in conditions if c.get("type") != type]
    if len(kept) == len(conditions):
        return False
    conditions[:] = kept
    return True
