"""Status feedback: the values ``manifestConfigs[].feedbackRules`` ask to sync back.

As upstream's ``statusfeedback.StatusReader`` and the status controller's
``getFeedbackValues``: a ``WellKnownStatus`` rule reads the paths of
:data:`~.wellknown.STATUS_PATHS` for the object's exact group/version/kind; a
``JSONPaths`` rule reads each path (kube JSONPath, missing keys allowed) after checking
its optional ``version``. A value is an ``Integer``, ``String`` or ``Boolean``; anything
else (a float, a list, an object, or several matches) is a ``JsonRaw`` Go-style JSON
string when the ``RawFeedbackJsonString`` feature is on (off by default, as upstream),
refused when longer than ``max_json_raw_length`` bytes, and an error otherwise. A path
matching nothing, or matching null, yields no value and no error. Errors do not stop the
other paths: values found are kept and the ``StatusFeedbackSynced`` condition says what
failed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfig as ManifestConfig,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfigFeedbackRule as FeedbackRule,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestStatusFeedbackValue as FeedbackValue,
)
from pyocm.kube.jsonpath import compile_path
from pyocm.work.agent.status.merge import NewCondition
from pyocm.work.agent.status.wellknown import STATUS_PATHS, StatusPath, gvk_of

Obj = dict[str, Any]

#: upstream's ``--max-json-raw-length`` default
MAX_JSON_RAW_LENGTH = 1024
FEEDBACK_SYNCED = "StatusFeedbackSynced"
WELL_KNOWN_STATUS = "WellKnownStatus"
JSON_PATHS = "JSONPaths"
_INT64 = range(-(2**63), 2**63)


def feedback(
    obj: Obj,
    config: ManifestConfig | None,
    *,
    max_json_raw_length: int = MAX_JSON_RAW_LENGTH,
    raw_json: bool = False,
) -> tuple[list[FeedbackValue], NewCondition]:
    """The values of every feedback rule of ``config`` and the ``StatusFeedbackSynced``
    condition: True ``NoStatusFeedbackSynced`` without rules, True ``StatusFeedbackSynced``
    when every path was read, False ``StatusFeedbackSyncFailed`` naming what failed."""
    rules = config.get("feedbackRules") if config is not None else None
    if not rules:
        return [], _synced("NoStatusFeedbackSynced")
    values: list[FeedbackValue] = []
    errors: list[str] = []
    for rule in rules:
        found, failed = values_by_rule(
            obj, rule, max_json_raw_length=max_json_raw_length, raw_json=raw_json
        )
        values.extend(found)
        errors.extend(failed)
    if errors:
        return values, {
            "type": FEEDBACK_SYNCED,
            "status": "False",
            "reason": "StatusFeedbackSyncFailed",
            "message": f"Sync status feedback failed with error {aggregate(errors)}",
        }
    return values, _synced("StatusFeedbackSynced")


def values_by_rule(
    obj: Obj,
    rule: FeedbackRule,
    *,
    max_json_raw_length: int = MAX_JSON_RAW_LENGTH,
    raw_json: bool = False,
) -> tuple[list[FeedbackValue], list[str]]:
    """``StatusReader.GetValuesByRule``: the values one rule reads, and its errors."""
    gvk = gvk_of(obj)
    paths: Sequence[StatusPath]
    errors: list[str] = []
    if rule.get("type") == WELL_KNOWN_STATUS:
        paths = STATUS_PATHS.get(gvk, ())
        if not paths:
            return [], [f"cannot find the wellknown statuses for resource with gvk {gvk}"]
    elif rule.get("type") == JSON_PATHS:
        paths = []
        for json_path in rule.get("jsonPaths") or []:
            version = json_path.get("version") or ""
            if version and version != gvk.version:
                name = json_path["name"]
                errors.append(
                    f"version set in the path {name} is not matched for the related resource"
                )
                continue
            paths.append(StatusPath(json_path["name"], json_path["path"]))
    else:  # upstream reads nothing for a type it does not know, and says nothing
        return [], []
    values: list[FeedbackValue] = []
    for status_path in paths:
        try:
            value = value_by_path(
                obj,
                status_path.name,
                status_path.path,
                max_json_raw_length=max_json_raw_length,
                raw_json=raw_json,
            )
        except FeedbackError as err:
            errors.append(str(err))
            continue
        if value is not None:
            values.append(value)
    return values, errors


class FeedbackError(Exception):
    """A path that could not be read; the text is upstream's."""


def value_by_path(
    obj: Obj,
    name: str,
    path: str,
    *,
    max_json_raw_length: int = MAX_JSON_RAW_LENGTH,
    raw_json: bool = False,
) -> FeedbackValue | None:
    """The value ``path`` reaches in ``obj`` named ``name``; None when it reaches nothing
    or null; :class:`FeedbackError` when it cannot be parsed or typed."""
    try:
        compiled = compile_path("{" + path + "}")
    except ValueError as err:
        raise FeedbackError(
            f"failed to parse json path {path} of {name} with error: {err}"
        ) from None
    found = compiled.find(obj)
    if not found:
        return None
    value: Any = found[0] if len(found) == 1 or not raw_json else found
    if value is None:
        return None
    if isinstance(value, bool):
        return {"name": name, "fieldValue": {"type": "Boolean", "boolean": value}}
    if isinstance(value, int) and value in _INT64:
        return {"name": name, "fieldValue": {"type": "Integer", "integer": value}}
    if isinstance(value, str):
        return {"name": name, "fieldValue": {"type": "String", "string": value}}
    if not raw_json:
        raise FeedbackError(f"the type {go_type(value)} of the value for {name} is not found")
    try:
        raw = go_json(value)
    except (RecursionError, TypeError) as err:
        detail = "nesting too deep" if isinstance(err, RecursionError) else str(err)
        raise FeedbackError(
            f"failed to parse the resource to json string for name {name}: {detail}"
        ) from None
    if len(raw.encode()) > max_json_raw_length:
        raise FeedbackError(
            f"the length of returned json raw string for name {name} is larger than the "
            f"maximum length {max_json_raw_length}"
        )
    return {"name": name, "fieldValue": {"type": "JsonRaw", "jsonRaw": raw}}


def aggregate(errors: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one error as itself, several deduplicated
    in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def go_type(value: Any) -> str:
    """The Go type of a decoded JSON value, as ``reflect.TypeOf`` prints it."""
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "float64"  # a fraction, or an integer past int64 (decoded as a float, as Go does)


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value: sorted keys, no spaces, ``<``, ``>``,
    ``&``, U+2028 and U+2029 escaped, floats in Go's shortest form."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value in _INT64 else _go_float(float(value))
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{_go_string(k)}:{go_json(v)}" for k, v in items) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _go_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    for char, escape in _HTML_ESCAPES:
        encoded = encoded.replace(char, escape)
    return encoded


_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def _go_float(number: float) -> str:
    if number != number or number in (float("inf"), float("-inf")):
        raise TypeError(f"json: unsupported value: {number}")
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(number)  # shortest digits in exponent form, as Go's 'e' with -1
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
        return f"{mantissa}e{sign}{digits.zfill(2) if sign == '+' else digits}"
    return format(Decimal(repr(number)).normalize(), "f")


def _synced(reason: str) -> NewCondition:
    return {"type": FEEDBACK_SYNCED, "status": "True", "reason": reason, "message": ""}
