"""Putting the work's owner reference on an object that was not written whole
(upstream's ``helper.ApplyOwnerReferences``): after a server-side apply, or on an
object CreateOnly found already there.

Upstream sends a merge patch carrying the object's uid and resourceVersion; this sends
the object back with the merged references and its resourceVersion, the same
conditional write (409 when the object changed in between) through the verbs a
:class:`~pyocm.work.agent.spoke.SpokeClient` has.
"""

from __future__ import annotations

import copy

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube.kinds import Kind
from pyocm.work.agent.apply.merge import Obj, merge_owner_refs, meta
from pyocm.work.agent.spoke import SpokeClient


async def ensure_owner(
    spoke: SpokeClient, kind: Kind, obj: Obj, owner: OwnerReference | None
) -> tuple[Obj, bool]:
    """``obj`` with ``owner`` merged into its owner references (a uid ending in ``-``
    removes the matching one), and whether that took a write."""
    if owner is None:
        return obj, False
    owners, modified = merge_owner_refs(meta(obj).get("ownerReferences"), [owner])
    if not modified:
        return obj, False
    updated = copy.deepcopy(obj)
    meta(updated)["ownerReferences"] = owners
    return await spoke.update(kind, updated), True
