"""This agent's AppliedManifestWorks as last seen: what stands in for upstream's
AppliedManifestWork informer, the managed cluster being reached without a watch.

:class:`AppliedWorkCache` is filled by the agent's periodic LIST (:meth:`relist`, which
replaces it whole, so it holds only what exists) and refreshed by every read and write
of an AppliedManifestWork made through :attr:`AppliedWorkCache.spoke`, the
:class:`~pyocm.work.agent.spoke.SpokeClient` the agent's controllers share. So the
AppliedManifestWork controllers, woken for every record at every list, read their
record from memory: a steady agent makes one LIST per interval and no GET per record.

A cached record can be stale (another client wrote it since the last list). That is
safe as with any informer's cache: every write of a record carries its resourceVersion,
and a write refused as stale (409) or made on a record gone (404) drops the record from
the cache, so the controller's retry reads it afresh. A delete drops it too.
"""

from __future__ import annotations

import copy
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models
from pyocm.api.models.work_v1 import AppliedManifestWork
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.spoke import Propagation, SpokeClient

Obj = dict[str, Any]


class AppliedWorkCache:
    """The records of the agent ``agent_id`` by name, over ``spoke``."""

    def __init__(self, spoke: SpokeClient, *, agent_id: str) -> None:
        self.agent_id = agent_id
        self.spoke: SpokeClient = _WriteThrough(spoke, self)
        self._raw = spoke
        self._records: dict[str, Obj] = {}

    def __len__(self) -> int:
        return len(self._records)

    async def relist(self) -> list[str]:
        """LIST the records, keep this agent's (replacing what was cached), and return
        their names. Errors are the cluster's :class:`ApiError`."""
        found = await self._raw.list(ocm.APPLIED_MANIFEST_WORK)
        mine = {
            str(item["metadata"]["name"]): item
            for item in found
            if (item.get("spec") or {}).get("agentID") == self.agent_id
        }
        self._records = mine
        return list(mine)

    async def get(self, name: str) -> AppliedManifestWork | None:
        """The record ``name`` as cached (a copy, the caller's to change), else as read
        from the cluster; None when it does not exist."""
        cached = self._records.get(name)
        if cached is not None:
            return models.view(AppliedManifestWork, copy.deepcopy(cached))
        try:
            found = await self.spoke.get(ocm.APPLIED_MANIFEST_WORK, name)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        return models.view(AppliedManifestWork, found)

    def seen(self, obj: Obj) -> None:
        """``obj`` as the cluster answered a read or write of it."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._records.pop(name, None)  # the write removed it
        elif name:
            self._records[name] = copy.deepcopy(obj)

    def forget(self, name: str) -> None:
        self._records.pop(name, None)


def _is_record(kind: Kind) -> bool:
    return (kind.group, kind.plural) == (
        ocm.APPLIED_MANIFEST_WORK.group,
        ocm.APPLIED_MANIFEST_WORK.plural,
    )


class _WriteThrough:
    """``spoke``, telling ``cache`` what it reads and writes of AppliedManifestWorks."""

    def __init__(self, spoke: SpokeClient, cache: AppliedWorkCache) -> None:
        self._spoke = spoke
        self._cache = cache

    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        return await self._spoke.kind_for(api_version=api_version, kind=kind)

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj:
        try:
            found = await self._spoke.get(kind, name, namespace=namespace)
        except ApiError as err:
            self._failed(kind, name, err)
            raise
        if _is_record(kind):
            self._cache.seen(found)
        return found

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        return await self._spoke.list(kind, namespace=namespace)

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        created = await self._spoke.create(kind, obj)
        if _is_record(kind):
            self._cache.seen(created)
        return created

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        try:
            stored = await self._spoke.update(kind, obj, subresource=subresource)
        except ApiError as err:
            self._failed(kind, str((obj.get("metadata") or {}).get("name") or ""), err)
            raise
        if _is_record(kind):
            self._cache.seen(stored)
        return stored

    async def apply(self, kind: Kind, obj: Obj, *, field_manager: str, force: bool) -> Obj:
        if _is_record(kind):
            self._cache.forget(str((obj.get("metadata") or {}).get("name") or ""))
        return await self._spoke.apply(kind, obj, field_manager=field_manager, force=force)

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        propagation: Propagation | None = None,
    ) -> None:
        try:
            await self._spoke.delete(
                kind, name, namespace=namespace, uid=uid, propagation=propagation
            )
        finally:
            if _is_record(kind):
                # Deleted, or only marked (finalizers): either way the next read asks.
                self._cache.forget(name)

    async def dry_run_create_as(self, kind: Kind, obj: Obj, *, user: str) -> Obj:
        return await self._spoke.dry_run_create_as(kind, obj, user=user)

    def _failed(self, kind: Kind, name: str, err: ApiError) -> None:
        if _is_record(kind) and err.code in (404, 409):
            self._cache.forget(name)
