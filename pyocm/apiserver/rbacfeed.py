"""Keep the in-memory RBAC index equal to the stored RBAC objects.

The index is loaded at start and then updated from storage commit hooks, which run
before a write is acknowledged: a role or binding change is in force for the very next
request, and a deleted binding revokes access at once.
"""

from __future__ import annotations

from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.apiserver.registry import codec
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.storage.interface import Event, EventType

RBAC_GROUP = "rbac.authorization.k8s.io"
KINDS = {
    "roles": "Role",
    "clusterroles": "ClusterRole",
    "rolebindings": "RoleBinding",
    "clusterrolebindings": "ClusterRoleBinding",
}


class RbacFeed:
    def __init__(self, *, store: Store, catalog: Catalog, index: RbacIndex) -> None:
        self._store = store
        self._catalog = catalog
        self._index = index
        self._prefixes: dict[str, str] = {}

    async def start(self) -> None:
        for plural, kind in KINDS.items():
            info = self._catalog.get(RBAC_GROUP, "v1", plural)
            assert info is not None, plural
            self._prefixes[info.key_prefix()] = kind
            _, objects = await self._store.list(info, namespace="")
            for obj in objects:
                self._index.upsert(kind, obj)
        self._store.backend.add_commit_hook(self._on_commit)

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            kind = self._kind_of(event.kv.key)
            if kind is None:
                continue
            obj = codec.decode(event.kv)
            if event.type is EventType.DELETE:
                meta = obj.get("metadata") or {}
                self._index.delete(
                    kind,
                    namespace=str(meta.get("namespace") or ""),
                    name=str(meta.get("name") or ""),
                )
            else:
                self._index.upsert(kind, obj)

    def _kind_of(self, key: str) -> str | None:
        if not key.startswith("/registry/rbac.authorization.k8s.io/"):
            return None
        for prefix, kind in self._prefixes.items():
            if key.startswith(prefix):
                return kind
        return None
