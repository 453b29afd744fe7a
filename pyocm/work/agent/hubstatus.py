"""The agent's writes to the hub's ManifestWorks, as upstream's sdk-go ``patcher`` makes
them: JSON merge patches carrying the object's uid and resourceVersion, so a write
computed from a stale read fails with 409 and is redone on fresh state.

The work agent's hub role (pyocm/registration/hub/rbac.py, upstream's) allows exactly
``patch``/``update`` on ``manifestworks`` (finalizers) and ``manifestworks/status``.
"""

from __future__ import annotations

import copy
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models
from pyocm.api.models.work_v1 import ManifestWork, ManifestWorkStatus
from pyocm.kube.patches import create_merge_patch
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api


def _guard(work: ManifestWork) -> dict[str, Any]:
    meta = work["metadata"]
    return {"uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}


async def patch_status(
    hub: Api, work: ManifestWork, status: ManifestWorkStatus
) -> ManifestWork | None:
    """Make ``work``'s status ``status`` with one merge patch of what differs; the
    stored work, or None when nothing differed (no request is made)."""
    old = dict(work.get("status", {}))
    diff = create_merge_patch(old, dict(status))
    if not diff:
        return None
    meta = work["metadata"]
    stored = await hub.patch(
        ocm.MANIFEST_WORK,
        str(meta["name"]),
        {"metadata": _guard(work), "status": diff},
        namespace=meta.get("namespace"),
        subresource="status",
    )
    return models.view(ManifestWork, stored)


async def set_finalizers(hub: Api, work: ManifestWork, finalizers: list[str]) -> None:
    """Replace the work's finalizers (a 404 means it is gone already: nothing to do)."""
    meta = work["metadata"]
    try:
        await hub.patch(
            ocm.MANIFEST_WORK,
            str(meta["name"]),
            {"metadata": {**_guard(work), "finalizers": copy.copy(finalizers)}},
            namespace=meta.get("namespace"),
        )
    except ApiError as err:
        if err.code != 404:
            raise
