"""Finish deleting namespaces: delete their content, then the ``kubernetes`` finalizer.

A deleted Namespace turns Terminating; this controller deletes every namespaced object
in it (each honouring its own finalizers), and once nothing is left removes
``kubernetes`` from ``spec.finalizers`` through ``/finalize``, which lets the Namespace go.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pyocm.apiserver.controllers.base import SYSTEM, KeyedLoop
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.base.clock import Clock
from pyocm.kube import status

Obj = dict[str, Any]
FINALIZER = "kubernetes"
RECHECK_SECONDS = 1.0


class NamespaceController:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        info = state.catalog.get("", "v1", "namespaces")
        assert info is not None
        self._info = info
        self._prefix = info.key_prefix()
        self.loop = KeyedLoop("namespace-controller", self._reconcile, clock=clock)

    async def start(self) -> None:
        _, items = await self._state.store.list(self._info, namespace="")
        for ns in items:
            if ns["metadata"].get("deletionTimestamp"):
                self.loop.add(ns["metadata"]["name"])
        self._state.store.backend.add_commit_hook(self._on_commit)
        self.loop.start()

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            if event.type is EventType.PUT and event.kv.key.startswith(self._prefix):
                self.loop.add(event.kv.key[len(self._prefix) :])

    async def _reconcile(self, name: str) -> float | None:
        ns = await self._state.store.get(self._info, namespace="", name=name)
        if not ns["metadata"].get("deletionTimestamp"):
            return None
        remaining = await self._delete_content(name)
        if remaining:
            return RECHECK_SECONDS
        finalizers = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != FINALIZER]
        ns.setdefault("spec", {})["finalizers"] = finalizers
        await self._state.store.update(
            self._info, name=name, obj=ns, ctx=Context(user=SYSTEM, subresource="finalize")
        )
        return None

    def _namespaced(self) -> list[ResourceInfo]:
        seen: dict[str, ResourceInfo] = {}
        for info in self._state.catalog.all():
            if info.namespaced and not info.virtual:
                seen.setdefault(info.key_prefix(), info)
        return list(seen.values())

    async def _delete_content(self, namespace: str) -> int:
        remaining = 0
        for info in self._namespaced():
            _, items = await self._state.store.list(info, namespace=namespace)
            for item in items:
                remaining += 1
                if item["metadata"].get("deletionTimestamp"):
                    continue
                with contextlib.suppress(status.ApiError):
                    await self._state.store.delete(
                        info,
                        name=item["metadata"]["name"],
                        ctx=Context(user=SYSTEM, namespace=namespace),
                        options=DeleteOptions(),
                    )
        return remaining
