"""Label selector validation shared by ClusterRole aggregation and access reviews."""

from __future__ import annotations

from pyocm.apiserver.registry.builtin import labelselector
from pyocm.kube.status import ErrorType


def test_valid_selector() -> None:
    selector = {
        "matchLabels": {"a.io/b": "c"},
        "matchExpressions": [
            {"key": "x", "operator": "Exists"},
            {"key": "y", "operator": "NotIn", "values": ["1"]},
        ],
    }
    assert labelselector.validate_selector(selector, "s") == []


def test_operator_rules() -> None:
    errs = labelselector.validate_selector(
        {
            "matchExpressions": [
                {"key": "x", "operator": "Exists", "values": ["1"]},
                {"key": "y", "operator": "Near"},
            ]
        },
        "s",
    )
    assert [e.message() for e in errs] == [
        "s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        's.matchExpressions[1].operator: Invalid value: "Near": not a valid selector operator',
    ]
    assert (
        labelselector.validate_requirement(
            {"key": "y", "operator": "Near"}, "r", allow_unknown_operator=True
        )
        == []
    )


def test_keys_and_values_are_checked_at_their_paths() -> None:
    errs = labelselector.validate_selector(
        {
            "matchLabels": {"bad key": "ok"},
            "matchExpressions": [{"key": "k", "operator": "In", "values": ["bad value"]}],
        },
        "s",
    )
    assert [(e.type, e.field) for e in errs] == [
        (ErrorType.INVALID, "s.matchLabels"),
        (ErrorType.INVALID, "s.matchExpressions[0].values[0]"),
    ]
