"""Condition rules, with upstream's cases (pkg/work/spoke/conditions/reader_test.go, budget
1000 as there) and the CEL environment around them."""

from __future__ import annotations

from typing import Any

import pytest
from celpy import celtypes

from pyocm.work.agent.status.cel import (
    PER_CALL_LIMIT,
    CelBudgetExceeded,
    CelCompileError,
    CelEnv,
    CelEvalError,
)
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


# -- the CEL environment ---------------------------------------------------------------

ENV = CelEnv("object")


def run(text: str, obj: Any = DEPLOYMENT, budget: int = 10_000) -> Any:
    return ENV.evaluate(ENV.compile(text), {"object": obj}, budget=budget).value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"Hello".lowerAscii() + "X".lowerAscii()', "hellox"),
        ('"a,b,c".split(",")', ["a", "b", "c"]),
        ('"a,b,c".split(",", 2)', ["a", "b,c"]),
        ('["a", "b"].join("-")', "a-b"),
        ('"  x ".trim()', "x"),
        ('"abcabc".indexOf("c")', 2),
        ('"abcabc".lastIndexOf("c")', 5),
        ('"abc".substring(1)', "bc"),
        ('"abc".charAt(1)', "b"),
        ('"aaa".replace("a", "b", 2)', "bba"),
        ('"abc".upperAscii()', "ABC"),
        ("[1, 3, 5].isSorted() && ![2, 1].isSorted()", True),
        ("[1, 2, 3].sum()", 6),
        ("[4, 2, 9].min() + [4, 2, 9].max()", 11),
        ('"v1.2.3".find("[0-9]+")', "1"),
        ('"a1b22".findAll("[0-9]+")', ["1", "22"]),
        ("has(object.status.replicas) && !has(object.status.unknown)", True),
        ("object.status.conditions.all(c, c.status == 'True')", True),
        ("object.status.conditions.exists_one(c, c.type == 'Available')", True),
        ("object.status.conditions.map(c, c.type)", ["Available"]),
        ("type(object.status.replicas) == int", True),
        ("size(object.status.conditions) == 1", True),
    ],
)
def test_extension_and_standard_functions(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("object.status.replicas / 0", "division by zero"),
        ("object.status.conditions[3]", "index out of range"),
        ('object.status["nope"]', "no such key: nope"),
        ("object.kind.nope", "no such overload"),
        ('"abc".charAt(9)', "index out of range: 9"),
        ("[].min()", "min called on empty list"),
    ],
)
def test_run_time_errors_are_worded_as_cel_go_words_them(text: str, message: str) -> None:
    with pytest.raises(CelEvalError) as caught:
        run(text)
    assert str(caught.value) == message


def test_errors_never_copy_the_object_into_the_message() -> None:
    secretive = {"status": {"token": "s3cr3t"}}
    with pytest.raises(CelEvalError) as caught:
        run("object.status.token.nope", secretive)
    assert "s3cr3t" not in str(caught.value)


def test_an_error_on_the_losing_side_of_a_logical_operator_is_absorbed() -> None:
    assert run('false && "abc".charAt(9) == "x"') == celtypes.BoolType(False)
    assert run("true || object.missing") == celtypes.BoolType(True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "foo(1)",
            "ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo(1)\n | ...^",
        ),
        (
            '"a".nope()',
            "ERROR: <input>:1:9: undeclared reference to 'nope' (in container '')\n | \"a\".nope()\n | ........^",
        ),
        (
            "[1].exists(c, d)",
            "ERROR: <input>:1:15: undeclared reference to 'd' (in container '')\n | [1].exists(c, d)\n | ..............^",
        ),
        ("1 +", "ERROR: <input>:1:3: Syntax error: mismatched input '<EOF>'\n | 1 +\n | ..^"),
        (
            "1 # 2",
            "ERROR: <input>:1:3: Syntax error: token recognition error at: '#'\n | 1 # 2\n | ..^",
        ),
        (
            "result",
            "ERROR: <input>:1:1: undeclared reference to 'result' (in container '')\n | result\n | ^",
        ),
    ],
)
def test_compile_errors_read_as_cel_go_issues(text: str, expected: str) -> None:
    with pytest.raises(CelCompileError) as caught:
        ENV.compile(text)
    assert str(caught.value) == expected


def test_optional_types_are_not_available() -> None:
    with pytest.raises(CelCompileError) as caught:
        ENV.compile("optional.of(1)")
    assert str(caught.value).startswith(
        "ERROR: <input>:1:1: undeclared reference to 'optional' (in container '')\n"
    )
    with pytest.raises(CelCompileError, match="Syntax error"):
        ENV.compile("object.?status")


def test_deep_nesting_is_a_compile_error_not_a_crash() -> None:
    with pytest.raises(CelCompileError, match="recursion limit exceeded"):
        ENV.compile("(" * 2000 + "1" + ")" * 2000)
    found, _ = evaluated(DEPLOYMENT, cel("Ready", "[" * 2000 + "]" * 2000 + " == []"))
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "ConditionRuleExpressionError")


def test_a_deeply_nested_object_is_an_evaluation_error_not_a_crash() -> None:
    deep: Any = {}
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(CelEvalError, match="nesting too deep"):
        run("true", {"status": deep})


def test_macro_variables_are_in_scope_only_inside_their_macro() -> None:
    ENV.compile("[1, 2].all(x, [3].exists(y, x < y))")
    with pytest.raises(CelCompileError, match="undeclared reference to 'x'"):
        ENV.compile("[1, 2].all(x, true) && x > 1")


def test_a_call_past_the_per_call_limit_is_cancelled() -> None:
    assert PER_CALL_LIMIT == 1_000_000  # upstream's celconfig.PerCallLimit
    big = "[" + ",".join(["1"] * 100) + "]"
    program = ENV.compile(f"{big}.all(x, {big}.all(y, x == y || true))")
    with pytest.raises(CelBudgetExceeded) as caught:
        # a smaller limit than upstream's: a million steps take this interpreter a minute
        ENV.evaluate(program, {"object": {}}, budget=PER_CALL_LIMIT, per_call_limit=5_000)
    assert str(caught.value) == "operation cancelled: actual cost limit exceeded"


def test_costs_are_counted_and_reported() -> None:
    program = ENV.compile("object.status.replicas == 2")
    outcome = ENV.evaluate(program, {"object": DEPLOYMENT}, budget=100)
    assert outcome.value == celtypes.BoolType(True)
    assert 0 < outcome.cost < 10
    with pytest.raises(CelBudgetExceeded, match="CEL evaluation budget exceeded"):
        ENV.evaluate(program, {"object": DEPLOYMENT}, budget=outcome.cost - 1)
