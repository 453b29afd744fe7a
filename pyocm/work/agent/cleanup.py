"""Deleting what an AppliedManifestWork applied: upstream's ``DeleteAppliedResources``.

For each recorded resource, read it from the managed cluster and:

* gone, or not owned by this AppliedManifestWork (orphaned, or someone took it over):
  nothing to do;
* owned by other AppliedManifestWorks too: only this owner reference is removed
  (upstream's ``ApplyOwnerReferences`` with the ``<uid>-`` form);
* recreated since (another uid): forgotten, the recorded instance is gone;
* already being deleted: pending;
* otherwise deleted with a uid precondition (Background propagation, as upstream),
  and pending until it is gone.

The resources still pending are returned, so a caller can wait (Foreground) and keep
them recorded; failures are returned too, one message per resource, and never stop
the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube.status import ApiError
from pyocm.runtime.restmapper import NoKindMatchError
from pyocm.work.agent.appliedwork import (
    AppliedResource,
    is_owned_by,
    kind_of,
    other_applied_work_owners,
    removal_of,
)
from pyocm.work.agent.apply.owners import ensure_owner
from pyocm.work.agent.spoke import SpokeClient

log = logging.getLogger(__name__)


@dataclass
class Deletion:
    """What :func:`delete_applied_resources` left: resources still going, and failures."""

    pending: list[AppliedResource] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def delete_applied_resources(
    spoke: SpokeClient, resources: list[AppliedResource], *, owner: OwnerReference, reason: str
) -> Deletion:
    """Delete ``resources`` that ``owner`` (an AppliedManifestWork) owns; see the module."""
    outcome = Deletion()
    for resource in resources:
        try:
            if await _delete_one(spoke, resource, owner=owner, reason=reason):
                outcome.pending.append(resource)
        except ApiError as err:
            outcome.errors.append(f"failed to delete resource {_describe(resource)}: {err.message}")
    return outcome


async def _delete_one(
    spoke: SpokeClient, resource: AppliedResource, *, owner: OwnerReference, reason: str
) -> bool:
    """Whether ``resource`` is still pending deletion once this step is done."""
    kind = kind_of(resource)
    namespace = resource.get("namespace") or None
    name = resource["name"]
    try:
        found = await spoke.get(kind, name, namespace=namespace)
    except ApiError as err:
        if err.code == 404:
            return False
        raise
    except NoKindMatchError:
        return False  # its kind is no longer served: nothing of it is left
    meta = found.get("metadata") or {}
    refs = meta.get("ownerReferences") or []
    if not is_owned_by(owner, refs):
        return False
    if other_applied_work_owners(owner, refs):
        await ensure_owner(spoke, kind, found, removal_of(owner))
        return False
    if resource.get("uid") != meta.get("uid"):
        return False  # the recorded instance was deleted; a namesake is not ours to delete
    if meta.get("deletionTimestamp"):
        return True
    try:
        await spoke.delete(
            kind, name, namespace=namespace, uid=resource.get("uid"), propagation="Background"
        )
    except ApiError as err:
        if err.code in (404, 409):  # gone, or the uid precondition failed: forget it
            return False
        raise
    log.info("deleted %s: %s", _describe(resource), reason)
    return True


def _describe(resource: AppliedResource) -> str:
    group = resource.get("group", "")
    gvr = f"{group}/{resource['version']}, Resource={resource['resource']}"
    return f"{gvr} with key {resource.get('namespace', '')}/{resource['name']}"
