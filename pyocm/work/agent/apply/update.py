"""The Update strategy (the default), as upstream's ``UpdateApply``.

The manifest's owner references are replaced by the work's owner. A missing object is
created (without removal keys). For the built-in kinds library-go has a typed applier
for, that applier's rules decide what is written (:mod:`~pyocm.work.agent.apply.typed`).
Every other kind, Deployments and custom resources included, takes upstream's generic
path: the manifest's labels, annotations and owner references are merged into the
object's, its finalizers kept, and the object is written back, conditionally on its
resourceVersion, whenever it differs from the manifest outside metadata and status.

So drift is put back at the next apply: a changed field returns to the manifest's value
and a deleted object is created again. A field the server defaults differs from a
manifest that leaves it out, so such an object would be written at every apply; as
upstream, a :class:`~pyocm.work.agent.apply.cache.ResourceCache` skips the apply (no
compare, no write) while the manifest is the one last applied and the object's
resourceVersion the one that apply left.
"""

from __future__ import annotations

import copy
from typing import Final

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.apply.cache import ResourceCache, fingerprint
from pyocm.work.agent.apply.merge import (
    Obj,
    json_equal,
    merge_map,
    merge_owner_refs,
    meta,
    without_removals,
)
from pyocm.work.agent.apply.typed import Typed, typed_applier
from pyocm.work.agent.spoke import SpokeClient, current

#: Metadata the server writes: dropped before an object is created again.
_SERVER_FIELDS: Final = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)


async def apply_update(
    spoke: SpokeClient,
    kind: Kind,
    required: Obj,
    owner: OwnerReference | None,
    *,
    cache: ResourceCache | None = None,
) -> tuple[Obj, bool]:
    """Apply ``required`` with the Update strategy: the object and whether it was written.
    With ``cache``, an apply it finds safe to skip returns the object as it is, and each
    apply is recorded there."""
    required = copy.deepcopy(required)
    if owner is not None:
        meta(required)["ownerReferences"] = [dict(owner)]
    applying = fingerprint(required) if cache is not None else b""
    typed = typed_applier(kind)
    if typed is not None:
        required = typed.prepare(required)
    existing = await current(spoke, kind, required)
    if existing is None:
        obj, written = await spoke.create(kind, without_removals(required)), True
    elif cache is not None and cache.safe_to_skip(kind, applying, existing):
        return existing, False
    elif typed is not None:
        obj, written = await _apply_typed(spoke, kind, typed, existing, required)
    else:
        obj, written = await _apply_generic(spoke, kind, existing, required)
    if cache is not None:
        cache.record(kind, applying, obj)
    return obj, written


async def _apply_generic(
    spoke: SpokeClient, kind: Kind, existing: Obj, required: Obj
) -> tuple[Obj, bool]:
    have, want = meta(existing), meta(required)
    labels, labels_changed = merge_map(have.get("labels"), want.get("labels"))
    annotations, annotations_changed = merge_map(have.get("annotations"), want.get("annotations"))
    owners, owners_changed = merge_owner_refs(
        have.get("ownerReferences"), want.get("ownerReferences") or []
    )
    # The merged metadata is what is written; finalizers are the object's own.
    for field, value in (
        ("labels", labels),
        ("annotations", annotations),
        ("ownerReferences", owners),
        ("finalizers", have.get("finalizers")),
    ):
        if value:
            want[field] = value
        else:
            want.pop(field, None)
    modified = labels_changed or annotations_changed or owners_changed
    if not modified and same_outside_metadata(required, existing):
        return existing, False
    want["resourceVersion"] = have.get("resourceVersion")
    return await spoke.update(kind, required), True


def same_outside_metadata(a: Obj, b: Obj) -> bool:
    """Upstream's ``isSameUnstructured``: same apiVersion, kind, name and namespace, and
    equal once metadata and status are set aside."""
    meta_a, meta_b = a.get("metadata") or {}, b.get("metadata") or {}
    if (a.get("apiVersion"), a.get("kind")) != (b.get("apiVersion"), b.get("kind")):
        return False
    if meta_a.get("name") != meta_b.get("name"):
        return False
    if (meta_a.get("namespace") or "") != (meta_b.get("namespace") or ""):
        return False
    rest_a = {k: v for k, v in a.items() if k not in ("metadata", "status")}
    rest_b = {k: v for k, v in b.items() if k not in ("metadata", "status")}
    return json_equal(rest_a, rest_b)


async def _apply_typed(
    spoke: SpokeClient, kind: Kind, typed: Typed, existing: Obj, required: Obj
) -> tuple[Obj, bool]:
    desired = typed.reconcile(existing, required)
    if desired is None:
        return existing, False
    if typed.recreates and desired.get("type") != existing.get("type"):
        return await _recreate(spoke, kind, existing, desired), True
    try:
        return await spoke.update(kind, desired), True
    except ApiError as err:
        if typed.recreates and "field is immutable" in err.message:
            return await _recreate(spoke, kind, existing, desired), True
        raise


async def _recreate(spoke: SpokeClient, kind: Kind, existing: Obj, desired: Obj) -> Obj:
    """Delete the object and create ``desired`` in its place (library-go's way out of a
    Secret type change, which the API refuses as an update)."""
    metadata = meta(existing)
    await spoke.delete(
        kind, metadata["name"], namespace=metadata.get("namespace"), uid=metadata.get("uid")
    )
    fresh = copy.deepcopy(desired)
    for field in _SERVER_FIELDS:
        meta(fresh).pop(field, None)
    return await spoke.create(kind, fresh)
