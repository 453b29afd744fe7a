"""Server-side apply, and the ``managedFields`` bookkeeping that makes it safe to share
an object between appliers and updaters.

Each ``managedFields`` entry records, for one manager and operation, the set of fields it
last set. Applying a configuration:

1. finds conflicts: fields another manager owns whose value the configuration would
   change (``force`` takes them over instead of failing);
2. removes the fields this manager applied before and no longer applies, unless
   someone else owns them too;
3. merges the configuration over the object;
4. records the configuration's fields as this manager's ``Apply`` entry.

An object that has never been applied has no entries; its fields are attributed to
``before-first-apply``, as Kubernetes does, so a first apply cannot silently take over
values someone else wrote. Ordinary writes to an object that has entries move the
fields they change to the writer's ``Update`` entry.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from pyocm.kube import fieldsets
from pyocm.kube.fieldsets import Path, Structure

Obj = dict[str, Any]
BEFORE_FIRST_APPLY = "before-first-apply"
_IGNORED_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)


@dataclass(frozen=True)
class Conflict:
    manager: str
    api_version: str
    path: Path

    def field(self) -> str:
        return describe(self.path)


class ConflictError(Exception):
    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        count = len(conflicts)
        lines = "\n".join(
            f'- conflict with "{c.manager}" using {c.api_version}: {c.field()}' for c in conflicts
        )
        if count == 1:
            c = conflicts[0]
            message = (
                f'Apply failed with 1 conflict: conflict with "{c.manager}" using '
                f"{c.api_version}: {c.field()}"
            )
        else:
            message = f"Apply failed with {count} conflicts:\n{lines}"
        super().__init__(message)


@dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    time: str
    subresource: str
    paths: set[Path]

    def same(self, manager: str, operation: str, subresource: str) -> bool:
        return (self.manager, self.operation, self.subresource) == (
            manager,
            operation,
            subresource,
        )

    def to_json(self) -> Obj:
        out: Obj = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": fieldsets.to_fields_v1(self.paths),
        }
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def owned_paths(obj: Obj, structure: Structure, *, subresource: str = "") -> set[Path]:
    """The fields of ``obj`` a manager can own (identity and server fields excluded;
    a status subresource owns only ``status``, the main resource never does)."""
    body: Obj = {}
    for name, value in obj.items():
        if name in ("apiVersion", "kind"):
            continue
        if (name == "status") != (subresource == "status"):
            continue
        if name == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in _IGNORED_METADATA}
            if not value:
                continue
        body[name] = value
    return fieldsets.leaves(body, structure)


def entries_of(obj: Obj | None) -> list[Entry]:
    found = []
    for raw in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        if not isinstance(raw, dict):
            continue
        found.append(
            Entry(
                manager=str(raw.get("manager") or ""),
                operation=str(raw.get("operation") or "Update"),
                api_version=str(raw.get("apiVersion") or ""),
                time=str(raw.get("time") or ""),
                subresource=str(raw.get("subresource") or ""),
                paths=fieldsets.from_fields_v1(raw.get("fieldsV1") or {}),
            )
        )
    return found


def _store(obj: Obj, entries: Iterable[Entry]) -> None:
    kept = [e.to_json() for e in entries if e.paths]
    meta = obj.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def apply(
    live: Obj | None,
    config: Obj,
    *,
    manager: str,
    force: bool,
    structure: Structure,
    api_version: str,
    now: str,
    subresource: str = "",
) -> Obj:
    """The object after ``manager`` applies ``config`` to ``live`` (None: it is created).
    Raises :class:`ConflictError` unless ``force``."""
    current = copy.deepcopy(live) if live is not None else {}
    entries = entries_of(current)
    if live is not None and not entries:
        existing = owned_paths(current, structure, subresource=subresource)
        entries = [Entry(BEFORE_FIRST_APPLY, "Update", api_version, now, subresource, existing)]
    applied = owned_paths(config, structure, subresource=subresource)
    mine = next(
        (e for e in entries if e.same(manager, "Apply", subresource)),
        Entry(manager, "Apply", api_version, now, subresource, set()),
    )
    others = [e for e in entries if e is not mine]
    conflicts = _conflicts(current, config, applied, others, subresource)
    if conflicts and not force:
        raise ConflictError(conflicts)
    for conflict in conflicts:
        for entry in others:
            if entry.manager == conflict.manager:
                entry.paths.discard(conflict.path)
    shared = set().union(*(e.paths for e in others if e.subresource == subresource))
    unwanted = [p for p in mine.paths - applied if not _still_needed(p, shared | applied)]
    # A list item that goes goes whole: its fields are not removed one by one first
    # (the item would lose the key it is found by).
    items = {p[:-1] for p in unwanted if p[-1] == "."}
    for path in sorted(unwanted, key=len, reverse=True):
        inside = any(path[: len(i)] == i and path != (*i, ".") for i in items)
        if not inside:
            fieldsets.remove(current, path)
    merged = fieldsets.merge(current, _without_ignored(config), structure)
    mine.paths, mine.api_version, mine.time = applied, api_version, now
    _store(merged, [*others, mine])
    return dict(merged)


def _without_ignored(config: Obj) -> Obj:
    out = dict(config)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {
            k: v
            for k, v in meta.items()
            # resourceVersion stays: in an applied configuration it is a precondition.
            if k not in _IGNORED_METADATA or k in ("name", "namespace", "resourceVersion")
        }
    return out


def _still_needed(path: Path, owned: set[Path]) -> bool:
    """Someone owns this path, or something below it (a keyed item's fields, say)."""
    target = path[:-1] if path[-1] == "." else path
    return path in owned or any(p[: len(target)] == target and p != path for p in owned)


def _conflicts(
    live: Obj, config: Obj, applied: set[Path], others: list[Entry], subresource: str
) -> list[Conflict]:
    found = []
    for entry in others:
        if entry.subresource != subresource:
            continue
        for path in sorted(entry.paths & applied):
            if path[-1] == ".":
                continue
            if fieldsets.value_at(live, path) != fieldsets.value_at(config, path):
                found.append(Conflict(entry.manager, entry.api_version, path))
    return found


def track_update(
    old: Obj,
    new: Obj,
    *,
    manager: str,
    structure: Structure,
    api_version: str,
    now: str,
    subresource: str = "",
) -> None:
    """After an ordinary write by ``manager``: the fields it changed become its own.

    Only objects already carrying ``managedFields`` are tracked (an object never applied
    needs no bookkeeping; its first apply attributes it to ``before-first-apply``)."""
    entries = entries_of(old)
    if not entries:
        new.get("metadata", {}).pop("managedFields", None)
        return
    before = owned_paths(old, structure, subresource=subresource)
    after = owned_paths(new, structure, subresource=subresource)
    changed = {
        p
        for p in after
        if p not in before
        # An item's own marker changes only when the item appears, not with its fields.
        or (p[-1] != "." and fieldsets.value_at(old, p) != fieldsets.value_at(new, p))
    }
    gone = before - after
    mine = next(
        (e for e in entries if e.same(manager, "Update", subresource)),
        Entry(manager, "Update", api_version, now, subresource, set()),
    )
    for entry in entries:
        if entry is not mine and entry.subresource == subresource:
            entry.paths -= changed | gone
    mine.paths = (mine.paths - gone) | changed
    if changed:
        mine.time, mine.api_version = now, api_version
    _store(new, [*(e for e in entries if e is not mine), mine])


def describe(path: Path) -> str:
    """A path as kubectl shows conflicts: ``.spec.items[name="a"].value``."""
    out = []
    for element in path:
        if element.startswith("f:"):
            out.append("." + element[2:])
        elif element.startswith("k:"):
            keys = orjson.loads(element[2:])
            pairs = (f"{k}={orjson.dumps(v).decode()}" for k, v in keys.items())
            out.append("[" + ",".join(pairs) + "]")
        elif element.startswith("v:"):
            out.append(f"[={element[2:]}]")
    return "".join(out)
