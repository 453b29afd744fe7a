"""The part of Kubernetes JSONPath that printer columns use.

CRDs' ``additionalPrinterColumns`` name their cells with paths such as
``.status.conditions[?(@.type=="ManagedClusterJoined")].status`` or
``.spec.managedClusterClientConfigs[*].url``. Supported: fields (``.a``, ``['a.b']``),
indexes (``[0]``, ``[-1]``), wildcards (``[*]``, ``.*``) and filters comparing a
relative path with a literal (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``) or testing
that it exists (``[?(@.a)]``). Anything else is refused when the path is compiled, with
the position of the problem, so a bad column is reported when its CRD is stored.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_NAME = re.compile(r"[A-Za-z0-9_\-/$]+")
_FILTER = re.compile(
    r"""\[\?\(\s*@((?:\.[A-Za-z0-9_\-/$]+|\['[^']*'\]|\["[^"]*"\])+)\s*
        (?:(==|!=|<=|>=|<|>)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false))?
        \s*\)\]""",
    re.VERBOSE,
)
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
Step = Callable[[Any], Iterator[Any]]


@dataclass(frozen=True)
class JSONPath:
    text: str
    steps: tuple[Step, ...]

    def find(self, obj: Any) -> list[Any]:
        """Every value the path reaches in ``obj``, in document order."""
        values = [obj]
        for step in self.steps:
            values = [found for value in values for found in step(value)]
        return values

    def first(self, obj: Any) -> Any:
        """The first value reached, or None (what a printer column shows)."""
        found = self.find(obj)
        return found[0] if found else None


def compile_path(text: str) -> JSONPath:
    """Compile ``text`` (``{...}`` braces optional); ValueError says what is wrong and where."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    if not body:
        raise ValueError("empty JSONPath")
    return JSONPath(text=text, steps=tuple(_parse(body)))


def _parse(body: str) -> Iterator[Step]:
    pos = 0
    while pos < len(body):
        char = body[pos]
        if body.startswith("..", pos):
            raise ValueError(f"recursive descent (..) at {pos} is not supported")
        if char == ".":
            pos += 1
            if pos < len(body) and body[pos] == "*":
                yield _every
                pos += 1
                continue
            match = _NAME.match(body, pos)
            if match is None:
                raise ValueError(f"a field name was expected at {pos} in {body!r}")
            yield _field(match.group())
            pos = match.end()
        elif char == "[":
            step, pos = _bracket(body, pos)
            yield step
        else:
            raise ValueError(f"unexpected {char!r} at {pos} in {body!r}")


def _bracket(body: str, pos: int) -> tuple[Step, int]:
    end = body.find("]", pos)
    if body.startswith("[?(", pos):
        match = _FILTER.match(body, pos)
        if match is None:
            raise ValueError(f'a filter such as [?(@.type=="X")] was expected at {pos}')
        return _filter(match.group(1), match.group(2), match.group(3)), match.end()
    if end < 0:
        raise ValueError(f"unclosed [ at {pos} in {body!r}")
    inner = body[pos + 1 : end].strip()
    if inner == "*":
        return _every, end + 1
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _field(inner[1:-1]), end + 1
    if re.fullmatch(r"-?\d+", inner):
        return _index(int(inner)), end + 1
    raise ValueError(f"[{inner}] at {pos} is not supported (use [n], [*], ['name'] or a filter)")


def _field(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]

    return step


def _index(number: int) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list) and -len(value) <= number < len(value):
            yield value[number]

    return step


def _every(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        yield from value
    elif isinstance(value, dict):
        yield from value.values()


def _filter(relative: str, op: str | None, literal: str | None) -> Step:
    path = compile_path(relative)
    expected = _literal(literal) if literal is not None else None
    compare = _OPS[op] if op else None

    def step(value: Any) -> Iterator[Any]:
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for item in items:
            found = path.find(item)
            if compare is None:
                if found:
                    yield item
                continue
            for candidate in found:
                try:
                    if compare(candidate, expected):
                        yield item
                        break
                except TypeError:  # a string compared with a number: not a match
                    continue

    return step


def _literal(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return float(text) if "." in text else int(text)
