"""Small validation rules the workload kinds share, with apimachinery's messages:
non-negative numbers, immutable fields, int-or-percent values, and the check that a
workload's selector selects its own pod template."""

from __future__ import annotations

import re
from typing import Any

from pyocm.kube import names, selectors
from pyocm.kube.status import FieldError, invalid, required

IMMUTABLE = "field is immutable"
_PERCENT_FMT = "[0-9]+%"
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"


def nonnegative(path: str, value: Any) -> list[FieldError]:
    """``ValidateNonnegativeField`` (absent values are not checked)."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def immutable(path: str, new: Any, old: Any) -> list[FieldError]:
    """``ValidateImmutableField``: the new value is what the message shows."""
    return [] if new == old else [invalid(path, new, IMMUTABLE)]


def percent(value: Any) -> int | None:
    """The number of a valid ``N%`` string, else None."""
    if isinstance(value, str) and re.fullmatch(_PERCENT_FMT, value):
        return int(value[:-1])
    return None


def int_or_percent_value(value: Any) -> int:
    """``getIntOrPercentValue``: the percentage or the integer (0 for anything else)."""
    found = percent(value)
    if found is not None:
        return found
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def positive_int_or_percent(path: str, value: Any) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        if percent(value) is None:
            message = names.regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")
            return [invalid(path, value, message)]
        return []
    return nonnegative(path, value)


def not_over_100_percent(path: str, value: Any) -> list[FieldError]:
    found = percent(value)
    if found is None or found <= 100:
        return []
    return [invalid(path, value, "must not be greater than 100%")]


def template_labels(spec: dict[str, Any]) -> Any:
    """``spec.template.metadata.labels`` as stored (None when absent)."""
    template = spec.get("template")
    metadata = template.get("metadata") if isinstance(template, dict) else None
    return metadata.get("labels") if isinstance(metadata, dict) else None


def selector_errors(spec: dict[str, Any], path: str, kind: str) -> list[FieldError]:
    """A required, valid, non-empty ``spec.selector`` (``empty selector is invalid for
    <kind>``), as Deployments, ReplicaSets and StatefulSets demand."""
    selector = spec.get("selector")
    if selector is None:
        return [required(f"{path}.selector")]
    errs = selectors.validate_label_selector(selector, f"{path}.selector")
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        message = f"empty selector is invalid for {kind}"
        errs.append(invalid(f"{path}.selector", selector, message))
    return errs


def template_match_errors(
    spec: dict[str, Any], path: str, *, invalid_message: str = "invalid label selector"
) -> tuple[bool, list[FieldError]]:
    """Whether the selector parsed, and the error when it does not select the template's
    labels. A missing selector selects nothing, so it never matches (kube reports both
    the missing selector and the mismatch)."""
    labels = template_labels(spec)
    try:
        parsed = selectors.from_label_selector(spec.get("selector"))
    except selectors.SelectorError:
        return False, [invalid(f"{path}.selector", spec.get("selector"), invalid_message)]
    if parsed.empty or parsed.matches(labels if isinstance(labels, dict) else {}):
        return True, []
    message = "`selector` does not match template `labels`"
    return True, [invalid(f"{path}.template.metadata.labels", labels, message)]
