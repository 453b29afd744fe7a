"""CEL as Kubernetes runs it: compile, check and evaluate with a cost budget.

Upstream evaluates CEL with cel-go in environments declaring a few variables, plus
Kubernetes' extension libraries and some functions of OCM's own (``hasConditions`` for
ManifestWork condition rules, ``scores`` and ``parseJSON`` for placement): a
:class:`CelEnv` declares its variables and takes such extra functions. Here cel-python
(``celpy``) parses and interprets; this module adds what cel-go does around it and
celpy does not:

* a declaration check at compile time, so an unknown variable or function is a compile
  error shown as cel-go shows it (``ERROR: <input>:1:1: undeclared reference to 'x'
  (in container '')`` followed by the source line and a caret);
* a cost meter: every evaluation step counts one, a call stops past
  :data:`PER_CALL_LIMIT` as cel-go's ``CostLimit`` does, and a caller's remaining
  budget is enforced as upstream's ``CEL evaluation budget exceeded``;
* runtime errors worded as cel-go words them (``no such key: x``, ``no such overload``),
  never celpy's internal text (which would copy the whole object into a condition);
* the string extension functions (``lowerAscii``, ``split``, ...) and Kubernetes' list
  functions (``isSorted``, ``sum``, ``min``, ``max``, ...).

Not available (cel-go would accept them, here they are undeclared references):
optional types (``.?field``, ``optional.of``), ``format``/``quote``, and Kubernetes'
``quantity``, ``url``, ``ip``, ``cidr`` and ``format`` libraries. Kubernetes' ``semver``
library is here (``semver``, ``isSemver``, ``isGreaterThan``, ``isLessThan``,
``compareTo``, ``major``, ``minor``, ``patch``). Steps are
counted as this interpreter takes them, so a cost is close to cel-go's but not equal.
"""

from __future__ import annotations

import copy
import itertools
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import celpy
import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import Activation, CELEvalError, Evaluator, bool_eq, operator_in

from pyocm.kube import semver

#: cel-go's per-call cost limit (``celconfig.PerCallLimit``) upstream programs run with.
PER_CALL_LIMIT = 1_000_000
#: cel-go's whole-evaluation budget (``celconfig.RuntimeCELCostBudget``): of one manifest's
#: rules in one sync, of one cluster's placement expressions.
RUNTIME_COST_BUDGET = 10_000_000

_MACROS_ONE_VAR = frozenset({"all", "exists", "exists_one", "filter", "map"})
#: Type names usable as identifiers (``type(x) == string``).
_TYPE_NAMES = frozenset(
    {"bool", "bytes", "double", "int", "list", "map", "null_type", "string", "type", "uint"}
)
_STANDARD_FUNCTIONS = frozenset(
    {
        "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double",
        "string", "bytes", "bool", "duration", "timestamp", "type", "dyn", "getDate",
        "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
        "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
    }
)  # fmt: skip


class CelCompileError(Exception):
    """An expression that does not compile; ``str()`` is cel-go's issues display string."""


class CelEvalError(Exception):
    """An evaluation that failed; ``str()`` is worded as cel-go words the error."""


class CelBudgetExceeded(CelEvalError):
    """The evaluation went past its cost limit or the caller's remaining budget."""


class CelInterrupted(CelEvalError):
    """The evaluation ran past the caller's wall-clock deadline (cel-go's words for an
    evaluation whose context ended: ``operation interrupted``)."""


def to_cel(value: Any) -> Any:
    """A JSON-like value as CEL sees it. Converting a large object takes long next to
    evaluating a simple expression: a caller evaluating many expressions over the same
    object converts it once and passes ``converted=True`` to :meth:`CelEnv.evaluate`."""
    return json_to_cel(value)


@dataclass(frozen=True)
class Program:
    """A compiled, checked expression."""

    text: str
    ast: lark.Tree


@dataclass(frozen=True)
class Outcome:
    """A value and what computing it cost."""

    value: Any
    cost: int


class CelEnv:
    """An environment declaring ``variables``; its programs may call the standard and
    Kubernetes functions, and ``functions`` (name to a callable taking and returning celpy
    values; a method call ``x.f(y)`` calls ``f(x, y)``). A function reports a bad input by
    raising ValueError with the error's words (or TypeError: ``no such overload``)."""

    def __init__(
        self, *variables: str, functions: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        self.variables = frozenset(variables)
        extra = {name: _errors_as_values(f) for name, f in (functions or {}).items()}
        self._functions = {**_FUNCTIONS, **extra}
        self._names = _FUNCTION_NAMES | frozenset(extra)
        self._env = celpy.Environment()

    def with_functions(self, functions: Mapping[str, Callable[..., Any]]) -> CelEnv:
        """This environment with ``functions`` added or replaced. Cheap (the parser is
        shared): for functions bound to one use, such as a lookup of the moment; a
        program compiled by this environment runs in the new one when it declares the
        same names."""
        env = copy.copy(self)
        extra = {name: _errors_as_values(f) for name, f in functions.items()}
        env._functions = {**self._functions, **extra}
        env._names = self._names | frozenset(extra)
        return env

    def compile(self, text: str) -> Program:
        """Parse and check ``text``; :class:`CelCompileError` reads as cel-go's issues."""
        try:
            ast = self._env.compile(text)
            found = _undeclared(ast, self.variables, self._names)
        except CELParseError as err:
            raise CelCompileError(_syntax_error(text, err)) from None
        except RecursionError:  # cel-go's parser refuses deep nesting too
            raise CelCompileError(
                _display(text, 1, 1, "expression recursion limit exceeded")
            ) from None
        except Exception as err:  # a parser fault is the expression's problem, not ours
            raise CelCompileError(
                _display(text, 1, 1, f"Syntax error: {type(err).__name__}")
            ) from None
        issues = [_display(text, *issue) for issue in found]
        if issues:
            raise CelCompileError("\n".join(issues))
        return Program(text=text, ast=ast)

    def evaluate(
        self,
        program: Program,
        variables: Mapping[str, Any],
        *,
        budget: int,
        per_call_limit: int = PER_CALL_LIMIT,
        deadline: float | None = None,
        converted: bool = False,
    ) -> Outcome:
        """Evaluate with ``variables`` (plain JSON-like values, or :func:`to_cel`'s with
        ``converted``), stopping past ``per_call_limit`` or past ``budget``, or
        (:class:`CelInterrupted`) once ``time.monotonic()`` passes ``deadline``; errors
        are :class:`CelEvalError`, never anything else.

        This interpreter takes some 50µs a step: a call that runs into upstream's limit
        of a million steps holds the thread for about a minute, so callers on an event
        loop should evaluate in a worker thread."""
        meter = _Meter(limit=min(per_call_limit, budget), deadline=deadline)
        activation = Activation(
            package=None, annotations=self._env.annotations, functions=self._functions
        )
        evaluator = _MeteredEvaluator(program.ast, activation, meter)
        try:
            context = {
                name: value if converted else json_to_cel(value)
                for name, value in variables.items()
            }
            value = evaluator.evaluate(context)
        except _Interrupted:
            raise CelInterrupted("operation interrupted") from None
        except _LimitReached:
            raise CelBudgetExceeded(_limit_text(meter.used, budget)) from None
        except CELEvalError as err:
            raise CelEvalError(_eval_error_text(err)) from None
        except RecursionError:
            raise CelEvalError("expression nesting too deep") from None
        except Exception as err:  # an interpreter fault must not take the agent down
            raise CelEvalError(f"internal error: {type(err).__name__}") from None
        if meter.used > budget:
            raise CelBudgetExceeded("CEL evaluation budget exceeded")
        return Outcome(value=value, cost=meter.used)


def go_type_name(value: Any) -> str:
    """The Go type cel-go's ``out.Value()`` would have for ``value``, as ``%v`` of
    ``reflect.TypeOf`` prints it (upstream puts it in "expected bool result" errors)."""
    for cel_type, name in _GO_TYPE_NAMES:
        if isinstance(value, cel_type):
            return name
    return "structpb.NullValue" if value is None else type(value).__name__


def is_bool(value: Any) -> bool:
    """Whether a result is a CEL bool (celpy's operators may answer plain Python ones)."""
    return isinstance(value, celtypes.BoolType | bool)


def is_string(value: Any) -> bool:
    """Whether a result is a CEL string (concatenation answers a plain ``str``)."""
    return isinstance(value, str)


# Order matters: celpy's bool and uint are ints, its timestamp a datetime.
_GO_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (celtypes.BoolType, "bool"),
    (bool, "bool"),
    (celtypes.UintType, "uint64"),
    (int, "int64"),
    (float, "float64"),
    (str, "string"),
    (bytes, "[]uint8"),
    (list, "[]interface {}"),
    (dict, "map[string]interface {}"),
    (celtypes.DurationType, "time.Duration"),
    (celtypes.TimestampType, "time.Time"),
)


# -- metering -------------------------------------------------------------------------


class _LimitReached(Exception):
    pass


class _Interrupted(Exception):
    pass


#: Steps between two looks at the clock (cel-go's ``InterruptCheckFrequency`` is 100).
_CLOCK_EVERY = 128


class _Meter:
    def __init__(self, *, limit: int, deadline: float | None = None) -> None:
        self.limit = limit
        self.deadline = deadline
        self.used = 0

    def tick(self) -> None:
        self.used += 1
        if self.used > self.limit:
            raise _LimitReached
        looks = self.deadline is not None and self.used % _CLOCK_EVERY == 0
        if looks and time.monotonic() > cast(float, self.deadline):
            raise _Interrupted


class _MeteredEvaluator(Evaluator):
    """celpy's interpreter, charging one per step. The grammar wraps every operand in a
    chain of single-child rules (expr > conditionalor > ... > primary); those wrappers
    are free, so a step is an identifier, literal, selection, operator or call, close to
    what cel-go charges."""

    def __init__(self, ast: lark.Tree, activation: Activation, meter: _Meter) -> None:
        super().__init__(ast, activation)
        self.meter = meter

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _MeteredEvaluator(ast, self.activation, self.meter)

    def _visit_tree(self, tree: lark.Tree) -> Any:
        children = tree.children
        if len(children) != 1 or not isinstance(children[0], lark.Tree):
            self.meter.tick()
        return super()._visit_tree(tree)


def _limit_text(used: int, budget: int) -> str:
    if used > budget:
        return "CEL evaluation budget exceeded"
    return "operation cancelled: actual cost limit exceeded"


# -- compile-time checks ----------------------------------------------------------------

Issue = tuple[int, int, str]  # line, column (1-based), message


def _undeclared(
    ast: lark.Tree, variables: frozenset[str], functions: frozenset[str]
) -> list[Issue]:
    issues: list[Issue] = []
    _Checker(functions).check(ast, variables, issues)
    return sorted(issues, key=lambda issue: (issue[0], issue[1]))


class _Checker:
    """Finds references to undeclared variables and to functions not in ``functions``."""

    def __init__(self, functions: frozenset[str]) -> None:
        self.functions = functions

    def check(self, tree: lark.Tree, scope: frozenset[str], issues: list[Issue]) -> None:
        kind = tree.data
        if kind == "ident":
            token = cast(lark.Token, tree.children[0])
            if token.value not in scope and token.value not in _TYPE_NAMES:
                issues.append(_undeclared_issue(token, token.value, at_call=False))
            return
        if kind in ("ident_arg", "dot_ident_arg"):
            token = cast(lark.Token, tree.children[0])
            if token.value != "has" and token.value not in self.functions:
                issues.append(_undeclared_issue(token, token.value, at_call=True))
            # has(a.b): only the operand of the selection is a reference; the field is a
            # name. A call's arguments are references too.
            self.check_children(tree.children[1:], scope, issues)
            return
        if kind == "member_dot_arg":
            self.check_member_call(tree, scope, issues)
            return
        if kind == "member_object":
            token = _first_token(tree)
            issues.append(_undeclared_issue(token, token.value, at_call=False))
            return
        self.check_children(tree.children, scope, issues)

    def check_children(
        self, children: list[Any], scope: frozenset[str], issues: list[Issue]
    ) -> None:
        for child in children:
            if isinstance(child, lark.Tree):
                self.check(child, scope, issues)

    def check_member_call(
        self, tree: lark.Tree, scope: frozenset[str], issues: list[Issue]
    ) -> None:
        target, name_token, *rest = tree.children
        arguments = rest[0] if rest else None
        name = cast(lark.Token, name_token).value
        self.check(cast(lark.Tree, target), scope, issues)
        args = list(arguments.children) if isinstance(arguments, lark.Tree) else []
        bound = _macro_variable(args[0]) if name in _MACROS_ONE_VAR and len(args) >= 2 else None
        if bound is not None:
            for arg in args[1:]:
                self.check(arg, scope | {bound}, issues)
            return
        if name not in self.functions:
            issues.append(_undeclared_issue(cast(lark.Token, name_token), name, at_call=True))
        self.check_children(args, scope, issues)


def _macro_variable(tree: Any) -> str | None:
    """The iteration variable of ``list.exists(c, ...)``: a bare identifier, or None."""
    idents = list(tree.find_data("ident")) if isinstance(tree, lark.Tree) else []
    leaves = [t for t in tree.iter_subtrees() if t.data not in _WRAPPERS] if idents else []
    if len(idents) == 1 and len(leaves) == 1:
        return str(cast(lark.Token, idents[0].children[0]).value)
    return None


_WRAPPERS = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
     "unary", "member", "primary"}
)  # fmt: skip


def _first_token(tree: lark.Tree) -> lark.Token:
    return cast(lark.Token, next(iter(tree.scan_values(lambda v: isinstance(v, lark.Token)))))


def _undeclared_issue(token: lark.Token, name: str, *, at_call: bool) -> Issue:
    # cel-go places a call at its opening parenthesis, just after the function's name
    column = (token.column or 1) + (len(name) if at_call else 0)
    return (token.line or 1, column, f"undeclared reference to '{name}' (in container '')")


def _display(text: str, line: int, column: int, message: str) -> str:
    """One issue as cel-go's ``Error.ToDisplayString`` shows it: a header, the source line
    (tabs as spaces) and a caret under the column."""
    header = f"ERROR: <input>:{line}:{column}: {message}"
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return header
    snippet = lines[line - 1].replace("\t", " ")
    before = snippet[: column - 1]
    dots = "".join("\uff0e" if len(c.encode()) > 1 else "." for c in before)
    at = snippet[column - 1 : column]
    caret = "\uff3e" if at and len(at.encode()) > 1 else "^"
    return f"{header}\n | {snippet}\n | {dots}{caret}"


def _syntax_error(text: str, err: CELParseError) -> str:
    cause = err.__context__
    line, column = err.line or 1, err.column or 1
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        token = cause.token
        shown = "<EOF>" if token.type == "$END" else token.value
        message = f"Syntax error: mismatched input '{shown}'"
    elif isinstance(cause, lark.exceptions.UnexpectedCharacters):
        message = f"Syntax error: token recognition error at: '{cause.char}'"
    else:
        message = "Syntax error"
    return _display(text, line, column, message)


# -- runtime errors ---------------------------------------------------------------------

_NO_SUCH_MEMBER = re.compile(r"no such member in mapping: '(.*)'$", re.DOTALL)


def _eval_error_text(err: CELEvalError) -> str:
    """cel-go's wording for the errors celpy raises; anything else keeps celpy's first
    words, cut before any dump of the evaluation's variables."""
    text = str(err.args[0]) if err.args else "evaluation error"
    cause = err.args[1] if len(err.args) > 1 else None
    cause_args = err.args[2] if len(err.args) > 2 else None
    if match := _NO_SUCH_MEMBER.match(text):
        return f"no such key: {match.group(1)}"
    if text == "no such key" and cause_args:
        return f"no such key: {cause_args[0]}"
    if cause is ZeroDivisionError:
        return "division by zero"
    if text == "invalid_argument" and cause is IndexError:
        return "index out of range"
    if "does not support field selection" in text or text.startswith("found no matching"):
        return "no such overload"
    if text.startswith("Attempt to reduce an empty sequence"):  # celpy's own min()
        return "min called on empty list"
    if text.startswith("undeclared reference to"):
        return text.split(" (in activation", 1)[0] + " (in container '')"
    return text.split(" (in activation", 1)[0]


# -- functions --------------------------------------------------------------------------


def _string(value: Any) -> str:
    if not isinstance(value, celtypes.StringType):
        raise TypeError("no such overload")
    return str(value)


def _int(value: Any) -> int:
    if not isinstance(value, celtypes.IntType) or isinstance(value, celtypes.BoolType):
        raise TypeError("no such overload")
    return int(value)


def _char_at(text: Any, index: Any) -> celtypes.StringType:
    chars, at = _string(text), _int(index)
    if not 0 <= at <= len(chars):
        raise ValueError(f"index out of range: {at}")
    return celtypes.StringType(chars[at : at + 1])


def _index_of(target: Any, item: Any, start: Any = None) -> celtypes.IntType:
    if isinstance(target, celtypes.ListType):
        return celtypes.IntType(next((i for i, v in enumerate(target) if v == item), -1))
    text, sub = _string(target), _string(item)
    offset = 0 if start is None else _int(start)
    if not 0 <= offset <= len(text):
        raise ValueError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def _last_index_of(target: Any, item: Any, start: Any = None) -> celtypes.IntType:
    if isinstance(target, celtypes.ListType):
        found = [i for i, v in enumerate(target) if v == item]
        return celtypes.IntType(found[-1] if found else -1)
    text, sub = _string(target), _string(item)
    end = len(text) if start is None else _int(start)
    if not 0 <= end <= len(text):
        raise ValueError(f"index out of range: {end}")
    return celtypes.IntType(text.rfind(sub, 0, end + len(sub)))


def _lower_ascii(text: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _string(text)))


def _upper_ascii(text: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _string(text)))


def _replace(text: Any, old: Any, new: Any, limit: Any = None) -> celtypes.StringType:
    count = -1 if limit is None else _int(limit)
    return celtypes.StringType(_string(text).replace(_string(old), _string(new), count))


def _split(text: Any, separator: Any, limit: Any = None) -> celtypes.ListType:
    source, sep = _string(text), _string(separator)
    count = -1 if limit is None else _int(limit)
    if count == 0:
        parts: list[str] = []
    elif sep == "":
        chars = list(source)
        parts = (
            chars
            if count < 0 or count >= len(chars)
            else [*chars[: count - 1], source[count - 1 :]]
        )
    else:
        parts = source.split(sep, -1 if count < 0 else count - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    source = _string(text)
    begin, stop = _int(start), len(source) if end is None else _int(end)
    if not 0 <= begin <= stop <= len(source):
        raise ValueError(f"index out of range: {begin}")
    return celtypes.StringType(source[begin:stop])


def _trim(text: Any) -> celtypes.StringType:
    return celtypes.StringType(_string(text).strip())


def _join(items: Any, separator: Any = None) -> celtypes.StringType:
    if not isinstance(items, celtypes.ListType):
        raise TypeError("no such overload")
    sep = "" if separator is None else _string(separator)
    return celtypes.StringType(sep.join(_string(item) for item in items))


def _reverse(target: Any) -> Any:
    if isinstance(target, celtypes.ListType):
        return celtypes.ListType(reversed(target))
    return celtypes.StringType(_string(target)[::-1])


def _list(value: Any) -> list[Any]:
    if not isinstance(value, celtypes.ListType):
        raise TypeError("no such overload")
    return list(value)


def _is_sorted(items: Any) -> celtypes.BoolType:
    values = _list(items)
    return celtypes.BoolType(all(a <= b for a, b in itertools.pairwise(values)))


def _sum(items: Any) -> Any:
    values = _list(items)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


def _min(items: Any) -> Any:
    values = _list(items)
    if not values:
        raise ValueError("min called on empty list")
    return min(values)


def _max(items: Any) -> Any:
    values = _list(items)
    if not values:
        raise ValueError("max called on empty list")
    return max(values)


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    match = re.search(_string(pattern), _string(text))
    return celtypes.StringType(match.group() if match else "")


def _find_all(text: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    found: Iterator[re.Match[str]] = re.finditer(_string(pattern), _string(text))
    count = -1 if limit is None else _int(limit)
    matches = [celtypes.StringType(m.group()) for m in found]
    return celtypes.ListType(matches if count < 0 else matches[:count])


def _semver_of(value: Any) -> semver.Semver:
    if not isinstance(value, semver.Semver):
        raise TypeError("no such overload")
    return value


def _to_semver(text: Any, normalize: Any = None) -> semver.Semver:
    try:
        return semver.parse(_string(text), normalize=_bool(normalize))
    except semver.SemverError as err:
        raise ValueError(str(err)) from None


def _is_semver(text: Any, normalize: Any = None) -> celtypes.BoolType:
    try:
        semver.parse(_string(text), normalize=_bool(normalize))
    except semver.SemverError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _bool(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, celtypes.BoolType):
        raise TypeError("no such overload")
    return bool(value)


_EXTENSIONS: dict[str, Callable[..., Any]] = {
    "semver": _to_semver,
    "isSemver": _is_semver,
    "isGreaterThan": lambda a, b: celtypes.BoolType(_semver_of(a).compare(_semver_of(b)) == 1),
    "isLessThan": lambda a, b: celtypes.BoolType(_semver_of(a).compare(_semver_of(b)) == -1),
    "compareTo": lambda a, b: celtypes.IntType(_semver_of(a).compare(_semver_of(b))),
    "major": lambda v: celtypes.IntType(_semver_of(v).major),
    "minor": lambda v: celtypes.IntType(_semver_of(v).minor),
    "patch": lambda v: celtypes.IntType(_semver_of(v).patch),
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "reverse": _reverse,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _min,
    "max": _max,
    "find": _find,
    "findAll": _find_all,
}


def _errors_as_values(function: Callable[..., Any]) -> Callable[..., Any]:
    """celpy carries an error as a value (so ``false && f()`` is still false) and words a
    raised ValueError as an overflow; a function's own error keeps its words this way."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except ValueError as err:
            return CELEvalError(str(err), ValueError, None)

    return call


# -- heterogeneous numeric equality ---------------------------------------------------
# cel-go compares numbers of different types by value (``1.0 == 1`` is true, ``1 in
# [1.0]`` too); celpy answers "no such overload". It matters wherever JSON numbers meet
# literals: ``parseJSON()`` gives doubles, as Go's encoding/json does.


def _is_number(value: Any) -> bool:
    return isinstance(value, celtypes.IntType | celtypes.UintType | celtypes.DoubleType) and (
        not isinstance(value, celtypes.BoolType)
    )


def _native(number: Any) -> float | int:
    """Python's own number (compared exactly across int and float; celpy's refuse)."""
    return float(number) if isinstance(number, celtypes.DoubleType) else int(number)


def _equal(a: Any, b: Any) -> Any:
    if _is_number(a) and _is_number(b):
        return celtypes.BoolType(_native(a) == _native(b))
    if isinstance(a, celtypes.ListType) and isinstance(b, celtypes.ListType):
        if len(a) != len(b):
            return celtypes.BoolType(False)
        return _all_equal(zip(a, b, strict=True))
    if isinstance(a, celtypes.MapType) and isinstance(b, celtypes.MapType):
        if len(a) != len(b) or any(key not in b for key in a):
            return celtypes.BoolType(False)
        return _all_equal((a[key], b[key]) for key in a)
    return bool_eq(a, b)


def _all_equal(pairs: Iterator[tuple[Any, Any]] | Any) -> Any:
    for left, right in pairs:
        same = _equal(left, right)
        if not (is_bool(same) and same):
            return same
    return celtypes.BoolType(True)


def _not_equal(a: Any, b: Any) -> Any:
    same = _equal(a, b)
    return celtypes.BoolType(not same) if is_bool(same) else same


def _in(item: Any, container: Any) -> Any:
    numbers = isinstance(container, celtypes.ListType) and all(map(_is_number, container))
    if _is_number(item) and numbers:
        return celtypes.BoolType(any(_native(x) == _native(item) for x in container))
    return operator_in(item, container)


_FUNCTIONS: dict[str, Any] = {
    **{name: _errors_as_values(f) for name, f in _EXTENSIONS.items()},
    "_==_": _equal,
    "_!=_": _not_equal,
    "_in_": _in,
}
_FUNCTION_NAMES = _STANDARD_FUNCTIONS | frozenset(_EXTENSIONS)
