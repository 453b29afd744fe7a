"""A simulated cluster's objects kept in memory, answering the work agent's
:class:`~pyocm.work.agent.spoke.SpokeClient` verbs.

It keeps what the work agent relies on from a real API server: uids, resourceVersions
with conflicts, ``metadata.generation``, finalizers and deletion timestamps, uid
preconditions, the owner-reference garbage collection, CRDs whose kinds become
resolvable. What it does not simulate, said plainly:

* **server-side apply** is a merge of the applied fields into the object; field
  ownership and apply conflicts are not tracked;
* **validation and defaulting** are not done (any object with a name is stored);
* **authorization**: every SubjectAccessReview is allowed (the simulator has no RBAC);
* **workload status** comes from :func:`pyocm.kube.workloadsim.simulated_status`, as on
  an embedded cluster: no kubelet runs anything.
"""

from __future__ import annotations

import copy
import itertools
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from pyocm.kube import kinds, timefmt, workloadsim
from pyocm.kube.kinds import Kind
from pyocm.kube.status import already_exists, conflict, invalid_object, not_found, required
from pyocm.runtime.restmapper import NoKindMatchError

Obj = dict[str, Any]
Key = tuple[str, str, str, str]  # group, plural, namespace, name
#: The status an object of a kind would get on a healthy cluster (None: none).
StatusFor = Callable[[Kind, Obj], Obj | None]


class MemorySpoke:
    """One simulated cluster's objects; ``kinds`` are what it serves to begin with."""

    def __init__(self, *, served: Iterable[Kind] = (), status_for: StatusFor | None = None):
        self._kinds: dict[tuple[str, str], Kind] = {}
        for kind in itertools.chain(_builtin_kinds(), served):
            self._serve(kind)
        self._objects: dict[Key, Obj] = {}
        # Indexes, so a cluster holding thousands of objects lists one kind and collects
        # one owner's dependents without scanning everything.
        self._by_kind: dict[tuple[str, str], dict[Key, Obj]] = {}
        self._owner_uids: dict[Key, set[str]] = {}
        self._dependents: dict[str, set[Key]] = {}
        self._revision = itertools.count(1)
        self._status_for = status_for

    def __len__(self) -> int:
        return len(self._objects)

    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        found = self._kinds.get((api_version, kind))
        if found is None:
            group, _, version = api_version.rpartition("/")
            raise NoKindMatchError(group=group, version=version, kind=kind)
        return found

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj:
        return copy.deepcopy(self._stored(kind, name, namespace))

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        found = self._by_kind.get((kind.group, kind.plural), {})
        return [
            copy.deepcopy(obj)
            for (_, _, ns, _), obj in sorted(found.items())
            if namespace in (None, ns)
        ]

    def peek(self, kind: Kind) -> Iterable[Obj]:
        """The stored objects of ``kind``, not copied: for reading only (a fleet's
        snapshot counts them across thousands of clusters)."""
        return self._by_kind.get((kind.group, kind.plural), {}).values()

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        if kind == kinds.SUBJECT_ACCESS_REVIEW:
            return _allowed(obj)
        key = self._key(kind, obj)
        if key in self._objects:
            raise already_exists(resource=kind.plural, group=kind.group, name=key[3])
        stored = copy.deepcopy(obj)
        stored["apiVersion"], stored["kind"] = kind.api_version, kind.kind
        meta = stored.setdefault("metadata", {})
        meta.update(
            uid=str(uuid.uuid4()),
            creationTimestamp=timefmt.now_rfc3339(),
            generation=1,
        )
        if not kind.namespaced:
            meta.pop("namespace", None)
        return self._store(kind, key, stored)

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        key = self._key(kind, obj)
        current = self._stored(kind, key[3], key[2])
        meta = obj.get("metadata") or {}
        wanted_rv = meta.get("resourceVersion")
        if wanted_rv and wanted_rv != current["metadata"]["resourceVersion"]:
            raise conflict(
                resource=kind.plural,
                group=kind.group,
                name=key[3],
                detail="the object has been modified; please apply your changes to the latest version and try again",
            )
        stored = copy.deepcopy(current)
        if subresource == "status":
            stored["status"] = copy.deepcopy(obj.get("status"))
        else:
            stored = _replace_keeping(stored, obj)
        return self._store(kind, key, stored)

    async def apply(self, kind: Kind, obj: Obj, *, field_manager: str, force: bool) -> Obj:
        key = self._key(kind, obj)
        current = self._objects.get(key)
        if current is None:
            return await self.create(kind, obj)
        merged = _merge(copy.deepcopy(current), copy.deepcopy(obj))
        return self._store(kind, key, merged)

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        propagation: str | None = None,
    ) -> None:
        current = self._stored(kind, name, namespace)
        meta = current["metadata"]
        if uid and meta["uid"] != uid:
            raise conflict(
                resource=kind.plural,
                group=kind.group,
                name=name,
                detail=f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta['uid']}",
            )
        key = (kind.group, kind.plural, (namespace or "") if kind.namespaced else "", name)
        if meta.get("finalizers"):
            meta.setdefault("deletionTimestamp", timefmt.now_rfc3339())
            meta["resourceVersion"] = str(next(self._revision))
            return
        self._remove(key, orphan=propagation == "Orphan")

    async def dry_run_create_as(self, kind: Kind, obj: Obj, *, user: str) -> Obj:
        """Allowed for every ``user`` (no RBAC here); 409 when the object exists."""
        key = self._key(kind, obj)
        if key in self._objects:
            raise already_exists(resource=kind.plural, group=kind.group, name=key[3])
        return copy.deepcopy(obj)

    # Internals.

    def _serve(self, kind: Kind) -> None:
        self._kinds[(kind.api_version, kind.kind)] = kind

    def _key(self, kind: Kind, obj: Obj) -> Key:
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise invalid_object(
                kind=kind.kind,
                group=kind.group,
                name="",
                errors=[required("metadata.name", "name or generateName is required")],
            )
        namespace = str(meta.get("namespace") or "") if kind.namespaced else ""
        return (kind.group, kind.plural, namespace, str(name))

    def _stored(self, kind: Kind, name: str, namespace: str | None) -> Obj:
        key = (kind.group, kind.plural, (namespace or "") if kind.namespaced else "", name)
        found = self._objects.get(key)
        if found is None:
            raise not_found(resource=kind.plural, group=kind.group, name=name)
        return found

    def _store(self, kind: Kind, key: Key, obj: Obj) -> Obj:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._remove(key, orphan=False)
            return copy.deepcopy(obj)
        if self._status_for is not None:
            status = self._status_for(kind, obj)
            if status is not None:
                obj["status"] = status
        meta["resourceVersion"] = str(next(self._revision))
        self._put(key, obj)
        if kind == kinds.CRD:
            self._serve_crd(obj)
        return copy.deepcopy(obj)

    def _serve_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        for version in spec.get("versions") or []:
            if version.get("served", True):
                self._serve(
                    Kind(
                        str(spec.get("group", "")),
                        str(version.get("name", "")),
                        str(names.get("kind", "")),
                        str(names.get("plural", "")),
                        spec.get("scope") == "Namespaced",
                    )
                )

    def _put(self, key: Key, obj: Obj) -> None:
        self._unindex(key)
        self._objects[key] = obj
        self._by_kind.setdefault(key[:2], {})[key] = obj
        uids = {str(o.get("uid")) for o in obj["metadata"].get("ownerReferences") or []}
        self._owner_uids[key] = uids
        for uid in uids:
            self._dependents.setdefault(uid, set()).add(key)

    def _unindex(self, key: Key) -> None:
        self._by_kind.get(key[:2], {}).pop(key, None)
        for uid in self._owner_uids.pop(key, set()):
            keys = self._dependents.get(uid)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._dependents[uid]

    def _remove(self, key: Key, *, orphan: bool) -> None:
        removed = self._objects.pop(key, None)
        self._unindex(key)
        if removed is None:
            return
        uid = removed["metadata"]["uid"]
        # The garbage collector: dependents lose the owner, and go when none is left.
        for other_key in sorted(self._dependents.get(uid, set())):
            other = self._objects[other_key]
            owners = other["metadata"].get("ownerReferences") or []
            kept = [owner for owner in owners if owner.get("uid") != uid]
            other["metadata"]["ownerReferences"] = kept
            other["metadata"]["resourceVersion"] = str(next(self._revision))
            self._put(other_key, other)
            if not kept and not orphan:
                if other["metadata"].get("finalizers"):
                    other["metadata"].setdefault("deletionTimestamp", timefmt.now_rfc3339())
                else:
                    self._remove(other_key, orphan=False)


def _builtin_kinds() -> list[Kind]:
    return [value for value in vars(kinds).values() if isinstance(value, Kind)]


def _replace_keeping(current: Obj, wanted: Obj) -> Obj:
    """An update: the new object, keeping the server's metadata and the status."""
    new = copy.deepcopy(wanted)
    meta = new.setdefault("metadata", {})
    old_meta = current["metadata"]
    for field in ("uid", "creationTimestamp", "generation", "deletionTimestamp"):
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    new["apiVersion"], new["kind"] = current["apiVersion"], current["kind"]
    if "status" in current:
        new["status"] = current["status"]
    else:
        new.pop("status", None)
    if _spec(new) != _spec(current):
        meta["generation"] = int(old_meta.get("generation", 1)) + 1
    return new


def _spec(obj: Obj) -> Obj:
    return {key: value for key, value in obj.items() if key not in ("metadata", "status")}


def _merge(base: Obj, patch: Obj) -> Obj:
    """A JSON merge of ``patch`` into ``base`` (the simulator's stand-in for apply)."""
    generation = base["metadata"].get("generation", 1)
    before = _spec(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = _merge_dict(base[key], value)
        elif key != "status":
            base[key] = value
    if _spec(base) != before:
        base["metadata"]["generation"] = int(generation) + 1
    return base


def _merge_dict(base: Obj, patch: Obj) -> Obj:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = _merge_dict(base[key], value)
        else:
            base[key] = value
    return base


def _allowed(review: Obj) -> Obj:
    answered = copy.deepcopy(review)
    answered["status"] = {
        "allowed": True,
        "reason": "a simulated cluster has no RBAC: every request is allowed",
    }
    return answered


def simulated_workloads(*, nodes: int) -> StatusFor:
    """The status a healthy cluster of ``nodes`` nodes gives workloads, as an embedded
    cluster's simulated workload controller writes it (none for an object that does
    not read as its kind: a real server would have refused it)."""

    def status_for(kind: Kind, obj: Obj) -> Obj | None:
        try:
            return workloadsim.simulated_status(kind, obj, nodes=nodes, now=datetime.now(UTC))
        except workloadsim.SimulationError:
            return None

    return status_for
