"""Cell helpers the workload printers share: safe reads of nested fields, and the
label and selector texts kube's printers show."""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.printing import Column
from pyocm.kube import selectors

Obj = dict[str, Any]


def get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def dicts(obj: Any, *path: str) -> list[Obj]:
    found = get(obj, *path)
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def int_at(obj: Any, *path: str) -> int:
    found = get(obj, *path)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def column(name: str, kind: str, cell: Any, *, priority: int = 0, description: str = "") -> Column:
    return Column(name, kind, cell, priority=priority, description=description)


def format_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for none or an empty one."""
    if not isinstance(selector, dict):
        return "<none>"
    try:
        text = str(selectors.from_label_selector(selector))
    except selectors.SelectorError:
        return "<error>"
    return text or "<none>"


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))
