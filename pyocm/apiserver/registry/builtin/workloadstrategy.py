"""One strategy shape for the workload and service kinds: defaults, validation, the
status subresource and generation tracking, configured per kind.

Every write is defaulted first (kube defaults each object it decodes), so a field a
patch removes comes back with its default. Kinds with a ``status`` subresource start with
kube's initial status, whose Go zero-valued counters are always present (a ReplicaSet's
``status.replicas: 0``), and keep them through every status write. Status writes are
taken as given: no status validation runs (a simulated controller writes them here).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from pyocm.apiserver.registry.strategy import STATUS, Context, FieldGetter, Obj, Strategy
from pyocm.kube import names
from pyocm.kube.status import FieldError

Rule = Callable[[Obj], list[FieldError]]
UpdateRule = Callable[[Obj, Obj], list[FieldError]]


def no_update_rules(obj: Obj, old: Obj) -> list[FieldError]:
    return []


class WorkloadStrategy(Strategy):
    """A kind given by its rules.

    ``default`` fills kube's defaults in place; ``validate`` checks a whole object (on
    create and update), ``validate_update`` what may not change, ``validate_new`` what
    only a new object must meet; ``initial_status`` is
    the status a new object gets (None: the kind has no status subresource).
    """

    def __init__(
        self,
        *,
        default: Callable[[Obj], None],
        validate: Rule,
        validate_update: UpdateRule = no_update_rules,
        validate_new: Rule | None = None,
        initial_status: Mapping[str, Any] | None = None,
        generation: bool = True,
        name_rule: Callable[[str], list[str]] = names.is_dns1123_subdomain,
        fields: Mapping[str, FieldGetter] | None = None,
    ) -> None:
        self._default = default
        self._validate = validate
        self._validate_update = validate_update
        self._validate_new = validate_new
        self._initial_status = initial_status
        self._name_rule = name_rule
        self._fields = dict(fields or {})
        self.subresources = (STATUS,) if initial_status is not None else ()
        self.tracks_generation = generation
        super().__init__()

    def field_getters(self) -> Mapping[str, FieldGetter]:
        return self._fields

    def name_validator(self, name: str) -> list[str]:
        return self._name_rule(name)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        self._default(obj)
        if self._initial_status is not None:
            obj["status"] = copy.deepcopy(dict(self._initial_status))

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        self._default(obj)
        super().prepare_for_update(obj, old, ctx)
        self._zero_counters(obj)

    def _zero_counters(self, obj: Obj) -> None:
        """Go writes non-pointer status fields even at zero."""
        if self._initial_status is None:
            return
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        for key, value in self._initial_status.items():
            status.setdefault(key, copy.deepcopy(value))

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        extra = self._validate_new(obj) if self._validate_new is not None else []
        return self._validate(obj) + extra

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        if ctx.subresource == STATUS:
            return []
        return self._validate(obj) + self._validate_update(obj, old)


def field(*path: str) -> FieldGetter:
    """A field selector's getter: the value at ``path`` as text (booleans as Go prints
    them, absent as "")."""

    def get(obj: Obj) -> str:
        value: Any = obj
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value)

    return get
