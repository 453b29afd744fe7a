"""The AppliedManifestWork: the managed cluster's record of one hub work, and the owner
of what the agent applied for it (upstream's pkg/work/helper and the manifest
controller's ``applyAppliedManifestWork``).

* It is cluster scoped, named ``<hubHash>-<workName>``, with spec ``{hubHash, agentID,
  manifestWorkName}`` and the finalizer ``applied-manifest-work-cleanup``.
* Applied resources carry it as an owner reference (not a controller reference: works
  of several hubs may own one object). A resource the work's ``deleteOption`` orphans
  is applied with the owner's uid suffixed by ``-``, upstream's way of asking the
  applier to *remove* that owner reference instead (library-go's ``MergeOwnerRefs``).
* ``status.appliedResources`` lists ``{group, version, resource, namespace, name,
  uid}`` of each resource applied, sorted; what leaves it is deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models, wellknown
from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.api.models.work_v1 import (
    AppliedManifestWork,
    AppliedManifestWorkStatusAppliedResource,
    ManifestWorkSpecDeleteOption,
)
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.spoke import SpokeClient

AppliedResource = AppliedManifestWorkStatusAppliedResource
FINALIZER = wellknown.APPLIED_MANIFEST_WORK_CLEANUP_FINALIZER
#: The suffix that turns an owner reference into "remove this owner" for the applier.
REMOVE_OWNER_SUFFIX = "-"


def applied_work_name(hub_hash: str, work_name: str) -> str:
    return f"{hub_hash}-{work_name}"


def work_name_of(hub_hash: str, applied_name: str) -> str | None:
    """The hub work an AppliedManifestWork of ``hub_hash`` records (None: another hub's)."""
    prefix = f"{hub_hash}-"
    return applied_name[len(prefix) :] if applied_name.startswith(prefix) else None


def owner_of(applied: AppliedManifestWork) -> OwnerReference:
    """Upstream's ``NewAppliedManifestWorkOwner``: a plain (non-controller) owner ref."""
    meta = applied["metadata"]
    return {
        "apiVersion": ocm.APPLIED_MANIFEST_WORK.api_version,
        "kind": ocm.APPLIED_MANIFEST_WORK.kind,
        "name": str(meta.get("name")),
        "uid": str(meta.get("uid")),
    }


def removal_of(owner: OwnerReference) -> OwnerReference:
    """``owner`` as "remove me": its uid suffixed with ``-``."""
    return {**owner, "uid": owner["uid"] + REMOVE_OWNER_SUFFIX}


def owned_by_the_work(
    *,
    group: str,
    resource: str,
    namespace: str,
    name: str,
    delete_option: ManifestWorkSpecDeleteOption | None,
) -> bool:
    """Upstream's ``OwnedByTheWork``: whether the work owns (and so deletes) a resource.

    No option and Foreground own everything, Orphan nothing; SelectivelyOrphan owns
    all but what an orphaning rule names exactly (group, resource, name, namespace)."""
    if not delete_option:
        return True
    policy = delete_option.get("propagationPolicy")
    if policy == "Foreground":
        return True
    if policy == "Orphan":
        return False
    selective = delete_option.get("selectivelyOrphans")
    if selective is None:
        return True
    wanted = (group, resource, name, namespace)
    for rule in selective.get("orphaningRules") or []:
        ruled = (rule.get("group", ""), rule["resource"], rule["name"], rule.get("namespace", ""))
        if ruled == wanted:
            return False
    return True


def is_owned_by(owner: OwnerReference, refs: Iterable[Mapping[str, Any]]) -> bool:
    """Upstream's ``IsOwnedBy``: a reference with ``owner``'s uid is among ``refs``."""
    return any(ref.get("uid") == owner["uid"] for ref in refs)


def other_applied_work_owners(owner: OwnerReference, refs: Iterable[Mapping[str, Any]]) -> bool:
    """Whether an AppliedManifestWork other than ``owner`` owns the object too."""
    return any(
        ref.get("apiVersion") == ocm.APPLIED_MANIFEST_WORK.api_version
        and ref.get("kind") == ocm.APPLIED_MANIFEST_WORK.kind
        and ref.get("uid") != owner["uid"]
        for ref in refs
    )


def identity(resource: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """A resource's ``ResourceIdentifier`` (group, resource, namespace, name): the
    version is left out, as upstream compares applied resources."""
    return (
        str(resource.get("group") or ""),
        str(resource.get("resource") or ""),
        str(resource.get("namespace") or ""),
        str(resource.get("name") or ""),
    )


def find_untracked(
    applied: Sequence[AppliedResource], current: Sequence[AppliedResource]
) -> list[AppliedResource]:
    """Upstream's ``FindUntrackedResources``: what ``applied`` records that ``current``
    (the resources the work maintains now) does not."""
    tracked = {identity(resource) for resource in current}
    return [resource for resource in applied if identity(resource) not in tracked]


def sort_key(resource: AppliedResource) -> tuple[str, str, str, str, str]:
    """Upstream's order of ``appliedResources``: group, version, resource, namespace, name."""
    return (
        resource.get("group", ""),
        resource["version"],
        resource["resource"],
        resource.get("namespace", ""),
        resource["name"],
    )


def kind_of(resource: AppliedResource) -> Kind:
    """The kind to address a recorded resource with.

    The record names group, version and resource but not the kind, as upstream
    addresses it (by GroupVersionResource, through the dynamic client); its scope is
    that of its namespace. Spoke clients address objects by plural, so the kind name
    is left empty."""
    return Kind(
        resource.get("group", ""),
        resource["version"],
        "",
        resource["resource"],
        bool(resource.get("namespace")),
    )


def desired(
    *, hub_hash: str, agent_id: str, work_name: str, labels: Mapping[str, str]
) -> AppliedManifestWork:
    """The AppliedManifestWork of ``work_name`` as upstream's agent creates it (with the
    work's labels at creation)."""
    applied: AppliedManifestWork = {
        "apiVersion": ocm.APPLIED_MANIFEST_WORK.api_version,
        "kind": ocm.APPLIED_MANIFEST_WORK.kind,
        "metadata": {"name": applied_work_name(hub_hash, work_name), "finalizers": [FINALIZER]},
        "spec": {"hubHash": hub_hash, "manifestWorkName": work_name, "agentID": agent_id},
    }
    if labels:
        applied["metadata"]["labels"] = dict(labels)
    return applied


async def ensure(spoke: SpokeClient, wanted: AppliedManifestWork) -> AppliedManifestWork:
    """Create ``wanted``, or put its spec on the existing one; return what is stored.

    Only the spec is kept in line afterwards, as upstream patches only the spec."""
    name = wanted["metadata"]["name"]
    try:
        found = models.view(AppliedManifestWork, await spoke.get(ocm.APPLIED_MANIFEST_WORK, name))
    except ApiError as err:
        if err.code != 404:
            raise
        return models.view(
            AppliedManifestWork, await spoke.create(ocm.APPLIED_MANIFEST_WORK, models.wire(wanted))
        )
    if found.get("spec") == wanted["spec"]:
        return found
    updated = copy.deepcopy(found)
    updated["spec"] = copy.deepcopy(wanted["spec"])
    return models.view(
        AppliedManifestWork, await spoke.update(ocm.APPLIED_MANIFEST_WORK, models.wire(updated))
    )


async def write_status(
    spoke: SpokeClient, original: AppliedManifestWork, status: Mapping[str, Any]
) -> AppliedManifestWork | None:
    """Put ``status`` on the AppliedManifestWork when it differs from ``original``'s
    (guarded by its resourceVersion); the stored object, or None when nothing changed."""
    if original.get("status", {}) == status:
        return None
    updated = copy.deepcopy(original)
    updated["status"] = copy.deepcopy(dict(status))  # type: ignore[typeddict-item]
    stored = await spoke.update(
        ocm.APPLIED_MANIFEST_WORK, models.wire(updated), subresource="status"
    )
    return models.view(AppliedManifestWork, stored)


async def remove_finalizer(spoke: SpokeClient, applied: AppliedManifestWork) -> None:
    finalizers = applied["metadata"].get("finalizers") or []
    if FINALIZER not in finalizers:
        return
    updated = copy.deepcopy(applied)
    updated["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
    try:
        await spoke.update(ocm.APPLIED_MANIFEST_WORK, models.wire(updated))
    except ApiError as err:
        if err.code != 404:
            raise
