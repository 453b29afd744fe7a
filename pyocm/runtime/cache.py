"""An informer's local copy of one kind: objects by key, plus named indexes.

Keys are client-go's: ``namespace/name`` for namespaced objects, ``name`` otherwise.
Objects handed out are the cache's own; callers copy before they change one.

Indexes are client-go's Indexers: an index function maps an object to the values it is
filed under (its namespace, its owners' uids, a label's value), and the index maps
each value to the keys filed there, so a mapper finds "the bindings of this set" without
reading every binding. A store keeps only the indexes asked for: at 10,000 clusters an
unused index is memory for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, KeysView
from typing import Any

from pyocm.kube.sharing import SharedValues

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


def split_key(key: str) -> tuple[str | None, str]:
    """``(namespace, name)``; namespace is None for cluster-scoped keys."""
    namespace, _, name = key.rpartition("/")
    return (namespace or None), name


def by_namespace(obj: Obj) -> list[str]:
    """An index function: the object's namespace."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [namespace] if namespace else []


def by_owner_uid(obj: Obj) -> list[str]:
    """An index function: the uids of the object's owners (client-go's owner index)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [str(ref["uid"]) for ref in refs if isinstance(ref, dict) and ref.get("uid")]


def by_label(label: str) -> IndexFunc:
    """An index function: the value of one label, for objects that carry it."""

    def index(obj: Obj) -> list[str]:
        value = ((obj.get("metadata") or {}).get("labels") or {}).get(label)
        return [value] if value is not None else []

    return index


#: Strings up to this long are shared between cached objects.
SHARED_STRING_MAX = 64
#: Values new on every write or unique to one object: sharing them only fills the table.
_VOLATILE = frozenset({"resourceVersion", "uid", "creationTimestamp", "renewTime", "time"})
#: One copy of each shared string.
_SHARED: SharedValues[str, str] = SharedValues(lambda text: text, limit=1 << 16)


def share_strings(value: Any) -> None:
    """Replace, in place, each short string inside ``value`` by one shared copy.

    A fleet's caches hold thousands of objects repeating the same condition types,
    reasons, verbs, kinds and label values; each parsed copy would keep its own.
    Sharing makes a cached ManagedCluster about a third smaller (measured: 5.8 KiB to
    3.7 KiB).
    """
    if isinstance(value, dict):
        for key, item in value.items():
            if type(item) is str:
                if len(item) <= SHARED_STRING_MAX and key not in _VOLATILE:
                    value[key] = _SHARED.get(item)
            elif isinstance(item, dict | list):
                share_strings(item)
    elif isinstance(value, list):
        for at, item in enumerate(value):
            if type(item) is str:
                if len(item) <= SHARED_STRING_MAX:
                    value[at] = _SHARED.get(item)
            elif isinstance(item, dict | list):
                share_strings(item)


class Store:
    def __init__(self) -> None:
        self._items: dict[str, Obj] = {}
        self._index_funcs: dict[str, IndexFunc] = {}
        self._indexes: dict[str, dict[str, set[str]]] = {}

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index (existing objects are indexed at once)."""
        if name in self._index_funcs:
            raise ValueError(f"index {name!r} exists")
        self._index_funcs[name] = func
        self._indexes[name] = {}
        for key, obj in self._items.items():
            self._index(name, key, obj)

    def has_index(self, name: str) -> bool:
        return name in self._index_funcs

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def keys(self) -> list[str]:
        return [*self._items]

    def objects(self) -> list[Obj]:
        return [*self._items.values()]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._items])

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def by_index(self, name: str, value: str) -> list[Obj]:
        """The objects whose index ``name`` holds ``value``, by key."""
        return [self._items[key] for key in self.index_keys(name, value)]

    def index_keys(self, name: str, value: str) -> list[str]:
        """The keys of those objects, sorted (client-go's IndexKeys)."""
        return sorted(self._indexes[name].get(value, ()))

    def index_set(self, name: str, value: str) -> frozenset[str]:
        """Those keys as a set, unsorted: what set algebra over a large index needs
        (sorting 10,000 keys costs more than intersecting them)."""
        return frozenset(self._indexes[name].get(value, ()))

    def key_view(self) -> KeysView[str]:
        """Every key, as a live view: read it before the store next changes (no await
        between), or copy it."""
        return self._items.keys()

    def index_count(self, name: str, value: str) -> int:
        """How many objects index ``name`` holds under ``value``, without listing them."""
        return len(self._indexes[name].get(value, ()))

    def __len__(self) -> int:
        return len(self._items)

    def upsert(self, obj: Obj) -> Obj | None:
        """Store ``obj``; return what it replaced."""
        key = key_of(obj)
        share_strings(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name in self._index_funcs:
            self._index(name, key, obj)
        return old

    def delete(self, key: str) -> Obj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _index(self, name: str, key: str, obj: Obj) -> None:
        for value in self._index_funcs[name](obj):
            self._indexes[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, func in self._index_funcs.items():
            index = self._indexes[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
