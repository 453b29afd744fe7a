"""Validation of ``metav1.LabelSelector`` values embedded in built-in objects.

ClusterRole ``aggregationRule.clusterRoleSelectors`` and the selectors of access reviews
carry label selectors; Kubernetes checks them with one shared routine whose messages and
field paths are reproduced here.
"""

from __future__ import annotations

from typing import Any

from pyocm.kube import names
from pyocm.kube.status import FieldError, forbidden, invalid, required

_WITH_VALUES = ("In", "NotIn")
_WITHOUT_VALUES = ("Exists", "DoesNotExist")


def validate_selector(selector: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector``: ``matchLabels`` keys and values, then each expression."""
    if not isinstance(selector, dict):
        return []
    errs = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        errs += validate_requirement(expr, f"{path}.matchExpressions[{i}]")
    return errs


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """Every error is reported at ``path`` itself, not at the key, as Kubernetes does."""
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs += [invalid(path, key, msg) for msg in names.is_qualified_name(str(key))]
        errs += [invalid(path, value, msg) for msg in names.is_valid_label_value(str(value))]
    return errs


def validate_requirement(
    expr: Any, path: str, *, allow_unknown_operator: bool = False
) -> list[FieldError]:
    """``ValidateLabelSelectorRequirement``: operator against values, key, values."""
    if not isinstance(expr, dict):
        return [invalid(path, expr, "must be an object")]
    operator = expr.get("operator") or ""
    values = expr.get("values") or []
    key = str(expr.get("key") or "")
    errs: list[FieldError] = []
    if operator in _WITH_VALUES and not values:
        errs.append(
            required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        )
    elif operator in _WITHOUT_VALUES and values:
        errs.append(
            forbidden(
                f"{path}.values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    elif operator not in _WITH_VALUES + _WITHOUT_VALUES and not allow_unknown_operator:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errs += [invalid(f"{path}.key", key, msg) for msg in names.is_qualified_name(key)]
    for i, value in enumerate(values):
        errs += [
            invalid(f"{path}.values[{i}]", value, msg)
            for msg in names.is_valid_label_value(str(value))
        ]
    return errs
