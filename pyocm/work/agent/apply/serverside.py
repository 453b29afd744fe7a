"""The ServerSideApply strategy, as upstream's ``ServerSideApply``.

The manifest is server-side applied with ``serverSideApply.fieldManager`` (default
``work-agent``) and ``force``; a conflict with another manager's fields is a
:class:`~pyocm.work.agent.apply.errors.ServerSideApplyConflict` carrying the cluster's
message. ``creationTimestamp: null`` is dropped everywhere in the manifest first (it
would bump the generation of every apply). The work's owner reference is then put on
the object with a separate write (SSA does not own it).

``ignoreFields``, as upstream:

* entries with condition ``OnSpokePresent`` have their fields removed from what is
  applied, except when the object is created, so they are set once and then left to
  whoever changes them on the managed cluster (a field the work agent applied before
  and applies no more is released by SSA, as the server decides);
* as soon as there is any entry, the manifest after those removals is hashed and the
  hash stored in the ``open-cluster-management.io/config-spec-hash`` annotation; when the
  object on the cluster carries the same hash, nothing is applied (only the owner
  reference is kept right). So the fields of ``OnSpokeChange`` entries, still part of
  what is applied, are put back only when the manifest changes, not when the managed
  cluster changes them.

Without ``ignoreFields`` every apply re-applies the manifest, creating the object again
when it was deleted. A field another writer changed since is that writer's now (the
server moves ownership with the change): without ``force`` the next apply is a conflict,
reported and not retried; with ``force`` the field is taken back.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from pyocm.api import wellknown
from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfigUpdateStrategyServerSideApply
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.apply.errors import ServerSideApplyConflict
from pyocm.work.agent.apply.gohash import config_spec_hash
from pyocm.work.agent.apply.ignorefields import remove_ignored
from pyocm.work.agent.apply.merge import Obj, meta
from pyocm.work.agent.apply.owners import ensure_owner
from pyocm.work.agent.spoke import SpokeClient, current

ServerSideApplyConfig = ManifestWorkSpecManifestConfigUpdateStrategyServerSideApply

ON_SPOKE_CHANGE: Final = "OnSpokeChange"
ON_SPOKE_PRESENT: Final = "OnSpokePresent"


async def apply_server_side(
    spoke: SpokeClient,
    kind: Kind,
    manifest: Obj,
    owner: OwnerReference | None,
    config: ServerSideApplyConfig | None,
) -> tuple[Obj, bool]:
    """Apply ``manifest`` with the ServerSideApply strategy: the object, and whether a
    write was sent (an apply or an owner reference change)."""
    original = _without_null_creation_timestamps(copy.deepcopy(manifest))
    config = config or {}
    manager = config.get("fieldManager") or wellknown.WORK_DEFAULT_FIELD_MANAGER
    force = bool(config.get("force", False))
    ignored = config.get("ignoreFields") or []
    applied = original
    if ignored:
        applied = copy.deepcopy(original)
        for field in ignored:
            # OnSpokeChange fields stay in the hash: a manifest change applies them again.
            if field.get("condition") != ON_SPOKE_CHANGE:
                applied = await remove_ignored(applied, field)
        digest = config_spec_hash(applied)
        for obj in (applied, original):
            meta(obj).setdefault("annotations", {})[wellknown.CONFIG_SPEC_HASH_ANNOTATION] = digest
        existing = await current(spoke, kind, applied)
        if existing is None:
            applied = original  # created with every field, ignored ones included
        elif _annotation(existing) == digest:
            return await ensure_owner(spoke, kind, existing, owner)
    try:
        answer = await spoke.apply(kind, applied, field_manager=manager, force=force)
    except ApiError as err:
        if err.code == 409:
            raise ServerSideApplyConflict(err) from err
        raise
    answer, _ = await ensure_owner(spoke, kind, answer, owner)
    return answer, True


def _annotation(obj: Obj) -> Any:
    annotations = meta(obj).get("annotations")
    if not isinstance(annotations, dict):
        return None
    return annotations.get(wellknown.CONFIG_SPEC_HASH_ANNOTATION)


def _without_null_creation_timestamps(value: Any) -> Any:
    """``value`` without ``metadata.creationTimestamp: null`` at any depth (templates
    included): a null there makes the server bump the generation at every apply."""
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if isinstance(metadata, dict) and metadata.get("creationTimestamp", 0) is None:
            del metadata["creationTimestamp"]
        for item in value.values():
            _without_null_creation_timestamps(item)
    elif isinstance(value, list):
        for item in value:
            _without_null_creation_timestamps(item)
    return value
