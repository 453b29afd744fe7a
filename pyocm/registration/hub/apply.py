"""Make an object on the hub look as a controller wants it, touching only what it owns.

The controller's desired object names the fields it owns (everything but metadata, plus
labels, annotations and finalizers it lists). Other writers' labels, annotations and
finalizers are kept. An immutable ``roleRef`` that must change means delete and
recreate, as ``kubectl auth reconcile`` does.
"""

from __future__ import annotations

import copy
from typing import Any

from pyocm.kube.status import ApiError
from pyocm.runtime.cache import Store, key_of
from pyocm.runtime.client import Api
from pyocm.runtime.kinds import Kind

Obj = dict[str, Any]
_META_MAPS = ("labels", "annotations")


async def apply(api: Api, kind: Kind, desired: Obj, *, cache: Store | None = None) -> Obj:
    """Create ``desired`` or update the existing object to match it; return what is stored.

    With ``cache`` (an informer's store holding such objects), an object already as
    desired costs no request at all: controllers reconcile far more often than anything
    changes. A stale cache only costs the read that would have been made anyway."""
    meta = desired["metadata"]
    if cache is not None:
        cached = cache.get(key_of(desired))
        found = await (
            _create_new(api, kind, desired)
            if cached is None
            else _from_cache(api, kind, desired, cached)
        )
        if found is not None:
            return found
    try:
        existing = await api.get(kind, meta["name"], namespace=meta.get("namespace"))
    except ApiError as err:
        if err.code != 404:
            raise
        return await api.create(kind, desired)
    if "roleRef" in desired and existing.get("roleRef") != desired["roleRef"]:
        await api.delete(
            kind, meta["name"], namespace=meta.get("namespace"), uid=existing["metadata"]["uid"]
        )
        return await api.create(kind, desired)
    merged = merge(existing, desired)
    if merged == existing:
        return existing
    return await api.update(kind, merged)


async def _create_new(api: Api, kind: Kind, desired: Obj) -> Obj | None:
    """Create an object the cache has not seen: almost always new (a cluster joining),
    so creating first costs one request where reading first costs two. None when it
    may exist after all: 409 (created a moment ago, not yet back through the watch) or
    403 (a namespace being terminated refuses new objects, not the ones it holds)."""
    try:
        return await api.create(kind, desired)
    except ApiError as err:
        if err.code in (403, 409):
            return None
        raise


async def _from_cache(api: Api, kind: Kind, desired: Obj, cached: Obj) -> Obj | None:
    """The stored object if the cached copy settles it; None to fall back to reading it."""
    try:
        if "roleRef" in desired and cached.get("roleRef") != desired["roleRef"]:
            return None
        merged = merge(cached, desired)
        if merged == cached:
            return cached
        return await api.update(kind, merged)
    except ApiError as err:
        if err.code == 409:  # the cache was behind: read and decide again
            return None
        raise


def merge(existing: Obj, desired: Obj) -> Obj:
    """``existing`` with ``desired``'s owned fields laid over it."""
    merged = copy.deepcopy(existing)
    for field, value in desired.items():
        if field not in ("metadata", "status"):
            merged[field] = copy.deepcopy(value)
    meta, wanted = merged.setdefault("metadata", {}), desired.get("metadata") or {}
    for field in _META_MAPS:
        if wanted.get(field):
            meta[field] = {**(meta.get(field) or {}), **wanted[field]}
    missing = [f for f in wanted.get("finalizers") or [] if f not in (meta.get("finalizers") or [])]
    if missing:
        meta["finalizers"] = [*(meta.get("finalizers") or []), *missing]
    return merged


async def delete_if_present(
    api: Api, kind: Kind, name: str, *, namespace: str | None = None
) -> bool:
    """Delete; True if something was there to delete."""
    try:
        await api.delete(kind, name, namespace=namespace)
    except ApiError as err:
        if err.code == 404:
            return False
        raise
    return True
