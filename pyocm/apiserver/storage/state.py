"""The committed state a store serves reads from: every live key's newest value.

Both kinds of store keep it in memory: the log-structured ones as the state their log
holds, the etcd one as what its watch has brought (kube-apiserver's watch cache). Keys
are kept sorted beside the map so a prefix is a range found in O(log n).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from pyocm.apiserver.storage.fanout import prefix_span
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


class State:
    def __init__(self, kvs: Iterable[KeyValue] = ()) -> None:
        self.kvs = {kv.key: kv for kv in kvs}
        self.keys = sorted(self.kvs)

    def get(self, key: str) -> KeyValue | None:
        return self.kvs.get(key)

    def span(self, prefix: str) -> tuple[int, int]:
        """Where the keys under ``prefix`` are in :attr:`keys`."""
        return prefix_span(self.keys, prefix)

    def range(self, prefix: str) -> list[KeyValue]:
        """The live values under ``prefix``, sorted by key."""
        start, end = self.span(prefix)
        kvs = self.kvs
        return [kvs[key] for key in self.keys[start:end]]

    def count(self, prefix: str) -> int:
        start, end = self.span(prefix)
        return end - start

    def apply(self, event: Event) -> None:
        key = event.kv.key
        if event.type is EventType.PUT:
            if key not in self.kvs:
                bisect.insort(self.keys, key)
            self.kvs[key] = event.kv
        elif self.kvs.pop(key, None) is not None:
            del self.keys[bisect.bisect_left(self.keys, key)]


def as_of(current: list[KeyValue], changes: list[Event]) -> list[KeyValue]:
    """``current`` (sorted by key) as it was before ``changes`` (every change made to
    those keys since, oldest first): each undone, newest first."""
    past = {kv.key: kv for kv in current}
    for event in reversed(changes):
        if event.prev is None:
            past.pop(event.kv.key, None)
        else:
            past[event.kv.key] = event.prev
    return [past[key] for key in sorted(past)]
