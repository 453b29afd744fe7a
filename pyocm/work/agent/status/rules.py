"""Condition rules: the conditions ``manifestConfigs[].conditionRules`` compute.

As upstream's ``conditions.ConditionReader``. A ``CEL`` rule's expressions see the
object as ``object`` and are ANDed: the first one false makes the condition False, all
true make it True (reason ``ConditionRuleEvaluated``). The message is
``messageExpression`` (which also sees ``result``, the bool outcome) when it yields a
non-empty string, else ``message``, else ``Manifest is <condition>`` /
``Manifest is not <condition>``. A ``WellKnownConditions`` rule takes upstream's rule
for the object's kind and condition (only ``Complete`` for Jobs and Pods), with the
rule's own message or messageExpression overriding; for any other kind it yields no
condition. An expression that does not compile, fails or yields no bool makes the
condition False ``ConditionRuleExpressionError`` with the error as message; an unknown
rule type is Unknown ``ConditionRuleInvalid``. Nothing here raises for a bad rule.

The rules of one manifest share one cost budget per evaluation
(:data:`pyocm.kube.cel.RUNTIME_COST_BUDGET`), as upstream's do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from celpy import celtypes

from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfigConditionRule as ConditionRule,
)
from pyocm.kube.cel import (
    RUNTIME_COST_BUDGET,
    CelBudgetExceeded,
    CelCompileError,
    CelEnv,
    CelEvalError,
    Program,
    go_type_name,
    is_bool,
    is_string,
)
from pyocm.work.agent.status.merge import NewCondition
from pyocm.work.agent.status.wellknown import CONDITION_RULES, gvk_of

Obj = dict[str, Any]

CEL = "CEL"
WELL_KNOWN_CONDITIONS = "WellKnownConditions"
EVALUATED = "ConditionRuleEvaluated"
INVALID = "ConditionRuleInvalid"
EXPRESSION_ERROR = "ConditionRuleExpressionError"
INTERNAL_ERROR = "ConditionRuleInternalError"
#: Every reason a rule sets starts so; upstream prunes conditions by it.
RULE_REASON_PREFIX = "ConditionRule"


def has_conditions(value: Any) -> celtypes.BoolType:
    """OCM's ``hasConditions(status)``: a map whose ``conditions`` is a non-empty list."""
    if not isinstance(value, celtypes.MapType):
        return celtypes.BoolType(False)
    key = celtypes.StringType("conditions")
    # celpy's MapType.get raises for a missing key
    conditions = value[key] if key in value else None  # noqa: SIM401
    return celtypes.BoolType(isinstance(conditions, celtypes.ListType) and len(conditions) > 0)


_OCM_FUNCTIONS = {"hasConditions": has_conditions}
_RULE_ENV = CelEnv("object", functions=_OCM_FUNCTIONS)
_MESSAGE_ENV = CelEnv("object", "result", functions=_OCM_FUNCTIONS)


@dataclass(frozen=True)
class RuleOutcome:
    """One rule's condition (None: a well-known rule that does not apply), the budget
    left, and the error that the condition's message reports, if any."""

    condition: NewCondition | None
    budget: int
    error: str | None = None


def evaluate_condition_rules(
    obj: Obj, rules: Sequence[ConditionRule], *, budget: int = RUNTIME_COST_BUDGET
) -> list[NewCondition]:
    """``EvaluateConditions``: each rule's condition in order, all sharing ``budget``."""
    conditions: list[NewCondition] = []
    for rule in rules:
        outcome = condition_by_rule(obj, rule, budget=budget)
        budget = outcome.budget
        if outcome.condition is not None:
            conditions.append(outcome.condition)
    return conditions


def condition_by_rule(obj: Obj, rule: ConditionRule, *, budget: int) -> RuleOutcome:
    """``GetConditionByRule``: the condition one rule computes for ``obj``."""
    kind = rule.get("type")
    if kind == CEL:
        return _cel_condition(
            obj,
            condition=rule["condition"],
            expressions=rule.get("celExpressions") or [],
            message=rule.get("message") or "",
            message_expression=rule.get("messageExpression") or "",
            budget=budget,
        )
    if kind == WELL_KNOWN_CONDITIONS:
        known = CONDITION_RULES.get(gvk_of(obj), {}).get(rule["condition"])
        if known is None or not known.cel_expressions:
            return RuleOutcome(condition=None, budget=budget)
        return _cel_condition(
            obj,
            condition=known.condition,
            expressions=known.cel_expressions,
            message=rule.get("message") or "",
            message_expression=rule.get("messageExpression") or known.message_expression,
            budget=budget,
        )
    error = f"unrecognized condition rule type {kind or ''}"
    condition: NewCondition = {
        "type": rule["condition"],
        "status": "Unknown",
        "reason": INVALID,
        "message": error,
    }
    return RuleOutcome(condition=condition, budget=budget, error=error)


def is_rule_condition(condition: dict[str, Any] | NewCondition) -> bool:
    """``IsConditionGeneratedByConditionRule``: whether a rule set this condition."""
    reason = condition.get("reason")
    return isinstance(reason, str) and reason.startswith(RULE_REASON_PREFIX)


def _cel_condition(
    obj: Obj,
    *,
    condition: str,
    expressions: Sequence[str],
    message: str,
    message_expression: str,
    budget: int,
) -> RuleOutcome:
    status, reason, budget, error = _evaluate_expressions(obj, expressions, budget)
    if error is not None:
        text = error
    else:
        text, budget, error = _message(
            obj,
            condition=condition,
            message=message,
            message_expression=message_expression,
            result=status == "True",
            budget=budget,
        )
        if error is not None and not text:
            text = error
    outcome: NewCondition = {"type": condition, "status": status, "reason": reason, "message": text}
    return RuleOutcome(condition=outcome, budget=budget, error=error)


def _evaluate_expressions(
    obj: Obj, expressions: Sequence[str], budget: int
) -> tuple[str, str, int, str | None]:
    """Status, reason, budget left and error of ANDed expressions (none: True)."""
    for expression in expressions:
        program = _compile(_RULE_ENV, expression)
        if isinstance(program, str):  # a compile error: False by upstream's convention
            return "False", EXPRESSION_ERROR, budget, program
        try:
            outcome = _RULE_ENV.evaluate(program, {"object": obj}, budget=budget)
        except CelEvalError as err:
            return "False", EXPRESSION_ERROR, budget, str(err)
        budget -= outcome.cost
        if not is_bool(outcome.value):
            error = f"expected bool result, got {go_type_name(outcome.value)}"
            return "False", EXPRESSION_ERROR, budget, error
        if not outcome.value:
            return "False", EVALUATED, budget, None
    return "True", EVALUATED, budget, None


def _message(
    obj: Obj,
    *,
    condition: str,
    message: str,
    message_expression: str,
    result: bool,
    budget: int,
) -> tuple[str, int, str | None]:
    """``getConditionMessageByRule``: message, budget left, and any error."""
    if message_expression:
        program = _compile(_MESSAGE_ENV, message_expression)
        if isinstance(program, str):
            # upstream keeps the first line of the issues, without the code snippet
            return program.split("\n | ")[0], budget, program
        try:
            outcome = _MESSAGE_ENV.evaluate(
                program, {"object": obj, "result": result}, budget=budget
            )
        except CelBudgetExceeded as err:
            return "", -1, str(err)  # as upstream, nothing is left for later rules
        except CelEvalError as err:
            return "", budget, str(err)
        budget -= outcome.cost
        if not is_string(outcome.value):
            kind = go_type_name(outcome.value)
            return "", budget, f"expected message expression to have a string result, got {kind}"
        if outcome.value:
            return str(outcome.value), budget, None
    if message:
        return message, budget, None
    if result:
        return f"Manifest is {condition}", budget, None
    return f"Manifest is not {condition}", budget, None


def _compile(env: CelEnv, text: str) -> Program | str:
    """The compiled program, or the compile error's text (cached: rules recur every sync)."""
    return _compile_cached(env, text)


@lru_cache(maxsize=1024)
def _compile_cached(env: CelEnv, text: str) -> Program | str:
    try:
        return env.compile(text)
    except CelCompileError as err:
        return str(err)
