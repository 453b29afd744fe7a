"""The work's own conditions: Available and rule conditions aggregated from its manifests
(conditions/helpers.go, cases from availablestatus_controller_test.go) and Applied
(manifestwork_reconciler.go)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pyocm.work.agent.status import (
    aggregate_manifest_conditions,
    applied_manifest_condition,
    applied_work_condition,
    manifest_complete,
    manifest_status,
    set_condition,
    work_complete,
    work_conditions,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def manifest(
    *conditions: tuple[str, str], reason: str = "ConditionRuleEvaluated", message: str = ""
) -> Any:
    return {
        "resourceMeta": {"ordinal": 0},
        "conditions": [
            {"type": t, "status": s, "reason": "ResourceAvailable" if t == "Available" else reason,
             "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 2}
            for t, s in conditions
        ],
    }  # fmt: skip


def available(*statuses: str) -> Any:
    return [manifest(("Available", s)) for s in statuses]


def aggregated(manifests: Any, generation: int = 2) -> dict[str, tuple[str, str, str]]:
    found = aggregate_manifest_conditions(manifests, generation=generation)
    assert all(c["observedGeneration"] == generation for c in found)
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in found}


# -- Available -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["True", "True"], ("True", "ResourcesAvailable", "All resources are available")),
        (
            ["True", "False", "False"],
            ("False", "ResourcesNotAvailable", "2 of 3 resources are not available"),
        ),
        (
            ["False", "Unknown"],
            ("False", "ResourcesNotAvailable", "1 of 2 resources are not available"),
        ),
        (
            ["True", "Unknown"],
            ("Unknown", "ResourcesStatusUnknown", "1 of 2 resources have unknown status"),
        ),
        ([], ("Unknown", "ResourcesStatusUnknown", "cannot get any available resource ")),
    ],
)
def test_available_aggregation(statuses: list[str], expected: tuple[str, str, str]) -> None:
    assert aggregated(available(*statuses)) == {"Available": expected}


def test_manifests_without_available_count_in_the_total_only() -> None:
    manifests = [manifest(("Available", "True")), manifest(("Applied", "True"))]
    assert aggregated(manifests)["Available"] == (
        "True",
        "ResourcesAvailable",
        "All resources are available",
    )
    manifests = [manifest(("Applied", "True"))]
    assert aggregated(manifests)["Available"] == (
        "Unknown",
        "ResourcesStatusUnknown",
        "cannot get any available resource ",
    )


# -- rule conditions -----------------------------------------------------------------------


def test_complete_true_from_one_manifest_keeps_its_message() -> None:
    manifests = [manifest(("Available", "True"), ("Complete", "True"), message="Job is finished")]
    assert aggregated(manifests)["Complete"] == (
        "True",
        "ConditionRulesAggregated",
        "Job is finished",
    )


def test_work_complete_requires_every_completable_manifest_complete() -> None:
    manifests = [
        manifest(("Complete", "True")),
        manifest(("Complete", "False")),
        manifest(("Available", "True")),
    ]
    assert aggregated(manifests)["Complete"] == (
        "False",
        "ConditionRulesAggregated",
        "Aggregated from 2 manifest conditions",
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["True", "True"], "True"),
        (["True", "Unknown"], "Unknown"),
        (["Unknown", "False"], "False"),
        (["Bogus"], "Unknown"),  # counted nowhere: no True, so Unknown
    ],
)
def test_other_rule_conditions_false_wins_then_unknown(statuses: list[str], expected: str) -> None:
    manifests = [manifest(("Degraded", s)) for s in statuses]
    assert aggregated(manifests)["Degraded"][0] == expected


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [(["True", "False"], "True"), (["False", "False"], "False"), (["False", "Unknown"], "Unknown")],
)
def test_progressing_is_true_when_any_manifest_is(statuses: list[str], expected: str) -> None:
    manifests = [manifest(("Progressing", s)) for s in statuses]
    assert aggregated(manifests)["Progressing"] == (
        expected,
        "ConditionRulesAggregated",
        "Aggregated from 2 manifest conditions",
    )


def test_only_rule_made_conditions_are_aggregated_and_sorted_by_type() -> None:
    manifests = [
        manifest(("Ready", "True"), ("Complete", "True")),
        manifest(("Applied", "True"), reason="AppliedManifestComplete"),
        manifest(("Custom", "True"), reason="SomethingElse"),
    ]
    assert list(aggregated(manifests)) == ["Available", "Complete", "Ready"]


def test_work_conditions_keep_transition_times_and_prune_stale_rule_conditions() -> None:
    existing: Any = [
        {"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete", "message": "Apply manifest work complete",
         "lastTransitionTime": "2025-12-31T00:00:00Z", "observedGeneration": 1},
        {"type": "Available", "status": "True", "reason": "ResourcesAvailable", "message": "All resources are available",
         "lastTransitionTime": "2025-12-31T00:00:00Z", "observedGeneration": 1},
        {"type": "Complete", "status": "True", "reason": "ConditionRulesAggregated", "message": "",
         "lastTransitionTime": "2025-12-31T00:00:00Z", "observedGeneration": 1},
    ]  # fmt: skip
    conditions = work_conditions(
        [manifest(("Available", "True"))], generation=2, existing=existing, now=T1
    )
    by_type = {c["type"]: c for c in conditions}
    assert set(by_type) == {"Applied", "Available"}  # Complete came from a rule since removed
    assert by_type["Available"]["lastTransitionTime"] == "2025-12-31T00:00:00Z"
    assert by_type["Available"]["observedGeneration"] == 2
    assert by_type["Applied"] == existing[0]
    flipped = work_conditions(available("False"), generation=2, existing=conditions, now=T1)
    assert {c["type"]: c for c in flipped}["Available"][
        "lastTransitionTime"
    ] == "2026-01-01T00:01:00Z"


def test_removed_rule_end_to_end_as_upstream_tests_it() -> None:
    """availablestatus_controller_test 'remove conditions set by deleted rules': work at
    generation 2, a manifest with a Complete from an old rule and a new rule SomeOtherRule."""
    obj = {
        "apiVersion": "v1",
        "kind": "NewObject",
        "metadata": {"name": "n1", "namespace": "ns1"},
        "spec": {"key1": "val1"},
    }
    entry: Any = {
        "resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "NewObject", "resource": "newobjects", "name": "n1", "namespace": "ns1"},
        "conditions": [{"type": "Complete", "status": "True", "reason": "ConditionRuleEvaluated", "message": "", "lastTransitionTime": "2025-12-31T00:00:00Z"}],
    }  # fmt: skip
    config: Any = {
        "resourceIdentifier": {"resource": "newobjects", "namespace": "ns1", "name": "n1"},
        "conditionRules": [
            {"type": "CEL", "condition": "SomeOtherRule", "celExpressions": ["true"]}
        ],
    }
    refreshed = manifest_status(
        obj, error=None, config=config, existing=entry, generation=2, now=T0
    )
    types = {c["type"]: c for c in refreshed["conditions"]}
    assert "Complete" not in types
    assert (types["SomeOtherRule"]["status"], types["SomeOtherRule"]["reason"]) == (
        "True",
        "ConditionRuleEvaluated",
    )
    existing: Any = [
        {
            "type": "Complete",
            "status": "True",
            "reason": "ConditionRulesAggregated",
            "message": "",
            "lastTransitionTime": "2025-12-31T00:00:00Z",
        }
    ]
    work = {
        c["type"] for c in work_conditions([refreshed], generation=2, existing=existing, now=T0)
    }
    assert "Complete" not in work and "SomeOtherRule" in work


def test_a_rule_failing_on_a_missing_key_as_upstream_tests_it() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "NewObject",
        "metadata": {"name": "n1"},
        "spec": {"key1": "val1"},
    }
    entry: Any = {
        "resourceMeta": {"ordinal": 0, "version": "v1", "resource": "newobjects", "name": "n1"},
        "conditions": [],
    }
    config: Any = {
        "conditionRules": [
            {
                "type": "CEL",
                "condition": "Active",
                "celExpressions": ["object.invalid.key == 'Active'"],
            }
        ]
    }
    refreshed = manifest_status(
        obj, error=None, config=config, existing=entry, generation=2, now=T0
    )
    active = next(c for c in refreshed["conditions"] if c["type"] == "Active")
    assert (active["status"], active["reason"], active["message"]) == (
        "False",
        "ConditionRuleExpressionError",
        "no such key: invalid",
    )


# -- Applied -----------------------------------------------------------------------------


def test_applied_work_condition() -> None:
    ok = applied_manifest_condition(None, generation=3)
    failed = applied_manifest_condition(ValueError("boom"), generation=3)
    assert ok == {"type": "Applied", "status": "True", "reason": "AppliedManifestComplete",
                  "message": "Apply manifest complete", "observedGeneration": 3}  # fmt: skip
    assert failed == {"type": "Applied", "status": "False", "reason": "AppliedManifestFailed",
                      "message": "Failed to apply manifest: boom", "observedGeneration": 3}  # fmt: skip
    ignored = applied_manifest_condition("bad pointer", generation=3, ignore_fields_error=True)
    assert (ignored["reason"], ignored["message"]) == (
        "AppliedManifestSSAIgnoreFieldError",
        "Failed to process ignoreFields: bad pointer",
    )

    def entries(*conditions: Any) -> Any:
        return [
            {"resourceMeta": {"ordinal": i}, "conditions": [c]} for i, c in enumerate(conditions)
        ]

    assert applied_work_condition(entries(ok, ok), generation=3) == {
        "type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
        "message": "Apply manifest work complete", "observedGeneration": 3,
    }  # fmt: skip
    assert applied_work_condition(entries(ok, failed), generation=3) == {
        "type": "Applied", "status": "False", "reason": "AppliedManifestWorkFailed",
        "message": "Failed to apply manifest work", "observedGeneration": 3,
    }  # fmt: skip
    assert applied_work_condition([], generation=3) is None


def test_applied_keeps_its_transition_time_while_it_stays_true() -> None:
    ok: Any = [
        {
            "resourceMeta": {"ordinal": 0},
            "conditions": [applied_manifest_condition(None, generation=1)],
        }
    ]
    first = set_condition([], applied_work_condition(ok, generation=1), now=T0)  # type: ignore[arg-type]
    again = set_condition(first, applied_work_condition(ok, generation=2), now=T1)  # type: ignore[arg-type]
    assert again[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert again[0]["observedGeneration"] == 2


# -- completion ------------------------------------------------------------------------


def test_completion_helpers() -> None:
    assert work_complete([{"type": "Complete", "status": "True"}])  # type: ignore[typeddict-item]
    assert not work_complete([{"type": "Complete", "status": "False"}])  # type: ignore[typeddict-item]
    assert not work_complete(None)
    assert manifest_complete(manifest(("Complete", "True")))
    assert not manifest_complete(manifest(("Available", "True")))
    assert not manifest_complete(None)
