"""Guarded writes controllers make to an object they read from a cache: one status
condition, or the finalizer list.

Each patch carries the resourceVersion it was computed from, so a concurrent writer
(an agent reports status too; several controllers add finalizers) makes it fail with
409 and the reconcile runs again on fresh state instead of overwriting.
"""

from __future__ import annotations

import copy
from typing import Any

from pyocm.api import conditions
from pyocm.base.clock import Clock
from pyocm.kube.kinds import Kind
from pyocm.runtime.client import Api

Obj = dict[str, Any]


def _guard(obj: Obj) -> Obj:
    return {"resourceVersion": obj["metadata"]["resourceVersion"]}


async def set_condition(
    api: Api,
    kind: Kind,
    obj: Obj,
    *,
    clock: Clock,
    type: str,
    status: str,
    reason: str,
    message: str,
) -> Obj:
    """Set one condition on ``obj``; patch its status only if that changed anything."""
    found = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    changed = conditions.set_condition(
        found, type=type, status=status, reason=reason, message=message, now=clock.now()
    )
    if not changed:
        return obj
    meta = obj["metadata"]
    patch = {"metadata": _guard(obj), "status": {"conditions": found}}
    return await api.patch(
        kind, meta["name"], patch, namespace=meta.get("namespace"), subresource="status"
    )


async def add_finalizer(api: Api, kind: Kind, obj: Obj, finalizer: str) -> Obj:
    finalizers = list(obj["metadata"].get("finalizers") or [])
    if finalizer in finalizers:
        return obj
    return await _set_finalizers(api, kind, obj, [*finalizers, finalizer])


async def remove_finalizer(api: Api, kind: Kind, obj: Obj, finalizer: str) -> Obj:
    finalizers = list(obj["metadata"].get("finalizers") or [])
    if finalizer not in finalizers:
        return obj
    return await _set_finalizers(api, kind, obj, [f for f in finalizers if f != finalizer])


async def _set_finalizers(api: Api, kind: Kind, obj: Obj, finalizers: list[str]) -> Obj:
    meta = obj["metadata"]
    patch = {"metadata": {**_guard(obj), "finalizers": finalizers}}
    return await api.patch(kind, meta["name"], patch, namespace=meta.get("namespace"))
