"""Controllers read objects with ill-typed fields as if those fields were absent, and say
so once per object revision: one log line and, where the controller records events, one
Warning event on the object (see :mod:`pyocm.api.shapes` for what counts as ill-typed).

Upstream's typed clients cannot decode such objects at all, so there is no upstream
condition to set; an Event is how a controller reports what it cannot act on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from pyocm.api import shapes
from pyocm.runtime.events import Recorder

Obj = dict[str, Any]
log = logging.getLogger(__name__)
EVENT_REASON = "MalformedFields"
#: Objects remembered as reported; past this, the oldest are forgotten (and, if still
#: malformed at a later revision, reported again).
REMEMBERED = 10_000

#: (kind, namespace, name) → the resourceVersion last reported, shared by every reader
#: in the process, so several controllers reading one object report it once.
_reported: dict[tuple[str, str, str], str] = {}


class Described(Protocol):
    """A kind and its schema, as an API definition (``pyocm.api``'s descriptors) has them."""

    @property
    def kind(self) -> str: ...

    @property
    def schema(self) -> Mapping[str, Any]: ...


class TypedReader:
    """Reads objects of one kind through its schema."""

    @classmethod
    def of(cls, described: Described, *, recorder: Recorder | None = None) -> TypedReader:
        """A reader of the kind ``described`` defines, e.g. ``cluster_v1.MANAGED_CLUSTER``."""
        return cls(described.kind, described.schema, recorder=recorder)

    def __init__(
        self, kind: str, schema: Mapping[str, Any], *, recorder: Recorder | None = None
    ) -> None:
        self.kind = kind
        self.schema = schema
        self.recorder = recorder

    def clean(self, obj: Obj) -> Obj:
        """``obj`` without its ill-typed fields, logged the first time a revision has any."""
        typed = shapes.well_typed(obj, self.schema)
        if typed.problems:
            self._first_time(obj, typed.problems)
        return typed.value

    async def read(self, obj: Obj | None) -> Obj | None:
        """As :meth:`clean`, and the first report also records a Warning event."""
        if obj is None:
            return None
        typed = shapes.well_typed(obj, self.schema)
        if typed.problems and self._first_time(obj, typed.problems) and self.recorder:
            await self.recorder.event(
                obj,
                type="Warning",
                reason=EVENT_REASON,
                note=f"{self.kind} has fields of the wrong type, read as absent: "
                + "; ".join(typed.problems),
            )
        return typed.value

    def _first_time(self, obj: Obj, problems: list[str]) -> bool:
        return first_report(self.kind, obj, problems)


def first_report(kind: str, obj: Mapping[str, Any], problems: list[str]) -> bool:
    """Log ``problems`` of ``obj``, a ``kind``, unless this revision of it was reported
    before; whether it was logged now."""
    meta = shapes.mapping(obj.get("metadata"))
    key = (kind, str(meta.get("namespace") or ""), str(meta.get("name")))
    revision = str(meta.get("resourceVersion"))
    if _reported.get(key) == revision:
        return False
    _reported.pop(key, None)  # re-inserted last: the dict's order is the age
    _reported[key] = revision
    if len(_reported) > REMEMBERED:
        del _reported[next(iter(_reported))]
    # Paths and types only, never values: another writer's fields may hold anything.
    log.warning(
        "%s %s at resourceVersion %s has fields of the wrong type, read as absent: %s",
        kind,
        "/".join(k for k in key[1:] if k),
        revision,
        "; ".join(problems),
    )
    return True
