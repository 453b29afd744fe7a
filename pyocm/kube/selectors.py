"""Label and field selectors, parsed, matched and printed as apimachinery does.

Label selectors take the whole ``labels.Parse`` grammar (``k=v``, ``k==v``, ``k!=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, ``k>1``, ``k<1``; comma means AND;
blanks anywhere between tokens) and the ``metav1.LabelSelector`` object form. Field
selectors take ``fields.ParseSelector``'s ``=``, ``==`` and ``!=`` terms with backslash
escapes in values. Syntax errors raise :class:`SelectorError` with Kubernetes' wording,
which the server returns to clients inside a 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pyocm.kube import names, status


class SelectorError(ValueError):
    """A selector that does not parse or names invalid keys or values."""


class Operator(Enum):
    """``selection.Operator``; the value is how apimachinery spells it."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_SET_OPS = (Operator.IN, Operator.NOT_IN)
_EXACT_OPS = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
_ORDER_OPS = (Operator.GREATER_THAN, Operator.LESS_THAN)
_PRINTED = {
    Operator.IN: " in ", Operator.NOT_IN: " notin ", Operator.EQUALS: "=",
    Operator.DOUBLE_EQUALS: "==", Operator.NOT_EQUALS: "!=",
    Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<",
}  # fmt: skip
_INT64 = re.compile(r"[+-]?[0-9]+")
_COUNT_RULES: tuple[tuple[tuple[Operator, ...], Callable[[int], bool], str], ...] = (
    (_SET_OPS, lambda n: n > 0, "for 'in', 'notin' operators, values set can't be empty"),
    (_EXACT_OPS, lambda n: n == 1, "exact-match compatibility requires one single value"),
    (
        (Operator.EXISTS, Operator.DOES_NOT_EXIST),
        lambda n: n == 0,
        "values set must be empty for exists and does not exist",
    ),
    (_ORDER_OPS, lambda n: n == 1, "for 'Gt', 'Lt' operators, exactly one value is required"),
)


@dataclass(frozen=True)
class Requirement:
    """One condition on one label key; build it with :func:`new_requirement`."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, present = self.operator, self.key in labels
        if op is Operator.EXISTS:
            return present
        if op is Operator.DOES_NOT_EXIST:
            return not present
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return present and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return not present or labels[self.key] not in self.values
        have, want = _int64(labels.get(self.key)), _int64(self.values[0] if self.values else None)
        if have is None or want is None or len(self.values) != 1:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        shown = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in _SET_OPS:
            shown = f"({shown})"
        return f"{self.key}{_PRINTED[self.operator]}{shown}"


@dataclass(frozen=True)
class LabelSelector:
    """Requirements ANDed together. ``nothing`` is the selector that matches no object,
    which ``metav1.LabelSelector`` gives for an absent (nil) selector."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """True for the selector that matches everything."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def new_requirement(key: str, operator: Operator, values: Sequence[str] = ()) -> Requirement:
    """``labels.NewRequirement``: check the key, the value count and every value."""
    errors = []
    if key_problems := names.is_qualified_name(key):
        errors.append(_invalid_text("key", json.dumps(key), "; ".join(key_problems)))
    for operators, allowed, detail in _COUNT_RULES:
        if operator in operators and not allowed(len(values)):
            errors.append(_invalid_text("values", _go_strings(values), detail))
    if operator in _ORDER_OPS:
        detail = "for 'Gt', 'Lt' operators, the value must be an integer"
        errors.extend(
            _invalid_text(f"values[{i}]", json.dumps(v), detail)
            for i, v in enumerate(values)
            if _int64(v) is None
        )
    for i, value in enumerate(values):
        if problems := names.is_valid_label_value(value):
            errors.append(
                _invalid_text(f"values[{i}][{key}]", json.dumps(value), "; ".join(problems))
            )
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse ``labelSelector`` text; the empty string selects everything."""
    requirements = _LabelParser(text).parse()
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


def from_label_selector(obj: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: ``None`` selects nothing, ``{}`` everything.

    Raises :class:`SelectorError` for an unknown operator or invalid keys and values.
    """
    if obj is None:
        return NOTHING
    match_labels = obj.get("matchLabels") or {}
    expressions = obj.get("matchExpressions") or []
    requirements = [
        new_requirement(k, Operator.EQUALS, [v]) for k, v in sorted(match_labels.items())
    ]
    for expr in expressions:
        operator = _EXPRESSION_OPS.get(expr.get("operator"))
        if operator is None:
            raise SelectorError(
                f"{json.dumps(expr.get('operator', ''))} is not a valid label selector operator"
            )
        requirements.append(
            new_requirement(expr.get("key", ""), operator, list(expr.get("values") or []))
        )
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


_EXPRESSION_OPS = {
    "In": Operator.IN, "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS, "DoesNotExist": Operator.DOES_NOT_EXIST,
}  # fmt: skip


def validate_label_selector(
    obj: Mapping[str, Any] | None, field_path: str
) -> list[status.FieldError]:
    """``metav1validation.ValidateLabelSelector``: the 422 causes for a selector object."""
    if obj is None:
        return []
    errors = validate_labels(obj.get("matchLabels") or {}, f"{field_path}.matchLabels")
    for i, expr in enumerate(obj.get("matchExpressions") or []):
        errors.extend(_validate_expression(expr, f"{field_path}.matchExpressions[{i}]"))
    return errors


def validate_labels(labels: Mapping[str, str], field_path: str) -> list[status.FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value."""
    errors: list[status.FieldError] = []
    for key in sorted(labels):
        errors.extend(status.invalid(field_path, key, msg) for msg in names.is_qualified_name(key))
        value = labels[key]
        errors.extend(
            status.invalid(field_path, value, msg) for msg in names.is_valid_label_value(value)
        )
    return errors


def _validate_expression(expr: Mapping[str, Any], path: str) -> list[status.FieldError]:
    operator, values = expr.get("operator"), list(expr.get("values") or [])
    errors = []
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(
                status.required(
                    f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(
                status.forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errors.append(status.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = expr.get("key", "")
    errors.extend(status.invalid(f"{path}.key", key, msg) for msg in names.is_qualified_name(key))
    for i, value in enumerate(values):
        errors.extend(
            status.invalid(f"{path}.values[{i}]", value, msg)
            for msg in names.is_valid_label_value(value)
        )
    return errors


# Token kinds are the keyword itself, or one of these two for everything else.
_END, _IDENT = "<end>", "<identifier>"
_KEYWORDS = frozenset({"(", ")", ",", "!", "=", "==", "!=", ">", "<", "in", "notin"})
_BINARY = {
    "in": Operator.IN, "notin": Operator.NOT_IN, "=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS,
    "!=": Operator.NOT_EQUALS, ">": Operator.GREATER_THAN, "<": Operator.LESS_THAN,
}  # fmt: skip
_SPECIAL = frozenset("=!(),><")
_BLANK = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[str, str]]:
    """(kind, literal) tokens ending with ``_END``; ``in``/``notin`` are always keywords."""
    tokens, pos = [], 0
    while True:
        while pos < len(text) and text[pos] in _BLANK:
            pos += 1
        if pos >= len(text):
            tokens.append((_END, ""))
            return tokens
        start = pos
        if text[pos] in _SPECIAL:
            # The longest operator spelled by the next symbols: "!=" and "==" beat "!" and "=".
            pos += 2 if text[pos : pos + 2] in _KEYWORDS else 1
        else:
            while pos < len(text) and text[pos] not in _SPECIAL and text[pos] not in _BLANK:
                pos += 1
        literal = text[start:pos]
        tokens.append((literal if literal in _KEYWORDS else _IDENT, literal))


class _LabelParser:
    """The recursive-descent parser of ``labels.Parse``, token for token, so that error
    messages and odd corners (``k in ()``, ``k=``, ``in`` as a key) behave the same."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.position = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        kind, literal = self.tokens[self.position]
        # In value position, "in" and "notin" are plain words.
        return (_IDENT if values and kind in ("in", "notin") else kind), literal

    def take(self, values: bool = True) -> tuple[str, str]:
        found = self.peek(values)
        self.position += 1
        return found

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            kind, literal = self.peek()
            if kind == _END:
                return requirements
            if kind not in (_IDENT, "!"):
                raise SelectorError(
                    f"found '{literal}', expected: !, identifier, or 'end of string'"
                )
            try:
                requirements.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            kind, literal = self.take()
            if kind == _END:
                return requirements
            if kind != ",":
                raise SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self.peek()
            if kind not in (_IDENT, "!"):
                raise SelectorError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        kind, key = self.take()
        negated = kind == "!"
        if negated:
            kind, key = self.take()
        if kind != _IDENT:
            raise SelectorError(f"found '{key}', expected: identifier")
        if problems := names.is_qualified_name(key):
            raise SelectorError(_invalid_text("<nil>", json.dumps(key), "; ".join(problems)))
        if negated:
            return new_requirement(key, Operator.DOES_NOT_EXIST)
        if self.peek()[0] in (_END, ","):
            return new_requirement(key, Operator.EXISTS)
        kind, literal = self.take(values=False)
        if kind not in _BINARY:
            raise SelectorError(f"found '{literal}', expected: '=', '!=', '==', 'in', notin'")
        operator = _BINARY[kind]
        values = self.value_set() if operator in _SET_OPS else self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_END, ","):
            return {""}
        kind, literal = self.take()
        if kind != _IDENT:
            raise SelectorError(f"found '{literal}', expected: identifier")
        return {literal}

    def value_set(self) -> set[str]:
        kind, literal = self.take()
        if kind != "(":
            raise SelectorError(f"found '{literal}' expected: '('")
        kind, literal = self.peek()
        if kind == ")":
            self.take()
            return {""}
        if kind not in (_IDENT, ","):
            raise SelectorError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.take()[0] != ")":
            raise SelectorError(f"found '{literal}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        """A comma list where empty items stand for the empty value: ``(,a)``, ``(a,,b)``."""
        values: set[str] = set()
        while True:
            kind, literal = self.take()
            if kind == _IDENT:
                values.add(literal)
                following, shown = self.peek()
                if following == ")":
                    return values
                if following != ",":
                    raise SelectorError(f"found '{shown}', expected: ',' or ')'")
            elif kind == ",":
                following = self.peek()[0]
                if not values or following in (")", ","):
                    values.add("")
                if following == ")":
                    return values
                if following == ",":
                    self.take()
            else:
                raise SelectorError(f"found '{literal}', expected: ',', or identifier")


def _int64(text: str | None) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: ASCII digits with an optional sign, in range."""
    if text is None or not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _go_strings(values: Sequence[str]) -> str:
    """A string slice the way Go's ``%#v`` prints it inside field errors."""
    return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"


def _invalid_text(path: str, rendered: str, detail: str) -> str:
    return f"{path}: Invalid value: {rendered}: {detail}"


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.Aggregate``: one message alone, several bracketed, duplicates dropped."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


@dataclass(frozen=True)
class FieldRequirement:
    """``field=value`` or, when ``negated``, ``field!=value``."""

    field: str
    value: str
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.field}{'!=' if self.negated else '='}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """Field terms ANDed together; a field an object lacks reads as the empty string."""

    terms: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    def matches(self, fields: Mapping[str, str] | Callable[[str], str | None]) -> bool:
        get = fields.get if isinstance(fields, Mapping) else fields
        return all(
            (get(t.field) or "") != t.value if t.negated else (get(t.field) or "") == t.value
            for t in self.terms
        )

    def fields(self) -> tuple[str, ...]:
        """The field names used, in order, so the server can refuse unsupported ones."""
        return tuple(dict.fromkeys(t.field for t in self.terms))

    def pinned_value(self, field: str) -> str | None:
        """The value ``field`` must equal, if a term requires one (``RequiresExactMatch``).

        RBAC uses ``pinned_value("metadata.name")`` to authorise list and watch by name.
        """
        return next((t.value for t in self.terms if t.field == field and not t.negated), None)

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse ``fieldSelector`` text as ``fields.ParseSelector``; terms come out sorted."""
    terms = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, operator, raw = split
        terms.append(FieldRequirement(field, unescape_field_value(raw), negated=operator == "!="))
    return FieldSelector(tuple(terms))


def escape_field_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so a value survives inside a field selector."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(text: str) -> str:
    """Undo :func:`escape_field_value`; bare ``,``/``=`` and unknown escapes are errors."""
    out, escaped = [], False
    for char in text:
        if escaped:
            if char not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            # Go prints the rune's code point here (%v of a rune).
            raise SelectorError(
                f"invalid field selector: unescaped character in value: {ord(char)}"
            )
        else:
            out.append(char)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped; escapes stay for :func:`unescape_field_value`."""
    if not text:
        return []
    terms, start, escaped = [], 0, False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, raw value) at the first operator; fields cannot contain one."""
    for i in range(len(term)):
        for operator in ("!=", "==", "="):
            if term.startswith(operator, i):
                return term[:i], operator, term[i + len(operator) :]
    return None
