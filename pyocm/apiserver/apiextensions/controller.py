"""Keep the served resources in step with the stored CustomResourceDefinitions.

Routes change synchronously in a storage commit hook, so a custom resource can be
created the moment its CRD's creation is acknowledged; the status (NamesAccepted,
Established, acceptedNames, storedVersions) is written right after by a task. Deleting a
CRD deletes its custom resources first (finalizer
``customresourcecleanup.apiextensions.k8s.io``), then the CRD.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from pyocm.apiserver.apiextensions import customresource
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.registry import codec
from pyocm.apiserver.registry.builtin.apiextensions import CLEANUP_FINALIZER, set_crd_condition
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import DeleteOptions, Store
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.kube import status, timefmt

log = logging.getLogger("pyocm.apiserver.crd")

SYSTEM = UserInfo(name="system:apiserver", groups=(MASTERS,))
Obj = dict[str, Any]


class CrdController:
    def __init__(self, *, store: Store, catalog: Catalog, crd_info: ResourceInfo) -> None:
        self._store = store
        self._catalog = catalog
        self._crd_info = crd_info
        self._prefix = crd_info.key_prefix()
        self._pending: asyncio.Queue[str] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        _, crds = await self._store.list(self._crd_info, namespace="")
        for crd in crds:
            self._register(crd)
            self._pending.put_nowait(crd["metadata"]["name"])
        self._store.backend.add_commit_hook(self._on_commit)
        self._task = asyncio.create_task(self._run(), name="crd-controller")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            if not event.kv.key.startswith(self._prefix):
                continue
            name = event.kv.key[len(self._prefix) :]
            if event.type is EventType.DELETE:
                self._catalog.remove_owned_by(name)
                continue
            crd = codec.decode(event.kv)
            self._register(crd)
            self._pending.put_nowait(name)

    def _register(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        conflict = self._name_conflict(crd)
        self._catalog.remove_owned_by(name)
        if conflict:
            return
        try:
            infos = customresource.resources_for(crd)
        except Exception:  # a schema we cannot compile must not take the server down
            log.exception("cannot serve CustomResourceDefinition %s", name)
            return
        for info in infos:
            self._catalog.add(info, owner=name)

    def _name_conflict(self, crd: Obj) -> str:
        spec = crd.get("spec") or {}
        group = spec.get("group", "")
        names = spec.get("names") or {}
        for version in spec.get("versions") or []:
            existing = self._catalog.get(group, version.get("name", ""), names.get("plural", ""))
            if existing is not None and not isinstance(
                existing.strategy, customresource.CustomResourceStrategy
            ):
                return f'"{names.get("plural")}" is already in use'
        return ""

    async def _run(self) -> None:
        while True:
            name = await self._pending.get()
            try:
                await self._reconcile(name)
            except status.ApiError as err:
                if err.reason not in ("NotFound", "Conflict"):
                    log.warning("CustomResourceDefinition %s: %s", name, err.message)
                if err.reason == "Conflict":
                    self._pending.put_nowait(name)
            except Exception:
                log.exception("CustomResourceDefinition %s: reconcile failed", name)

    async def _reconcile(self, name: str) -> None:
        crd = await self._store.get(self._crd_info, namespace="", name=name)
        if crd["metadata"].get("deletionTimestamp"):
            await self._cleanup(crd)
            return
        wanted = self._status(crd)
        if crd.get("status") == wanted:
            return
        crd["status"] = wanted
        ctx = Context(user=SYSTEM, subresource="status")
        await self._store.update(self._crd_info, name=name, obj=crd, ctx=ctx)

    def _status(self, crd: Obj) -> Obj:
        spec = crd.get("spec") or {}
        old = crd.get("status") or {}
        conflict = self._name_conflict(crd)
        conditions = {c.get("type"): c for c in old.get("conditions") or []}
        names_ok = "True" if not conflict else "False"
        wanted_conditions = [
            _condition(
                conditions.get("NamesAccepted"),
                "NamesAccepted",
                names_ok,
                "NoConflicts" if not conflict else "NameConflict",
                conflict or "no conflicts found",
            ),
            _condition(
                conditions.get("Established"),
                "Established",
                names_ok,
                "InitialNamesAccepted" if not conflict else "NotAccepted",
                "the initial names have been accepted"
                if not conflict
                else "not all names are accepted",
            ),
        ]
        stored = list(old.get("storedVersions") or [])
        storage = customresource.storage_version(crd)
        if storage and storage not in stored:
            stored.append(storage)
        names = dict(spec.get("names") or {})
        return {
            "conditions": wanted_conditions,
            "acceptedNames": names if not conflict else old.get("acceptedNames", {}),
            "storedVersions": stored,
        }

    async def _cleanup(self, crd: Obj) -> None:
        """Delete every instance, then drop the finalizer (which completes the CRD's deletion)."""
        name = crd["metadata"]["name"]
        if CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        for info in self._catalog.by_kind(crd["spec"]["group"], crd["spec"]["names"]["kind"])[:1]:
            _, items = await self._store.list(info, namespace="")
            if items:
                await self._terminating(
                    crd, "InstanceDeletionInProgress", "CustomResource deletion is in progress"
                )
            for item in items:
                ctx = Context(user=SYSTEM, namespace=item["metadata"].get("namespace", ""))
                with contextlib.suppress(status.ApiError):
                    await self._store.delete(
                        info, name=item["metadata"]["name"], ctx=ctx, options=DeleteOptions()
                    )
            _, left = await self._store.list(info, namespace="")
            if left:  # instances with finalizers of their own: look again shortly
                await asyncio.sleep(1.0)
                self._pending.put_nowait(name)
                return
        crd = await self._terminating(crd, "InstanceDeletionCompleted", "removed all instances")
        crd["metadata"]["finalizers"] = [
            f for f in crd["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER
        ]
        await self._store.update(self._crd_info, name=name, obj=crd, ctx=Context(user=SYSTEM))

    async def _terminating(self, crd: Obj, reason: str, message: str) -> Obj:
        found: list[Obj] = (crd.get("status") or {}).get("conditions") or []
        condition: Obj = next((c for c in found if c.get("type") == "Terminating"), {})
        if condition.get("reason") == reason:
            return crd
        set_crd_condition(crd, type="Terminating", status="True", reason=reason, message=message)
        ctx = Context(user=SYSTEM, subresource="status")
        stored, _ = await self._store.update(
            self._crd_info, name=crd["metadata"]["name"], obj=crd, ctx=ctx
        )
        return stored


def _condition(old: Obj | None, kind: str, value: str, reason: str, message: str) -> Obj:
    if (
        old
        and old.get("status") == value
        and old.get("reason") == reason
        and old.get("message") == message
    ):
        return old
    return {
        "type": kind,
        "status": value,
        "lastTransitionTime": timefmt.now_rfc3339(),
        "reason": reason,
        "message": message,
    }
