"""The recent changes a watch resumes from, shared by every backend.

A watch that starts at a past revision, and a list at a past revision, ask for the
changes after it under one prefix. The history holds minutes of every object's writes,
so walking all of it for each such request costs the write rate times the rate of
resuming watches, and both grow with a fleet: each agent's watches end every few
minutes and resume from where they were. Each change is therefore also filed under
every directory of its key (each prefix of it ending in ``/``), and a replay walks only
the directory its prefix lies in: a watch of one cluster's namespace, or of one
resource, passes over its own changes only, not over every Lease renewal. A watch of one
key alone walks that key's own changes.
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
    after. ``forgotten`` is called with each change as it leaves."""

    def __init__(
        self,
        retention: Retention,
        *,
        floor: int,
        forgotten: Callable[[Event], None] | None = None,
    ) -> None:
        self.floor = floor
        self._retention = retention
        self._forgotten = forgotten
        self._events: deque[tuple[float, Event]] = deque()
        # Directory -> its changes, and key -> its changes, in revision order: a suffix
        # of one is what a replay walks. Apart, as a key may end in "/" too.
        self._filed: dict[str, deque[Event]] = {}
        self._by_key: dict[str, deque[Event]] = {}

    def __len__(self) -> int:
        return len(self._events)

    def remember(self, batch: Iterable[Event]) -> None:
        """Keep ``batch`` (newer than everything kept), then forget what retention drops."""
        retention = self._retention
        now = retention.clock()
        for event in batch:
            self._events.append((now, event))
            key = event.kv.key
            for index, name in self._filings(key):
                filed = index.get(name)
                if filed is None:
                    filed = index[name] = deque()
                filed.append(event)
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
            for index, name in self._filings(event.kv.key):
                filed = index[name]
                oldest = filed.popleft()
                assert oldest is event, "changes are filed in revision order"
                if not filed:
                    del index[name]
            if self._forgotten is not None:
                self._forgotten(event)

    def _filings(self, key: str) -> Iterator[tuple[dict[str, deque[Event]], str]]:
        yield self._by_key, key
        for directory in directories(key):
            yield self._filed, directory

    def replay(self, prefix: str, after_revision: int, *, exact: bool = False) -> list[Event]:
        """The changes after ``after_revision`` under ``prefix`` (to the key ``prefix``
        alone with ``exact``), in revision order. Walks back from the newest, as a
        resuming watcher is usually only a little behind."""
        directory = prefix[: prefix.rfind("/") + 1]
        if exact:
            candidates: Iterable[Event] = reversed(self._by_key.get(prefix, ()))
        elif directory:
            candidates = reversed(self._filed.get(directory, ()))
        else:
            candidates = (event for _, event in reversed(self._events))
        every = exact or directory == prefix  # each candidate is under the prefix
        replay = []
        for event in candidates:
            if event.revision <= after_revision:
                break
            if every or event.kv.key.startswith(prefix):
                replay.append(event)
        replay.reverse()
        return replay


def directories(key: str) -> Iterator[str]:
    """Every prefix of ``key`` that ends in ``/``, shortest first."""
    end = key.find("/")
    while end >= 0:
        yield key[: end + 1]
        end = key.find("/", end + 1)
