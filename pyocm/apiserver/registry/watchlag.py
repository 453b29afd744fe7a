"""What a watch without a resourceVersion sees of objects deleted just before it.

kube-apiserver serves such a watch ("" or "0") from its watch cache, not from etcd: the
initial ADDED events are the cache's state, which trails etcd by the time a committed
event takes to reach the cache. An object deleted moments before the watch started is
still in that state, so the watch sends it as ADDED and then its DELETED event once the
cache catches up. (A watch with ``sendInitialEvents`` waits for the cache to be fresh
first, and lists are consistent reads: neither sees such objects.)

Clients depend on it: ``clusteradm delete clusterset X`` starts a watch with
``fieldSelector=metadata.name=X`` alongside its DELETE and returns on DELETED, and that
watch often reaches the server after the delete. pyocm's watches start from the
committed state itself, so they would show such a client nothing at all; this module
keeps the deletions of the last :data:`LAG_SECONDS` so a watch can show them as a
trailing cache would: ADDED with the last state, then DELETED.
"""

from __future__ import annotations

import time
import weakref
from collections import deque

from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.storage.interface import Event, EventType

#: How far the emulated cache trails the store. kube's trails etcd by milliseconds on an
#: idle server and by much more on a busy one; a client's watch sent with its delete
#: must find the deletion even when this server is busy.
LAG_SECONDS = 1.0
#: At most this many deletions are kept (a namespace deletion removes many at once).
LIMIT = 10_000


class RecentDeletes:
    """The store's deletions of the last :data:`LAG_SECONDS`, oldest first (a commit hook)."""

    def __init__(self, *, lag: float = LAG_SECONDS, limit: int = LIMIT) -> None:
        self.lag = lag
        self._events: deque[tuple[float, Event]] = deque(maxlen=limit)

    def __call__(self, events: list[Event]) -> None:
        now = time.monotonic()
        for event in events:
            if event.type is EventType.DELETE and event.prev is not None:
                self._events.append((now, event))
        self._expire(now)

    def _expire(self, now: float) -> None:
        while self._events and self._events[0][0] < now - self.lag:
            self._events.popleft()

    def under(self, prefix: str, *, upto: int) -> list[Event]:
        """The last deletion of each key under ``prefix`` at or below revision ``upto``."""
        self._expire(time.monotonic())
        last: dict[str, Event] = {}
        for _, event in self._events:
            if event.revision <= upto and event.kv.key.startswith(prefix):
                last[event.kv.key] = event
        return list(last.values())


_trackers: weakref.WeakKeyDictionary[Store, RecentDeletes] = weakref.WeakKeyDictionary()


def track(store: Store) -> None:
    """Start keeping ``store``'s deletions (once, when the server starts)."""
    if store not in _trackers:
        tracker = _trackers[store] = RecentDeletes()
        store.backend.add_commit_hook(tracker)


def recent_deletes(store: Store, prefix: str, *, upto: int) -> list[Event]:
    tracker = _trackers.get(store)
    return [] if tracker is None else tracker.under(prefix, upto=upto)
