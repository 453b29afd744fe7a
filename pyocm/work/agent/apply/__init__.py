"""The work agent's apply layer: one manifest onto the managed cluster, as upstream's
``pkg/work/spoke/apply`` and its executor check (``auth/basic``) do it.

:func:`resolve` finds the served kind of a manifest; :func:`apply_manifest` checks the
work's executor, then applies with the manifest's update strategy:

* Update (the default): :mod:`~pyocm.work.agent.apply.update`, with library-go's typed
  rules for some built-in kinds (:mod:`~pyocm.work.agent.apply.typed`);
* CreateOnly: :mod:`~pyocm.work.agent.apply.createonly`;
* ServerSideApply: :mod:`~pyocm.work.agent.apply.serverside`;
* ReadOnly: :mod:`~pyocm.work.agent.apply.readonly`.

The caller applies every manifest at every resync; each strategy's module says what that
does to drift. ``owner`` is the AppliedManifestWork's owner reference, or, when the
work's delete option orphans the resource, the same reference with ``-`` appended to its
uid (upstream's removal form): the strategies put the first on and take the second off,
and the executor check asks for ``delete`` only for the first.

Errors: :class:`~pyocm.kube.status.ApiError` with the managed cluster's message, or an
:class:`ApplyError` (:class:`ExecutorDenied`, :class:`ServerSideApplyConflict`,
:class:`IgnoreFieldError`) worded as upstream's. Upstream reports each as the manifest's
``Applied`` False condition, ``Failed to apply manifest: <str(err)>`` with reason
``AppliedManifestFailed``; an IgnoreFieldError as ``Failed to process ignoreFields:
<str(err)>`` with reason ``AppliedManifestSSAIgnoreFieldError``. ExecutorDenied is
retried after ``requeue_after`` seconds rather than backed off, a
ServerSideApplyConflict is not retried at all, and a 409 ApiError (a stale write) is
retried at once.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Final

import orjson

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfigUpdateStrategy
from pyocm.kube.kinds import Kind
from pyocm.runtime.restmapper import NoKindMatchError
from pyocm.work.agent.apply.cache import ResourceCache
from pyocm.work.agent.apply.createonly import apply_create_only
from pyocm.work.agent.apply.errors import (
    ApplyError,
    ExecutorDenied,
    IgnoreFieldError,
    ServerSideApplyConflict,
)
from pyocm.work.agent.apply.executor import Executor, check_executor
from pyocm.work.agent.apply.merge import REMOVAL_SUFFIX, Obj, meta
from pyocm.work.agent.apply.readonly import read_only
from pyocm.work.agent.apply.serverside import apply_server_side
from pyocm.work.agent.apply.update import apply_update
from pyocm.work.agent.spoke import SpokeClient

__all__ = [
    "Applied",
    "ApplyError",
    "Executor",
    "ExecutorDenied",
    "IgnoreFieldError",
    "ResourceCache",
    "ServerSideApplyConflict",
    "UpdateStrategy",
    "apply_manifest",
    "resolve",
]

#: ``spec.manifestConfigs[].updateStrategy`` of a ManifestWork, as the typed model.
UpdateStrategy = ManifestWorkSpecManifestConfigUpdateStrategy

UPDATE: Final = "Update"
CREATE_ONLY: Final = "CreateOnly"
SERVER_SIDE_APPLY: Final = "ServerSideApply"
READ_ONLY: Final = "ReadOnly"
STRATEGIES: Final = (UPDATE, CREATE_ONLY, SERVER_SIDE_APPLY, READ_ONLY)


@dataclass(frozen=True)
class Applied:
    """What applying one manifest came to."""

    #: the served kind (plural, scope) the manifest resolved to
    kind: Kind
    #: the cluster's answer after applying; for ReadOnly the object as it is, or the
    #: manifest itself (no ``metadata.uid``) when the object does not exist
    obj: Obj
    #: whether a write was sent (for ServerSideApply, an apply is a write even when the
    #: server found nothing to change)
    changed: bool


async def resolve(spoke: SpokeClient, manifest: Obj) -> Kind:
    """The kind the managed cluster serves for ``manifest``; an :class:`ApplyError` in
    upstream's words for a manifest without kind, apiVersion or name, or of a kind the
    cluster does not serve (a CRD's kind is found once the CRD is served)."""
    if not isinstance(manifest, dict):
        raise ApplyError(f"the manifest is not an object: {_raw(manifest)}")
    kind, api_version = manifest.get("kind"), manifest.get("apiVersion")
    if not kind or not isinstance(kind, str):
        raise ApplyError(f"Object 'Kind' is missing in '{_raw(manifest)}'")
    if not api_version or not isinstance(api_version, str):
        raise ApplyError(f"Object 'apiVersion' is missing in '{_raw(manifest)}'")
    _name(manifest)
    try:
        return await spoke.kind_for(api_version=api_version, kind=kind)
    except NoKindMatchError:
        raise ApplyError(f'the server doesn\'t have a resource type "{kind}"') from None


async def apply_manifest(
    spoke: SpokeClient,
    manifest: Obj,
    *,
    kind: Kind,
    strategy: UpdateStrategy | None,
    owner: OwnerReference | None,
    executor: Executor | None = None,
    cache: ResourceCache | None = None,
) -> Applied:
    """Apply ``manifest`` (of the served ``kind``, from :func:`resolve`) to the managed
    cluster with ``strategy`` (None: Update), putting ``owner`` on what is written
    (None: no owner reference is added or taken off), after checking that ``executor``,
    when the work names one, may. ``cache`` is the Update strategy's record of what it
    applied (:mod:`~pyocm.work.agent.apply.cache`), which lets it skip unchanged
    manifests over unchanged objects."""
    if (manifest.get("apiVersion"), manifest.get("kind")) != (kind.api_version, kind.kind):
        raise ValueError(f"{kind.api_version} {kind.kind} is not the kind of this manifest")
    required = _required(manifest, kind)
    strategy_type = strategy.get("type", UPDATE) if strategy else UPDATE
    strategy_type = strategy_type or UPDATE
    if strategy_type not in STRATEGIES:
        raise ApplyError(f"unknown update strategy type {strategy_type!r}")
    if executor is not None:
        metadata = meta(required)
        await check_executor(
            spoke,
            executor,
            kind=kind,
            namespace=metadata.get("namespace") or "",
            name=metadata["name"],
            owned=owner is not None and not owner["uid"].endswith(REMOVAL_SUFFIX),
            manifest=required,
        )
    if strategy_type == READ_ONLY:
        return Applied(kind, await read_only(spoke, kind, required), False)
    if strategy_type == CREATE_ONLY:
        obj, changed = await apply_create_only(spoke, kind, required, owner)
    elif strategy_type == SERVER_SIDE_APPLY:
        config = strategy.get("serverSideApply") if strategy else None
        obj, changed = await apply_server_side(spoke, kind, required, owner, config)
    else:
        obj, changed = await apply_update(spoke, kind, required, owner, cache=cache)
    return Applied(kind, obj, changed)


def _required(manifest: Obj, kind: Kind) -> Obj:
    """The manifest as applied: a copy without a uid (it would be a failed precondition
    on a recreated object, upstream drops it too) and, for a cluster-scoped kind,
    without a namespace (the API ignores it there)."""
    _name(manifest)
    required = copy.deepcopy(manifest)
    metadata = meta(required)
    metadata.pop("uid", None)
    if not kind.namespaced:
        metadata.pop("namespace", None)
    return required


def _name(manifest: Obj) -> str:
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not name or not isinstance(name, str):
        raise ApplyError("resource name may not be empty")
    return name


def _raw(manifest: object) -> str:
    """The manifest as the raw JSON upstream quotes in its decoding errors."""
    try:
        return orjson.dumps(manifest).decode()
    except TypeError:
        return repr(manifest)
