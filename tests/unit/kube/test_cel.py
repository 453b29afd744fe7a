"""The CEL environment (cel-go's behaviour over celpy): functions, error wording, compile
checks and cost metering."""

from __future__ import annotations

import time
from typing import Any

import pytest
from celpy import celtypes

from pyocm.kube.cel import (
    PER_CALL_LIMIT,
    CelBudgetExceeded,
    CelCompileError,
    CelEnv,
    CelEvalError,
    CelInterrupted,
    is_bool,
    to_cel,
)

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


# -- Kubernetes' semver library ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('semver("1.30.0").isLessThan(semver("1.31.0"))', True),
        ('semver("1.30.0").isGreaterThan(semver("1.31.0"))', False),
        ('semver("1.2.3-alpha").compareTo(semver("1.2.3"))', -1),
        ('semver("1.2.3-alpha.1").compareTo(semver("1.2.3-alpha.beta"))', -1),
        ('semver("1.2.3+build").compareTo(semver("1.2.3"))', 0),
        ('semver("v01.2", true).compareTo(semver("1.2.0"))', 0),
        ('semver("4.5.6").major() + semver("4.5.6").minor() + semver("4.5.6").patch()', 15),
        ('isSemver("1.2.3") && !isSemver("v1.2.3") && isSemver("v1.2", true)', True),
    ],
)
def test_semver_functions(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('semver("1.2")', "No Major.Minor.Patch elements found"),
        ('semver("01.2.3")', 'Major number must not contain leading zeroes "01"'),
        ('semver("1.x.3")', 'Invalid character(s) found in minor number "x"'),
        ('semver("1.2-beta", true)', "short version cannot contain PreRelease/Build meta data"),
        ('semver("1.2.3").isLessThan("1.2.4")', "no such overload"),
    ],
)
def test_semver_errors(text: str, message: str) -> None:
    with pytest.raises(CelEvalError) as caught:
        run(text)
    assert str(caught.value) == message


def test_extra_functions_are_declared_per_environment() -> None:
    env = CelEnv("x", functions={"twice": lambda v: v + v})
    assert env.evaluate(env.compile("x.twice()"), {"x": 2}, budget=100).value == 4
    with pytest.raises(CelCompileError, match="undeclared reference to 'twice'"):
        ENV.compile("object.twice()")
    bound = env.with_functions({"twice": lambda v: v * 3})
    assert bound.evaluate(env.compile("x.twice()"), {"x": 2}, budget=100).value == 6


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.0 == 1", True),
        ("1 == 1.0", True),
        ("1u == 1.0", True),
        ("1.5 != 1", True),
        ("1.0 != 1", False),
        ("[1.0, 2] == [1, 2.0]", True),
        ('{"a": 1.0} == {"a": 1}', True),
        ('{"a": 1.0} == {"b": 1}', False),
        ("1 in [1.0]", True),
        ("2 in [1.0]", False),
        ("true == true", True),
    ],
)
def test_numbers_of_different_types_compare_by_value(text: str, expected: bool) -> None:
    # cel-go's heterogeneous equality: JSON numbers (doubles) meet int literals.
    value = run(text)
    assert is_bool(value) and bool(value) is expected


def test_a_deadline_interrupts_a_long_evaluation() -> None:
    looping = ENV.compile("[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, a+b > 0))")
    with pytest.raises(CelInterrupted, match="operation interrupted"):
        ENV.evaluate(looping, {"object": {}}, budget=10_000, deadline=time.monotonic() - 1)
    assert ENV.evaluate(looping, {"object": {}}, budget=10_000, deadline=time.monotonic() + 60)


def test_a_converted_object_is_used_as_it_is() -> None:
    program = ENV.compile('object.metadata.name == "test"')
    converted = {"object": to_cel(DEPLOYMENT)}
    assert ENV.evaluate(program, converted, budget=100, converted=True).value
