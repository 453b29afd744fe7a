"""The ReadOnly strategy, as upstream's ``ReadOnlyApply``: nothing is ever written.

Upstream's applier answers the manifest itself without asking the cluster, so the
manifest is reported applied whether the object exists or not; status feedback then
reads the live object. This reads the object once so the caller can record its uid
(upstream's controller makes that same read for the AppliedManifestWork): the answer
is the live object, or the manifest itself (no ``metadata.uid``) when it is absent.
"""

from __future__ import annotations

import copy

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.apply.merge import Obj, meta
from pyocm.work.agent.spoke import SpokeClient


async def read_only(spoke: SpokeClient, kind: Kind, manifest: Obj) -> Obj:
    """The object ``manifest`` names as it is on the cluster, or ``manifest`` when absent."""
    metadata = meta(manifest)
    try:
        return await spoke.get(kind, metadata["name"], namespace=metadata.get("namespace"))
    except ApiError as err:
        if err.code == 404:
            return copy.deepcopy(manifest)
        raise
