"""Owner-to-owned mapping for controllers, as controller-runtime's handlers do it.

* :func:`enqueue_owner` maps a change of an owned object to its owner's key
  (``handler.EnqueueRequestForOwner``): a controller of ManifestWorks watching the
  objects it applied, say.
* :func:`enqueue_owned` maps a change of an owner to the keys of the objects it owns,
  through the informer's owner index: no scan of the cache.
* :func:`owned_by` reads those objects in a reconcile.

Usage::

    controller.watch(applied, enqueue_owner(kinds.MANAGED_CLUSTER_ADDON))
    controller.watch(addons, enqueue_owned(applied))
"""

from __future__ import annotations

from typing import Any

from pyocm.kube.kinds import Kind
from pyocm.runtime.cache import by_owner_uid
from pyocm.runtime.controller import Mapper
from pyocm.runtime.informer import Informer

Obj = dict[str, Any]
#: The owner index's name: objects filed under each owner's uid.
OWNER_INDEX = "owner-uid"


def owner_references(obj: Obj, kind: Kind, *, controller_only: bool = False) -> list[Obj]:
    """``obj``'s owner references to objects of ``kind`` (any version of its group)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [
        ref
        for ref in refs
        if isinstance(ref, dict)
        and ref.get("kind") == kind.kind
        and _group(str(ref.get("apiVersion") or "")) == kind.group
        and (ref.get("controller") is True or not controller_only)
    ]


def enqueue_owner(kind: Kind, *, controller_only: bool = False) -> Mapper:
    """A mapper from an owned object to the keys of its owners of ``kind``.

    A namespaced owner lives in its object's namespace (owner references never cross
    namespaces); a cluster-scoped owner's key is its name."""

    def owners(obj: Obj) -> list[str]:
        namespace = (obj.get("metadata") or {}).get("namespace")
        prefix = f"{namespace}/" if kind.namespaced and namespace else ""
        return [
            prefix + str(ref["name"])
            for ref in owner_references(obj, kind, controller_only=controller_only)
            if ref.get("name")
        ]

    return owners


def enqueue_owned(informer: Informer) -> Mapper:
    """A mapper from an owner to the keys of the objects in ``informer`` it owns."""
    informer.add_index(OWNER_INDEX, by_owner_uid)
    store = informer.store

    def owned(owner: Obj) -> list[str]:
        uid = (owner.get("metadata") or {}).get("uid")
        return store.index_keys(OWNER_INDEX, str(uid)) if uid else []

    return owned


def owned_by(informer: Informer, owner: Obj) -> list[Obj]:
    """The cached objects ``owner`` owns (the informer gets its owner index on first use)."""
    informer.add_index(OWNER_INDEX, by_owner_uid)
    uid = (owner.get("metadata") or {}).get("uid")
    return informer.store.by_index(OWNER_INDEX, str(uid)) if uid else []


def _group(api_version: str) -> str:
    group, _, _ = api_version.rpartition("/")
    return group
