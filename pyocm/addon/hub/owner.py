"""Owner references from MCAs to their CMA (upstream ``addonowner``).

Every ManagedClusterAddOn of an add-on the add-on manager manages gets a controller
owner reference to the ClusterManagementAddOn of the same name, however it was created
(by a user, ``pyocm addon enable``, or the install strategy): deleting the CMA then
removes its MCAs, and the framework's controllers wait for it (``IsOwnedByCMA``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.addon.hub import common
from pyocm.api import kinds as ocm
from pyocm.api.models import meta_v1
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

CONTROLLER_NAME = "addon-owner-controller"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def merge_owner(refs: list[meta_v1.OwnerReference], required: meta_v1.OwnerReference) -> bool:
    """``MergeOwnerRefs`` (not removing): a reference with the same name, kind and group
    (any version) is replaced by ``required`` unless equal; none is appended. Returns
    whether ``refs`` changed."""
    for i, ref in enumerate(refs):
        if (ref.get("name"), ref.get("kind"), _group(ref.get("apiVersion", ""))) == (
            required["name"],
            required["kind"],
            _group(required["apiVersion"]),
        ):
            if _normalised(ref) == _normalised(required):
                return False
            refs[i] = required
            return True
    refs.append(required)
    return True


def _normalised(ref: Mapping[str, Any]) -> dict[str, Any]:
    """A reference as Go compares it: absent booleans are false."""
    found = dict(ref)
    for flag in ("controller", "blockOwnerDeletion"):
        found[flag] = bool(found.get(flag, False))
    return found


@dataclass
class OwnerController:
    api: Api
    mcas: Informer
    cmas: Informer

    async def reconcile(self, key: str) -> None:
        found = common.managed_addon(self.mcas, self.cmas, key)
        if found is None:
            return
        mca, cma = found
        updated = copy.deepcopy(mca)
        refs = updated["metadata"].setdefault("ownerReferences", [])
        if merge_owner(refs, common.owner_reference(cma)):
            await self.api.update(ocm.MANAGED_CLUSTER_ADDON, updated)
