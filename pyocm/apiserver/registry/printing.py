"""Server-side printing: the columns ``kubectl get`` shows, and their cells.

A resource's :class:`Column` list turns objects into the rows of a ``meta.k8s.io/v1``
Table. Custom resources get ``Name`` plus their ``additionalPrinterColumns`` (or ``Age``
when they declare none), cells read with JSONPath and typed as apiextensions does;
built-in kinds have small printers of their own (builtin/printers.py); anything else
shows ``Name`` and ``Created At``, like kube-apiserver's default table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from pyocm.apiserver.registry.strategy import meta
from pyocm.kube import jsonpath, timefmt

Obj = dict[str, Any]
Cell = Callable[[Obj, datetime], Any]
NAME_DESCRIPTION = "The object's name, unique within its namespace (or cluster-wide)."


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    cell: Cell
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> Obj:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def human_duration(seconds: float) -> str:
    """apimachinery's HumanDuration: ``45s``, ``5m10s``, ``3h20m``, ``4d2h``, ``2y30d``."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


def age(value: Any, now: datetime) -> str | None:
    """A ``date`` cell: the time since ``value`` (an RFC 3339 string)."""
    if value is None:
        return None
    if not isinstance(value, str):
        return "<invalid>"
    try:
        moment = timefmt.parse_time(value)
    except ValueError:
        return "<invalid>"
    return human_duration((now - moment).total_seconds())


NAME = Column(
    "Name",
    "string",
    lambda obj, _: meta(obj).get("name", ""),
    format="name",
    description=NAME_DESCRIPTION,
)
AGE = Column(
    "Age",
    "date",
    lambda obj, now: age(meta(obj).get("creationTimestamp"), now),
    description="Time since the object was created.",
)
#: kube-apiserver's default table shows the creation time itself, not an age.
CREATED_AT = Column(
    "Created At",
    "date",
    lambda obj, _: meta(obj).get("creationTimestamp"),
    description="When the object was created.",
)
DEFAULT_COLUMNS = (NAME, CREATED_AT)


def custom_resource_columns(printer_columns: Iterable[Mapping[str, Any]]) -> tuple[Column, ...]:
    """``Name`` and a CRD version's ``additionalPrinterColumns`` (``Age`` if it has none)."""
    declared = list(printer_columns)
    if not declared:
        return (NAME, AGE)
    return (NAME, *(_custom(c) for c in declared))


def _custom(spec: Mapping[str, Any]) -> Column:
    kind = str(spec.get("type") or "string")
    try:
        path: jsonpath.JSONPath | None = jsonpath.compile_path(str(spec.get("jsonPath") or ""))
    except ValueError:
        path = None  # CRD validation refuses such paths; one stored before shows nothing

    def cell(obj: Obj, now: datetime) -> Any:
        found = path.find(obj) if path is not None else []
        return _typed(kind, found[0], now) if found else None

    return Column(
        str(spec.get("name") or ""),
        kind,
        cell,
        format=str(spec.get("format") or ""),
        description=str(spec.get("description") or ""),
        priority=int(spec.get("priority") or 0),
    )


def _typed(kind: str, value: Any, now: datetime) -> Any:
    """As apiextensions' table convertor types a JSONPath result."""
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return str(value)
        return orjson.dumps(value).decode()
    if kind == "integer":
        return (
            int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        )
    if kind == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        return age(value, now)
    return None


def table(
    columns: Iterable[Column],
    items: Iterable[Obj],
    *,
    include_object: str,
    revision: str | None,
    now: datetime | None = None,
) -> Obj:
    """A ``meta.k8s.io/v1`` Table of ``items`` (``include_object``: None, Metadata, Object)."""
    chosen = tuple(columns) or DEFAULT_COLUMNS
    moment = now or datetime.now(UTC)
    rows = []
    for obj in items:
        row: Obj = {"cells": [column.cell(obj, moment) for column in chosen]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta(obj),
            }
        rows.append(row)
    metadata = {"resourceVersion": revision} if revision else {}
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [column.definition() for column in chosen],
        "rows": rows,
    }
