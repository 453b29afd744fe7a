"""Garbage collection by ownerReferences.

Background: once every owner an object names is gone, the object is deleted.
Foreground (owner has the ``foregroundDeletion`` finalizer): the owner's dependents are
deleted first, then the finalizer is removed. Orphan (``orphan`` finalizer): dependents
lose their references to the owner, then the finalizer is removed.

The collector keeps an index of live UIDs and of dependents per owner UID, fed by
storage commits, so it never scans the store after start.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any

from pyocm.apiserver.controllers.base import SYSTEM, KeyedLoop
from pyocm.apiserver.registry import codec
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.base.clock import Clock
from pyocm.kube import status

Obj = dict[str, Any]
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
#: A new object may name an owner that is being created in the same moment; look again
#: after this long before deciding its owners are absent.
DANGLING_GRACE = 2.0


class GarbageCollector:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        self._uid_key: dict[str, str] = {}
        self._dependents: defaultdict[str, set[str]] = defaultdict(set)
        self._owners_of: dict[str, tuple[str, ...]] = {}
        self.loop = KeyedLoop("garbage-collector", self._reconcile, clock=clock)

    async def start(self) -> None:
        for info in self._resources():
            _, kvs = await self._state.store.backend.list(info.key_prefix())
            for kv in kvs:
                self._track(kv.key, codec.decode(kv))
        for key, owners in list(self._owners_of.items()):
            if any(o not in self._uid_key for o in owners):
                self.loop.add(key)
        self._state.store.backend.add_commit_hook(self._on_commit)
        self.loop.start()

    def _resources(self) -> list[ResourceInfo]:
        seen: dict[str, ResourceInfo] = {}
        for info in self._state.catalog.all():
            if not info.virtual:
                seen.setdefault(info.key_prefix(), info)
        return list(seen.values())

    def _track(self, key: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if uid:
            self._uid_key[uid] = key
        owners = tuple(str(r.get("uid")) for r in meta.get("ownerReferences") or [] if r.get("uid"))
        self._untrack_owners(key)
        if owners:
            self._owners_of[key] = owners
            for owner in owners:
                self._dependents[owner].add(key)

    def _untrack_owners(self, key: str) -> None:
        for owner in self._owners_of.pop(key, ()):
            deps = self._dependents.get(owner)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[owner]

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            if self._cannot_matter(event):
                continue
            key = event.kv.key
            obj = codec.decode(event.kv)
            uid = str((obj.get("metadata") or {}).get("uid") or "")
            if event.type is EventType.DELETE:
                self._uid_key.pop(uid, None)
                self._untrack_owners(key)
                for dependent in list(self._dependents.get(uid, ())):
                    self.loop.add(dependent)
                continue
            self._track(key, obj)
            finalizers = (obj.get("metadata") or {}).get("finalizers") or []
            if (obj.get("metadata") or {}).get("deletionTimestamp") and (
                ORPHAN in finalizers or FOREGROUND in finalizers
            ):
                self.loop.add(key)
            owners = self._owners_of.get(key, ())
            if owners and any(o not in self._uid_key for o in owners):
                self.loop.add_after(key, DANGLING_GRACE)

    def _cannot_matter(self, event: Event) -> bool:
        """An update of an object seen before (its uid, mapped then, never changes) that
        has no owners, had none, and is not being deleted changes nothing here. Most
        writes are such (lease renewals, status), so they are not decoded at all."""
        value = event.kv.value
        return (
            event.type is EventType.PUT
            and event.prev is not None
            and event.kv.key not in self._owners_of
            and b'"ownerReferences"' not in value
            and b'"deletionTimestamp"' not in value
        )

    async def _reconcile(self, key: str) -> float | None:
        kv = await self._state.store.backend.get(key)
        if kv is None:
            return None
        obj = codec.decode(kv)
        info = self._info_for(key)
        if info is None:
            return None
        meta = obj["metadata"]
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp") and ORPHAN in finalizers:
            await self._orphan(info, obj)
            return None
        if meta.get("deletionTimestamp") and FOREGROUND in finalizers:
            return await self._foreground(info, obj)
        owners = self._owners_of.get(key, ())
        if owners and all(o not in self._uid_key for o in owners):
            with contextlib.suppress(status.ApiError):
                await self._state.store.delete(
                    info,
                    name=meta["name"],
                    ctx=Context(user=SYSTEM, namespace=meta.get("namespace", "")),
                    options=DeleteOptions(),
                )
        return None

    def _info_for(self, key: str) -> ResourceInfo | None:
        for info in self._resources():
            if key.startswith(info.key_prefix()):
                return info
        return None

    async def _orphan(self, info: ResourceInfo, owner: Obj) -> None:
        """Drop the owner's reference from every dependent, then its ``orphan`` finalizer.

        A dependent that could not be updated (a concurrent write, say) keeps the
        finalizer in place and the error goes to the loop, which retries the owner: were
        the finalizer removed, the owner would go and the collector would then delete
        the still-referencing dependent, the opposite of Orphan."""
        uid = owner["metadata"]["uid"]
        failed: status.ApiError | None = None
        for dep_key in list(self._dependents.get(uid, ())):
            try:
                await self._drop_reference(dep_key, uid)
            except status.ApiError as err:
                if err.reason != "NotFound":
                    failed = err
        if failed is not None:
            raise failed
        await self._remove_finalizer(info, owner, ORPHAN)

    async def _drop_reference(self, dep_key: str, uid: str) -> None:
        dep_info = self._info_for(dep_key)
        kv = await self._state.store.backend.get(dep_key)
        if dep_info is None or kv is None:
            return
        dep = codec.decode(kv)
        dep["metadata"]["ownerReferences"] = [
            r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
        ]
        await self._state.store.update(
            dep_info,
            name=dep["metadata"]["name"],
            obj=dep,
            ctx=Context(user=SYSTEM, namespace=dep["metadata"].get("namespace", "")),
        )

    async def _foreground(self, info: ResourceInfo, owner: Obj) -> float | None:
        uid = owner["metadata"]["uid"]
        remaining = list(self._dependents.get(uid, ()))
        for dep_key in remaining:
            dep_info = self._info_for(dep_key)
            kv = await self._state.store.backend.get(dep_key)
            if dep_info is None or kv is None:
                continue
            dep = codec.decode(kv)
            if dep["metadata"].get("deletionTimestamp"):
                continue
            with contextlib.suppress(status.ApiError):
                await self._state.store.delete(
                    dep_info,
                    name=dep["metadata"]["name"],
                    ctx=Context(user=SYSTEM, namespace=dep["metadata"].get("namespace", "")),
                    options=DeleteOptions(propagation_policy="Foreground"),
                )
        if remaining:
            return 1.0
        await self._remove_finalizer(info, owner, FOREGROUND)
        return None

    async def _remove_finalizer(self, info: ResourceInfo, obj: Obj, finalizer: str) -> None:
        meta = obj["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        await self._state.store.update(
            info,
            name=meta["name"],
            obj=obj,
            ctx=Context(user=SYSTEM, namespace=meta.get("namespace", "")),
        )
