"""The CreateOnly strategy, as upstream's ``CreateOnlyApply``.

A missing object is created from the manifest, with the work's owner reference; an
existing one is never updated from the manifest, but the owner reference is still put
on it or taken off (a uid ending in ``-``), since the work's delete option decides
whether the work owns it. A deleted object is therefore created again at the next
apply; a changed one is left as it is.
"""

from __future__ import annotations

import copy

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.apply.merge import Obj, meta, without_removals
from pyocm.work.agent.apply.owners import ensure_owner
from pyocm.work.agent.spoke import SpokeClient


async def apply_create_only(
    spoke: SpokeClient, kind: Kind, required: Obj, owner: OwnerReference | None
) -> tuple[Obj, bool]:
    """Apply ``required`` with the CreateOnly strategy: the object and whether it was written."""
    metadata = meta(required)
    try:
        existing = await spoke.get(kind, metadata["name"], namespace=metadata.get("namespace"))
    except ApiError as err:
        if err.code != 404:
            raise
        fresh = copy.deepcopy(required)
        if owner is not None:
            meta(fresh)["ownerReferences"] = [dict(owner)]
        created = await spoke.create(kind, without_removals(fresh))
        # Created with the owner already, unless the owner was a removal: nothing to do.
        return created, True
    return await ensure_owner(spoke, kind, existing, owner)
