"""ClusterRole aggregation: roles with ``aggregationRule`` get the union of the rules of
the ClusterRoles their selectors match, kept current as those change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from pyocm.apiserver.authorization import aggregation
from pyocm.apiserver.controllers.base import SYSTEM, KeyedLoop
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage.interface import Event
from pyocm.base.clock import Clock


class AggregationController:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        info = state.catalog.get("rbac.authorization.k8s.io", "v1", "clusterroles")
        assert info is not None
        self._info = info
        self._prefix = info.key_prefix()
        self.loop = KeyedLoop("clusterrole-aggregation", self._reconcile, clock=clock)
        #: The aggregating roles' selectors as of the last reconcile (None: not read yet).
        self._selectors: list[Mapping[str, Any]] | None = None

    async def start(self) -> None:
        self._state.store.backend.add_commit_hook(self._on_commit)
        self.loop.start()
        self.loop.add("all")

    def _on_commit(self, events: list[Event]) -> None:
        if any(e.kv.key.startswith(self._prefix) and self._may_affect(e) for e in events):
            self.loop.add("all")

    def _may_affect(self, event: Event) -> bool:
        """Whether the change can alter an aggregate. Each reconcile reads every
        ClusterRole, and a joining fleet creates one per cluster that no aggregating
        selector picks; recomputing on each of those made the join quadratic."""
        if self._selectors is None:
            return True
        versions = [event.kv] if event.prev is None else [event.prev, event.kv]
        return any(
            aggregation.may_affect(orjson.loads(kv.value), self._selectors) for kv in versions
        )

    async def _reconcile(self, key: str) -> float | None:
        # Unknown while reading: a commit that lands before the list is taken counts as
        # relevant (another pass), one after it is judged against the selectors it read.
        self._selectors = None
        _, roles = await self._state.store.list(self._info, namespace="")
        self._selectors = aggregation.all_selectors(roles)
        wanted = aggregation.aggregate(roles)
        by_name = {r["metadata"]["name"]: r for r in roles}
        for name, rules in wanted.items():
            role = by_name.get(name)
            if role is None or (role.get("rules") or []) == rules:
                continue
            role["rules"] = rules
            await self._state.store.update(
                self._info, name=name, obj=role, ctx=Context(user=SYSTEM)
            )
        return None
