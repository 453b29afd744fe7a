"""Condition lists merged as upstream's helpers merge them (helper_test.go's
TestMergeManifestConditions and TestMergeStatusConditions) and set as
meta.SetStatusCondition sets them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pyocm.work.agent.status import (
    merge_manifest_conditions,
    merge_status_conditions,
    set_condition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
OLD = "2026-01-01T00:00:00Z"
NEW = "2026-01-01T01:00:00Z"


def cond(type: str, status: str, *, at: str | None = None, generation: int = 0) -> Any:
    c: dict[str, Any] = {
        "type": type,
        "status": status,
        "reason": "my-reason",
        "message": "my-message",
    }
    if at is not None:
        c["lastTransitionTime"] = at
    if generation:
        c["observedGeneration"] = generation
    return c


def entry(ordinal: int, resource: str, *conditions: Any, **rest: Any) -> Any:
    return {
        "resourceMeta": {"ordinal": ordinal, "resource": resource},
        "conditions": list(conditions),
        **rest,
    }


def test_add_to_empty_stamps_now() -> None:
    merged = merge_manifest_conditions([], [entry(0, "resource1", cond("one", "True"))], now=NOW)
    assert merged == [entry(0, "resource1", cond("one", "True", at=NEW))]


def test_add_new_condition() -> None:
    existing = [entry(0, "resource1", cond("one", "True", at=OLD))]
    new = [entry(0, "resource1", cond("one", "True")), entry(0, "resource2", cond("two", "True"))]
    assert merge_manifest_conditions(existing, new, now=NOW) == [
        entry(0, "resource1", cond("one", "True", at=OLD)),
        entry(0, "resource2", cond("two", "True", at=NEW)),
    ]


def test_update_existing() -> None:
    existing = [entry(0, "resource1", cond("one", "True", at=OLD))]
    merged = merge_manifest_conditions(
        existing, [entry(0, "resource1", cond("one", "False"))], now=NOW
    )
    assert merged == [entry(0, "resource1", cond("one", "False", at=NEW))]


def test_merge_new() -> None:
    existing = [entry(0, "resource1", cond("one", "True", at=OLD))]
    merged = merge_manifest_conditions(
        existing, [entry(0, "resource1", cond("two", "False"))], now=NOW
    )
    assert merged == [
        entry(0, "resource1", cond("one", "True", at=OLD), cond("two", "False", at=NEW))
    ]


def test_remove_useless_and_match_without_ordinal() -> None:
    existing = [
        entry(0, "resource1", cond("one", "True", at=OLD)),
        entry(1, "resource2", cond("two", "True", at=OLD)),
    ]
    merged = merge_manifest_conditions(
        existing, [entry(0, "resource2", cond("two", "True"))], now=NOW
    )
    assert merged == [entry(0, "resource2", cond("two", "True", at=OLD))]


def test_ambiguous_matches_without_ordinal_are_not_matched() -> None:
    existing = [
        entry(0, "resource1", cond("one", "True", at=OLD)),
        entry(1, "resource1", cond("one", "True", at=OLD)),
    ]
    merged = merge_manifest_conditions(
        existing, [entry(2, "resource1", cond("one", "True"))], now=NOW
    )
    assert merged == [entry(2, "resource1", cond("one", "True", at=NEW))]


def test_a_match_keeps_its_status_feedback() -> None:
    feedback = {"values": [{"name": "x", "fieldValue": {"type": "Integer", "integer": 1}}]}
    existing = [entry(0, "resource1", cond("one", "True", at=OLD), statusFeedback=feedback)]
    merged = merge_manifest_conditions(
        existing, [entry(0, "resource1", cond("one", "True"))], now=NOW
    )
    assert merged[0]["statusFeedback"] == feedback


def test_merge_status_conditions_as_upstream() -> None:
    assert merge_status_conditions([], [cond("one", "True")], now=NOW) == [
        cond("one", "True", at=NEW)
    ]
    merged = merge_status_conditions(
        [cond("one", "True", at=OLD)], [cond("one", "False"), cond("two", "True")], now=NOW
    )
    assert merged == [cond("one", "False", at=NEW), cond("two", "True", at=NEW)]
    merged = merge_status_conditions(
        [cond("one", "False", at=OLD), cond("two", "True", at=OLD)], [cond("one", "False")], now=NOW
    )
    assert merged == [cond("one", "False", at=OLD), cond("two", "True", at=OLD)]


def test_a_new_generation_restarts_the_transition_time() -> None:
    merged = merge_status_conditions(
        [cond("one", "True", at=OLD, generation=1), cond("two", "True", at=OLD)],
        [cond("one", "True", generation=2)],
        now=NOW,
    )
    # removed then added again: at the end, with a new transition time
    assert merged == [cond("two", "True", at=OLD), cond("one", "True", at=NEW, generation=2)]


def test_set_condition_as_meta_set_status_condition() -> None:
    existing = [cond("one", "True", at=OLD, generation=3)]
    same = set_condition(
        existing, {"type": "one", "status": "True", "reason": "r2", "message": "m2"}, now=NOW
    )
    assert same == [
        {
            "type": "one",
            "status": "True",
            "reason": "r2",
            "message": "m2",
            "lastTransitionTime": OLD,
        }
    ]
    assert existing == [cond("one", "True", at=OLD, generation=3)]  # not changed in place
