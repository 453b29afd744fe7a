"""Condition rules, with upstream's cases (pkg/work/spoke/conditions/reader_test.go, budget
1000 as there) and the CEL environment around them."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.work.agent.status.rules import condition_by_rule, evaluate_condition_rules

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "test"},
    "status": {
        "readyReplicas": 1,
        "replicas": 2,
        "conditions": [{"type": "Available", "status": "True"}],
    },
}


def job(*conditions: tuple[str, str], succeeded: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "test"},
        "status": {
            "conditions": [{"status": s, "type": t} for t, s in conditions],
            "succeeded": succeeded,
        },
    }


def pod(phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "test"},
        "status": {"conditions": [{"status": "False", "type": "Ready"}], "phase": phase},
    }


def cel(condition: str, *expressions: str, **rest: str) -> Any:
    return {"type": "CEL", "condition": condition, "celExpressions": list(expressions), **rest}


COMPLETE = {"type": "WellKnownConditions", "condition": "Complete"}


def evaluated(obj: Any, rule: Any, budget: int = 1000) -> tuple[dict[str, Any] | None, str | None]:
    outcome = condition_by_rule(obj, rule, budget=budget)
    if outcome.error is None:
        assert outcome.budget <= budget
    return outcome.condition, outcome.error  # type: ignore[return-value]


def condition(type: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": type, "status": status, "reason": reason, "message": message}


# -- upstream's TestConditionReader ----------------------------------------------------


def test_deployment_available_with_message_expression() -> None:
    rule = cel(
        "Available",
        'object.status.conditions.exists(c, c.type == "Available" && c.status == "True")',
        messageExpression='result ? "Deployment available" : "Deployment unavailable"',
    )
    assert evaluated(DEPLOYMENT, rule) == (
        condition("Available", "True", "ConditionRuleEvaluated", "Deployment available"),
        None,
    )


def test_wrong_return_type() -> None:
    rule = cel("Available", 'object.status.conditions.filter(c, c.type == "Available")[0].status')
    found, error = evaluated(DEPLOYMENT, rule)
    assert found == condition(
        "Available", "False", "ConditionRuleExpressionError", "expected bool result, got string"
    )
    assert error == "expected bool result, got string"


def test_missing_key() -> None:
    found, error = evaluated(DEPLOYMENT, cel("Available", "object.missing"))
    assert found == condition(
        "Available", "False", "ConditionRuleExpressionError", "no such key: missing"
    )
    assert error is not None


def test_message_expression_that_does_not_compile_keeps_the_status() -> None:
    found, error = evaluated(DEPLOYMENT, cel("Available", "true", messageExpression="badcel"))
    assert found == condition(
        "Available",
        "True",
        "ConditionRuleEvaluated",
        "ERROR: <input>:1:1: undeclared reference to 'badcel' (in container '')",
    )
    assert error is not None


def test_has_conditions_library_function() -> None:
    rule = cel(
        "HasConditions",
        """hasConditions(object.status)
						&& !hasConditions({})
						&& !hasConditions("badtype")
						&& !hasConditions({"conditions": []})
						&& !hasConditions({"conditions": null})""",
        message="should work",
    )
    assert evaluated(DEPLOYMENT, rule) == (
        condition("HasConditions", "True", "ConditionRuleEvaluated", "should work"),
        None,
    )


@pytest.mark.parametrize(
    ("obj", "status", "message"),
    [
        (job(("Complete", "True"), ("Another", "True"), succeeded=1), "True", "Job is finished"),
        (job(("Failed", "True")), "True", "Job is finished"),
        (job(("Complete", "False"), ("Another", "True")), "False", "Job is not finished"),
        (pod("Succeeded"), "True", "Pod is in phase Succeeded"),
        (pod("Failed"), "True", "Pod is in phase Failed"),
        (pod("Running"), "False", "Pod is in phase Running"),
    ],
)
def test_well_known_complete(obj: Any, status: str, message: str) -> None:
    assert evaluated(obj, COMPLETE) == (
        condition("Complete", status, "ConditionRuleEvaluated", message),
        None,
    )


def test_budget_exceeded() -> None:
    found, error = evaluated(pod("Running"), COMPLETE, budget=1)
    assert found == condition(
        "Complete", "False", "ConditionRuleExpressionError", "CEL evaluation budget exceeded"
    )
    assert error == "CEL evaluation budget exceeded"


# -- more of upstream's rules ----------------------------------------------------------


def test_the_documented_replicas_example() -> None:
    rule = cel("Ready", "object.status.readyReplicas == object.status.replicas")
    assert evaluated(DEPLOYMENT, rule)[0] == condition(
        "Ready", "False", "ConditionRuleEvaluated", "Manifest is not Ready"
    )
    ready = {**DEPLOYMENT, "status": {"readyReplicas": 2, "replicas": 2}}
    assert evaluated(ready, rule)[0] == condition(
        "Ready", "True", "ConditionRuleEvaluated", "Manifest is Ready"
    )


def test_expressions_are_anded_and_the_first_false_decides() -> None:
    rule = cel("Ready", "true", "object.status.replicas == 3", "object.missing")
    assert evaluated(DEPLOYMENT, rule)[0] == condition(
        "Ready", "False", "ConditionRuleEvaluated", "Manifest is not Ready"
    )


def test_no_expressions_is_true() -> None:
    assert evaluated(DEPLOYMENT, cel("Ready"))[0] == condition(
        "Ready", "True", "ConditionRuleEvaluated", "Manifest is Ready"
    )


def test_message_is_used_when_the_message_expression_is_empty() -> None:
    rule = cel("Ready", "true", message="fixed", messageExpression='""')
    assert evaluated(DEPLOYMENT, rule)[0] == condition(
        "Ready", "True", "ConditionRuleEvaluated", "fixed"
    )


def test_message_expression_sees_the_object_and_result() -> None:
    rule = cel(
        "Ready", "false", messageExpression='object.metadata.name + (result ? " ok" : " not ok")'
    )
    assert evaluated(DEPLOYMENT, rule)[0] == condition(
        "Ready", "False", "ConditionRuleEvaluated", "test not ok"
    )


def test_message_expression_not_a_string() -> None:
    found, error = evaluated(DEPLOYMENT, cel("Ready", "true", messageExpression="1"))
    expected = "expected message expression to have a string result, got int64"
    assert found == condition("Ready", "True", "ConditionRuleEvaluated", expected)
    assert error == expected


def test_message_expression_failing_at_run_time() -> None:
    found, _ = evaluated(DEPLOYMENT, cel("Ready", "true", messageExpression="object.nope"))
    assert found == condition("Ready", "True", "ConditionRuleEvaluated", "no such key: nope")


def test_a_rule_expression_that_does_not_compile_shows_the_snippet() -> None:
    found, _ = evaluated(DEPLOYMENT, cel("Ready", "object.status.replicas == nope"))
    assert found == condition(
        "Ready",
        "False",
        "ConditionRuleExpressionError",
        "ERROR: <input>:1:27: undeclared reference to 'nope' (in container '')\n"
        " | object.status.replicas == nope\n"
        " | ..........................^",
    )


def test_well_known_rule_takes_the_rules_message_expression_over_its_own() -> None:
    rule = {**COMPLETE, "messageExpression": '"phase " + object.status.phase'}
    assert evaluated(pod("Running"), rule)[0] == condition(
        "Complete", "False", "ConditionRuleEvaluated", "phase Running"
    )


def test_well_known_rule_keeps_its_message_expression_over_a_plain_message() -> None:
    rule = {**COMPLETE, "message": "ignored while the expression says something"}
    assert evaluated(pod("Running"), rule)[0]["message"] == "Pod is in phase Running"  # type: ignore[index]


@pytest.mark.parametrize(
    "rule", [COMPLETE, {"type": "WellKnownConditions", "condition": "Degraded"}]
)
def test_well_known_rule_for_a_kind_without_one_gives_no_condition(rule: Any) -> None:
    outcome = condition_by_rule(DEPLOYMENT, rule, budget=1000)
    assert outcome.condition is None and outcome.budget == 1000


def test_unknown_rule_type_is_invalid() -> None:
    found, error = evaluated(DEPLOYMENT, {"type": "Magic", "condition": "Ready"})
    assert found == condition(
        "Ready", "Unknown", "ConditionRuleInvalid", "unrecognized condition rule type Magic"
    )
    assert error == "unrecognized condition rule type Magic"


def test_evaluate_condition_rules_keeps_order_and_skips_rules_that_do_not_apply() -> None:
    rules: Any = [cel("Ready", "false"), COMPLETE, cel("Degraded", "object.status.replicas > 1")]
    assert evaluate_condition_rules(DEPLOYMENT, rules) == [
        condition("Ready", "False", "ConditionRuleEvaluated", "Manifest is not Ready"),
        condition("Degraded", "True", "ConditionRuleEvaluated", "Manifest is Degraded"),
    ]


def test_rules_share_one_budget() -> None:
    rules: Any = [cel("A", "object.status.replicas == 2"), cel("B", "object.status.replicas == 2")]
    both = evaluate_condition_rules(DEPLOYMENT, rules, budget=10)
    assert [c["status"] for c in both] == ["True", "True"]
    second_starved = evaluate_condition_rules(DEPLOYMENT, rules, budget=7)
    assert [c["message"] for c in second_starved] == [
        "Manifest is A",
        "CEL evaluation budget exceeded",
    ]


def test_a_too_deeply_nested_expression_is_an_expression_error() -> None:
    found, _ = evaluated(DEPLOYMENT, cel("Ready", "[" * 2000 + "]" * 2000 + " == []"))
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "ConditionRuleExpressionError")
