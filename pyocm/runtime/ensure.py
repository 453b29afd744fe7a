"""Make an object look as a controller wants it, touching only the fields it owns.

The desired object names what its writer owns: every top-level field but ``metadata``
and ``status``, plus the labels, annotations, finalizers and ownerReferences it lists.
What other writers put there (their labels, annotations, finalizers, owners) is kept;
an object already as desired costs no write, so its resourceVersion stays put and no
watcher wakes. A field that can never be updated (a binding's ``roleRef``) that must
change means delete and recreate, as ``kubectl auth reconcile`` does.

Usage::

    stored = await ensure(api, kinds.ROLE_BINDING, desired, cache=bindings.store)
    await ensure(api, kinds.CONFIG_MAP, desired, create_only=True)  # ManifestWork's CreateOnly
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.cache import Store, key_of
from pyocm.runtime.client import Api

Obj = dict[str, Any]
#: Top-level fields the API refuses to update (RBAC bindings' roleRef).
IMMUTABLE = ("roleRef",)
_META_MAPS = ("labels", "annotations")


async def ensure(
    api: Api,
    kind: Kind,
    desired: Obj,
    *,
    cache: Store | None = None,
    create_only: bool = False,
    immutable: Iterable[str] = IMMUTABLE,
) -> Obj:
    """Create ``desired`` or update the existing object to match it; return what is stored.

    With ``cache`` (an informer's store holding such objects), an object already as
    desired costs no request at all: controllers reconcile far more often than anything
    changes. A stale cache only costs the read that would have been made anyway.
    With ``create_only``, an existing object is returned as it is."""
    immutable = tuple(immutable)
    if cache is not None:
        cached = cache.get(key_of(desired))
        found = await (
            _create_new(api, kind, desired)
            if cached is None
            else _from_cache(api, kind, desired, cached, create_only, immutable)
        )
        if found is not None:
            return found
    meta = desired["metadata"]
    try:
        existing = await api.get(kind, meta["name"], namespace=meta.get("namespace"))
    except ApiError as err:
        if err.code != 404:
            raise
        return await api.create(kind, desired)
    if create_only:
        return existing
    if _must_recreate(existing, desired, immutable):
        await api.delete(
            kind, meta["name"], namespace=meta.get("namespace"), uid=existing["metadata"]["uid"]
        )
        return await api.create(kind, desired)
    merged = merge(existing, desired)
    if merged == existing:
        return existing
    return await api.update(kind, merged)


def _must_recreate(existing: Obj, desired: Obj, immutable: tuple[str, ...]) -> bool:
    return any(f in desired and existing.get(f) != desired[f] for f in immutable)


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


async def _from_cache(
    api: Api, kind: Kind, desired: Obj, cached: Obj, create_only: bool, immutable: tuple[str, ...]
) -> Obj | None:
    """The stored object if the cached copy settles it; None to fall back to reading it."""
    if create_only:
        return cached
    if _must_recreate(cached, desired, immutable):
        return None
    merged = merge(cached, desired)
    if merged == cached:
        return cached
    try:
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
    held = meta.get("finalizers") or []
    missing = [f for f in wanted.get("finalizers") or [] if f not in held]
    if missing:
        meta["finalizers"] = [*held, *missing]
    _merge_owners(meta, wanted.get("ownerReferences") or [])
    return merged


def _merge_owners(meta: Obj, wanted: list[Obj]) -> None:
    """Each wanted owner reference replaces the one of the same uid, or is added."""
    if not wanted:
        return
    owners = list(meta.get("ownerReferences") or [])
    at = {ref.get("uid"): i for i, ref in enumerate(owners)}
    for ref in wanted:
        if ref.get("uid") in at:
            owners[at[ref.get("uid")]] = copy.deepcopy(ref)
        else:
            owners.append(copy.deepcopy(ref))
    meta["ownerReferences"] = owners


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
