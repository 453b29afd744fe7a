"""Condition lists as upstream's work agent keeps them.

Conditions are computed bare (a :class:`NewCondition`: no ``lastTransitionTime``) and
then set into a list with apimachinery's ``meta.SetStatusCondition`` semantics: the
transition time moves only when the status changes, and ``observedGeneration`` takes the
new condition's value (absent means 0, which the wire omits). On top of that,
``helper.MergeStatusConditions`` and ``helper.MergeManifestConditions`` merge what one
apply pass computed into what the work's status already holds.

Nothing here changes its inputs: every function returns new lists.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Required, TypedDict, cast

from pyocm.api.models.common import Condition
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifest as ManifestCondition,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestResourceMeta as ManifestResourceMeta,
)
from pyocm.kube import timefmt


class NewCondition(TypedDict, total=False):
    """A condition as computed, before it is set into a list (no transition time)."""

    type: Required[str]
    status: Required[str]
    reason: Required[str]
    message: Required[str]
    observedGeneration: int


def set_condition(
    conditions: Sequence[Condition], new: NewCondition, *, now: datetime
) -> list[Condition]:
    """``conditions`` with ``new`` set as ``meta.SetStatusCondition`` sets it."""
    result = [cast(Condition, dict(c)) for c in conditions]
    generation = new.get("observedGeneration", 0)
    for existing in result:
        if existing.get("type") != new["type"]:
            continue
        if existing.get("status") != new["status"]:
            existing["status"] = new["status"]
            existing["lastTransitionTime"] = timefmt.format_time(now)
        existing["reason"] = new["reason"]
        existing["message"] = new["message"]
        _set_generation(existing, generation)
        return result
    added = cast(
        Condition,
        {
            "type": new["type"],
            "status": new["status"],
            "lastTransitionTime": timefmt.format_time(now),
            "reason": new["reason"],
            "message": new["message"],
        },
    )
    _set_generation(added, generation)
    result.append(added)
    return result


def set_conditions(
    conditions: Sequence[Condition], new: Iterable[NewCondition], *, now: datetime
) -> list[Condition]:
    """``conditions`` with each of ``new`` set in turn."""
    result = list(conditions)
    for condition in new:
        result = set_condition(result, condition, now=now)
    return result


def remove_condition(conditions: Sequence[Condition], type: str) -> list[Condition]:
    """``conditions`` without the one of ``type``."""
    return [c for c in conditions if c.get("type") != type]


def find(conditions: Sequence[Any] | None, type: str) -> Condition | None:
    """The condition of ``type``, or None."""
    for condition in conditions or []:
        if isinstance(condition, dict) and condition.get("type") == type:
            return cast(Condition, condition)
    return None


def is_true(conditions: Sequence[Any] | None, type: str) -> bool:
    """Whether the condition of ``type`` is there with status True."""
    condition = find(conditions, type)
    return condition is not None and condition.get("status") == "True"


def merge_status_conditions(
    conditions: Sequence[Condition], new: Sequence[NewCondition], *, now: datetime
) -> list[Condition]:
    """``helper.MergeStatusConditions``: ``conditions`` with each of ``new`` set; a
    condition observed at another generation is replaced, so its transition time restarts."""
    merged = list(conditions)
    for condition in new:
        existing = find(merged, condition["type"])
        if existing is not None and existing.get("observedGeneration", 0) != condition.get(
            "observedGeneration", 0
        ):
            merged = remove_condition(merged, condition["type"])
        merged = set_condition(merged, condition, now=now)
    return merged


def merge_manifest_conditions(
    existing: Sequence[ManifestCondition],
    new: Sequence[NewManifestCondition],
    *,
    now: datetime,
) -> list[ManifestCondition]:
    """``helper.MergeManifestConditions``: one entry per entry of ``new``, in its order.

    An entry of ``new`` matches an existing one with the same whole ``resourceMeta``, or
    failing that with the same meta but for ``ordinal`` when exactly one existing entry
    has it. A matched entry keeps the existing ``statusFeedback`` and merges conditions
    with :func:`merge_status_conditions`; an unmatched one is taken as new, every
    condition transitioning at ``now``. Existing entries that match nothing are dropped.
    """
    by_meta: dict[tuple[Any, ...], ManifestCondition] = {}
    by_meta_without_ordinal: dict[tuple[Any, ...], ManifestCondition] = {}
    duplicated: set[tuple[Any, ...]] = set()
    for entry in existing:
        meta = entry.get("resourceMeta") or cast(ManifestResourceMeta, {})
        by_meta[_meta_key(meta, ordinal=True)] = entry
        key = _meta_key(meta, ordinal=False)
        if key == _EMPTY_META:
            continue
        if key in by_meta_without_ordinal:
            duplicated.add(key)
        else:
            by_meta_without_ordinal[key] = entry
    for key in duplicated:
        by_meta_without_ordinal.pop(key, None)

    merged: list[ManifestCondition] = []
    for computed in new:
        meta = computed["resourceMeta"]
        match = by_meta.get(_meta_key(meta, ordinal=True))
        if match is None:
            match = by_meta_without_ordinal.get(_meta_key(meta, ordinal=False))
        merged.append(_merge_entry(match, computed, now=now))
    return merged


class NewManifestCondition(TypedDict):
    """A manifest's entry as one apply pass computed it."""

    resourceMeta: ManifestResourceMeta
    conditions: list[NewCondition]


def _merge_entry(
    match: ManifestCondition | None, entry: NewManifestCondition, *, now: datetime
) -> ManifestCondition:
    meta = copy.deepcopy(entry["resourceMeta"])
    if match is None:
        return {
            "resourceMeta": meta,
            "conditions": set_conditions([], entry["conditions"], now=now),
        }
    merged: ManifestCondition = {
        "resourceMeta": meta,
        "conditions": merge_status_conditions(
            match.get("conditions") or [], entry["conditions"], now=now
        ),
    }
    if "statusFeedback" in match:
        merged["statusFeedback"] = copy.deepcopy(match["statusFeedback"])
    return merged


_META_FIELDS = ("group", "version", "kind", "resource", "name", "namespace")
_EMPTY_META: tuple[Any, ...] = ("",) * len(_META_FIELDS)


def _meta_key(meta: ManifestResourceMeta, *, ordinal: bool) -> tuple[Any, ...]:
    fields = tuple(meta.get(name, "") for name in _META_FIELDS)  # type: ignore[misc]
    return (meta.get("ordinal", 0), *fields) if ordinal else fields


def _set_generation(condition: Condition, generation: int) -> None:
    if generation:
        condition["observedGeneration"] = generation
    else:
        condition.pop("observedGeneration", None)
