"""Fan-out of committed events to in-process watchers, shared by every backend.

Each watcher has a bounded queue; events are routed by prefix (or by key, for a watch of
one key alone), so an event visits only the watchers it matches. A watcher that falls
too far behind is cut off (``overflowed``) rather than holding memory without bound.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from collections.abc import Callable

from pyocm.apiserver.storage.interface import Event, EventType, KeyValue

#: Events committed together, in revision order.
Batch = list[Event]


class Subscription:
    """One watcher's bounded queue of live events.

    Iteration ends when the store closes (after the queued events) or at once when the
    queue overflowed, which drops the queue so a stuck client holds no memory.
    """

    __slots__ = (
        "_busy",
        "_due",
        "_limit",
        "_queue",
        "_revision",
        "_ticker",
        "_waiter",
        "closed",
        "exact",
        "overflowed",
        "prefix",
    )

    def __init__(self, prefix: str, *, limit: int, exact: bool = False) -> None:
        self.prefix = prefix
        self.exact = exact  # the key ``prefix`` alone
        self.closed = False
        self.overflowed = False
        self._limit = limit
        self._queue: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._revision: Callable[[], int] = lambda: 0
        self._ticker: asyncio.TimerHandle | None = None
        self._busy = False  # an event was queued since the last tick
        self._due = False  # a PROGRESS event is owed

    def report_progress(self, every: float, revision: Callable[[], int]) -> None:
        """Yield a PROGRESS event at ``revision()`` once an ``every``-second tick finds
        the watch quiet (nothing queued since the previous tick, nothing waiting).

        Events are queued on the loop in the same step that advances the store's
        revision, so an empty queue means every event up to that revision was taken.
        One timer per watch, re-armed as it fires: an event costs no timer of its own."""
        self._revision = revision
        loop = asyncio.get_running_loop()

        def tick() -> None:
            if self.closed or self.overflowed:
                return
            if not self._busy and not self._queue:
                self._due = True
                self._wake()
            self._busy = False
            self._ticker = loop.call_later(every, tick)

        self._ticker = loop.call_later(every, tick)

    def stop(self) -> None:
        """Cancel the progress timer (the watch is over)."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    def push(self, event: Event) -> bool:
        """Queue ``event``; False when this overflowed the queue just now."""
        if self.overflowed or self.closed:
            return True
        self._busy = True
        if len(self._queue) >= self._limit:
            self.overflowed = True
            self._queue.clear()
            self._wake()
            return False
        self._queue.append(event)
        self._wake()
        return True

    def end(self) -> None:
        self.closed = True
        self.stop()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        while not self._queue:
            if self.overflowed or self.closed:
                raise StopAsyncIteration
            if self._due:
                self._due = False
                return Event(EventType.PROGRESS, KeyValue("", b"", 0, self._revision()), None)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()


class Watchers:
    """Subscriptions indexed by prefix, so an event visits only the watchers whose
    prefix it matches: one dict lookup per distinct prefix length, not one check per
    watcher; and by key for the watches of one key alone (``exact``), one lookup in all.

    A watch of one object by name is such a watch: as a prefix, ``.../cluster-1`` would
    also match ``cluster-10`` to ``cluster-1999``, each of whose changes that watcher
    would decode only to drop."""

    def __init__(self, *, queue_size: int) -> None:
        self._queue_size = queue_size
        self._by_prefix: dict[str, set[Subscription]] = {}
        self._lengths: dict[int, int] = {}  # prefix length -> distinct prefixes of it
        self._by_key: dict[str, set[Subscription]] = {}

    def subscribe(self, prefix: str, *, exact: bool = False) -> Subscription:
        subscription = Subscription(prefix, limit=self._queue_size, exact=exact)
        index = self._by_key if exact else self._by_prefix
        subscribers = index.get(prefix)
        if subscribers is None:
            subscribers = index[prefix] = set()
            if not exact:
                self._lengths[len(prefix)] = self._lengths.get(len(prefix), 0) + 1
        subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscription.stop()
        prefix = subscription.prefix
        index = self._by_key if subscription.exact else self._by_prefix
        subscribers = index.get(prefix)
        if subscribers is None or subscription not in subscribers:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del index[prefix]
            if not subscription.exact:
                self._lengths[len(prefix)] -= 1
                if not self._lengths[len(prefix)]:
                    del self._lengths[len(prefix)]

    def publish(self, events: Batch) -> None:
        overflowed = []
        for event in events:
            key = event.kv.key
            for length in self._lengths:
                subscribers = self._by_prefix.get(key[:length]) if length <= len(key) else None
                for subscription in subscribers or ():
                    if not subscription.push(event):
                        overflowed.append(subscription)
            for subscription in self._by_key.get(key, ()):
                if not subscription.push(event):
                    overflowed.append(subscription)
        for subscription in overflowed:
            self.unsubscribe(subscription)

    def close(self) -> None:
        for index in (self._by_prefix, self._by_key):
            for subscribers in index.values():
                for subscription in subscribers:
                    subscription.end()
            index.clear()
        self._lengths.clear()


def prefix_span(keys: list[str], prefix: str) -> tuple[int, int]:
    """The slice of the sorted ``keys`` that start with ``prefix``, in O(log n)."""
    start = bisect.bisect_left(keys, prefix)
    end = prefix_end(prefix)
    return start, len(keys) if end is None else bisect.bisect_left(keys, end, lo=start)


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix`` (None: no
    such string, the range is open)."""
    while prefix:
        last = ord(prefix[-1])
        if last < 0x10FFFF:
            return prefix[:-1] + chr(last + 1)
        prefix = prefix[:-1]
    return None
