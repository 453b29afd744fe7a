from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyocm.api import conditions

T0 = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


def test_set_new_condition_appends_with_transition_time() -> None:
    items: list[dict[str, object]] = []
    changed = conditions.set_condition(
        items, type="Ready", status="True", reason="Up", message="all good", now=T0,
        observed_generation=3,
    )
    assert changed is True
    assert items == [{
        "type": "Ready", "status": "True", "lastTransitionTime": "2026-05-01T12:00:00Z",
        "reason": "Up", "message": "all good", "observedGeneration": 3,
    }]


def test_same_condition_again_changes_nothing() -> None:
    items: list[dict[str, object]] = []
    conditions.set_condition(items, type="Ready", status="True", reason="Up", message="m", now=T0)
    assert conditions.set_condition(items, type="Ready", status="True", reason="Up", message="m", now=T1) is False
    assert items[0]["lastTransitionTime"] == "2026-05-01T12:00:00Z"


def test_reason_change_keeps_transition_time() -> None:
    items: list[dict[str, object]] = []
    conditions.set_condition(items, type="Ready", status="True", reason="Up", message="m", now=T0)
    assert conditions.set_condition(items, type="Ready", status="True", reason="Other", message="n", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-05-01T12:00:00Z"
    assert (items[0]["reason"], items[0]["message"]) == ("Other", "n")


def test_status_change_moves_transition_time() -> None:
    items: list[dict[str, object]] = []
    conditions.set_condition(items, type="Ready", status="True", reason="Up", message="m", now=T0)
    conditions.set_condition(items, type="Ready", status="False", reason="Down", message="m", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-05-01T12:05:00Z"
    assert len(items) == 1


def test_find_is_true_and_remove() -> None:
    items: list[dict[str, object]] = []
    conditions.set_condition(items, type="A", status="True", reason="R", message="", now=T0)
    conditions.set_condition(items, type="B", status="Unknown", reason="R", message="", now=T0)
    assert conditions.is_true(items, "A") is True
    assert conditions.is_true(items, "B") is False
    assert conditions.is_true(None, "A") is False
    assert conditions.find(items, "C") is None
    assert conditions.remove_condition(items, "A") is True
    assert conditions.remove_condition(items, "A") is False
    assert [c["type"] for c in items] == ["B"]
