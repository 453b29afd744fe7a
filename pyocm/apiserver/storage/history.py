"""The recent changes a watch resumes from, shared by every backend.

A watch that starts at a past revision, and a list at a past revision, ask for the
changes after it under one prefix. The history holds minutes of every object's writes,
so walking all of it for each such request costs the write rate times the rate of
resuming watches, and both grow with a fleet: each agent's watches end every few
minutes and resume from where they were. Each change is therefore also filed under
every directory of its key (each prefix of it ending in ``/`` but the root), and a replay
walks only the directory its prefix lies in: a watch of one cluster's namespace, or of one
resource, passes over its own changes only, not over every Lease renewal. A watch of one
key alone first asks whether that key changed at all, and walks its directory if so.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from pyocm.apiserver.storage.interface import Event


class Retention(Protocol):
    """How long changes are kept (:class:`~pyocm.apiserver.storage.logstructured.Options`):
    at most ``history_size`` unless younger than ``history_min_age`` seconds, none older
    than ``history_max_age`` (never less than ``history_min_age``)."""

    @property
    def history_size(self) -> int: ...

    @property
    def history_min_age(self) -> float: ...

    @property
    def history_max_age(self) -> float: ...

    @property
    def clock(self) -> Callable[[], float]: ...


class History:
    """Changes in revision order, with ``floor`` the oldest revision a watch may start
    after."""

    def __init__(self, retention: Retention, *, floor: int) -> None:
        self.floor = floor
        self._retention = retention
        self._events: deque[tuple[float, Event]] = deque()
        # Key -> the revision of its newest change kept. A watch of one object resuming
        # (an agent's watch of its own cluster, every few minutes) learns from it that
        # nothing happened to the object, which is usual, without a walk.
        self._newest: dict[str, int] = {}
        # Directory (below the root, which would be _events again) -> its changes in
        # revision order: a suffix of one is what a replay walks. Most directories hold a
        # change or two (one cluster's namespace), so each starts as a list, 8 bytes a
        # change, and becomes a deque, which drops its oldest in O(1) but costs 600
        # bytes, once it outgrows _SMALL.
        self._filed: dict[str, list[Event] | deque[Event]] = {}

    def __len__(self) -> int:
        return len(self._events)

    def remember(self, batch: Iterable[Event]) -> None:
        """Keep ``batch`` (newer than everything kept), then forget what retention drops."""
        retention = self._retention
        now = retention.clock()
        filed = self._filed
        for event in batch:
            self._events.append((now, event))
            self._newest[event.kv.key] = event.revision
            for directory in _below_root(event.kv.key):
                changes = filed.get(directory)
                if changes is None:
                    filed[directory] = [event]
                    continue
                changes.append(event)
                if len(changes) > _SMALL and isinstance(changes, list):
                    filed[directory] = deque(changes)
        limit, min_age = retention.history_size, retention.history_min_age
        while len(self._events) > limit and now - self._events[0][0] >= min_age:
            self._forget()
        expired = now - max(retention.history_max_age, min_age)
        while self._events and self._events[0][0] < expired:
            self._forget()

    def _forget(self) -> None:
        """Drop the oldest revision: all its changes, since an etcd transaction of
        another client may have written several keys at one revision."""
        self.floor = revision = self._events[0][1].revision
        while self._events and self._events[0][1].revision == revision:
            event = self._events.popleft()[1]
            key = event.kv.key
            if self._newest.get(key) == event.revision:  # the key's newest change went
                del self._newest[key]
            for directory in _below_root(key):
                changes = self._filed[directory]
                oldest = changes.popleft() if isinstance(changes, deque) else changes.pop(0)
                assert oldest is event, "a directory's changes are kept in revision order"
                if not changes:
                    del self._filed[directory]

    def replay(self, prefix: str, after_revision: int, *, exact: bool = False) -> list[Event]:
        """The changes after ``after_revision`` under ``prefix`` (to the key ``prefix``
        alone with ``exact``), in revision order. Walks back from the newest, as a
        resuming watcher is usually only a little behind."""
        if exact and self._newest.get(prefix, 0) <= after_revision:
            return []
        directory = prefix[: prefix.rfind("/") + 1]
        candidates: Iterable[Event]
        filed = len(directory) > 1
        if filed:
            candidates = reversed(self._filed.get(directory, ()))
        else:
            candidates = (event for _, event in reversed(self._events))
        # Whether each candidate is under the prefix: all of a directory's changes are.
        every = filed and directory == prefix and not exact
        replay = []
        for event in candidates:
            if event.revision <= after_revision:
                break
            key = event.kv.key
            if every or (key == prefix if exact else key.startswith(prefix)):
                replay.append(event)
        replay.reverse()
        return replay


#: Changes a directory holds in a list before it becomes a deque.
_SMALL = 32


def _below_root(key: str) -> Iterator[str]:
    """The directories of ``key`` a change is filed under (every one but the root)."""
    for directory in directories(key):
        if len(directory) > 1:
            yield directory


def directories(key: str) -> Iterator[str]:
    """Every prefix of ``key`` that ends in ``/``, shortest first."""
    end = key.find("/")
    while end >= 0:
        yield key[: end + 1]
        end = key.find("/", end + 1)
