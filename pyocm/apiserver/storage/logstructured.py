"""The MVCC rules of every log-backed store, written once over a small durable ``Log``.

Reads are served from an in-memory copy of the committed state. A write is checked and
given its revision on the event loop against the latest state, including writes that are
assigned but not yet durable (the ``pending`` overlay), then handed to the log. When the
log reports a batch durable, in revision order: the state is updated, the events enter
the history ring, every commit hook runs, watchers are fed, and only then are the
writers answered. So a read after an acknowledged write sees it, and nothing that is not
durable is ever seen.

If the log fails to commit (a full disk, typically), the failed write and every write
still pending raise ``Unavailable``: those were checked against state that never became
durable. New writes are refused until the log has reported all of them, then tried
again, so the store recovers on its own once the cause is gone; no revision is given
twice. Reads and watches keep serving the last durable state throughout. ``check``
reports the failure until a write, or a probe of the log, commits again.

Only a full disk heals that way. Any other commit failure (the log reports it as
:class:`Broken`: a failed fsync, an I/O error) leaves what is on disk uncertain, so
writes stay refused, and ``check`` fails, until a restart reloads the state from disk.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol

from pyocm.apiserver.storage import errors
from pyocm.apiserver.storage.fanout import Watchers
from pyocm.apiserver.storage.history import History
from pyocm.apiserver.storage.interface import CommitHook, Event, EventType, KeyValue
from pyocm.apiserver.storage.state import State, as_of

log = logging.getLogger(__name__)

#: Events committed together, in revision order. (An alias because ``LogStructured.list``
#: shadows the builtin inside the class.)
Batch = list[Event]


@dataclass(frozen=True, slots=True)
class Options:
    """Tuning of the in-memory parts of a store.

    ``history_size`` events are kept for watches to resume from; an event younger than
    ``history_min_age`` seconds is kept even beyond that, so a burst of writes cannot
    compact away what a briefly disconnected client needs. An event older than
    ``history_max_age`` seconds (never less than ``history_min_age``) is dropped at the
    next commit even below that count, as kube-apiserver compacts etcd every five
    minutes: a fleet's join burst would otherwise stay in memory until 100,000 later
    writes pushed it out. A watcher may fall
    ``watch_queue_size`` events behind before it is cut off with ``Compacted``.
    """

    history_size: int = 100_000
    history_min_age: float = 0.0
    history_max_age: float = 300.0
    watch_queue_size: int = 10_000
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        if self.history_size < 0 or self.history_min_age < 0:
            raise ValueError("history_size and history_min_age must not be negative")
        if self.history_max_age < 0:
            raise ValueError("history_max_age must not be negative")
        if self.watch_queue_size < 1:
            raise ValueError("watch_queue_size must be at least 1")


@dataclass(frozen=True, slots=True)
class Recovered:
    """What a log holds on disk: the revision counter and every live key."""

    revision: int
    kvs: list[KeyValue]


class Broken(errors.Unavailable):
    """A commit failure that does not heal while the process runs (anything but a full
    disk): the store refuses writes from then on, until a restart."""


class CommitSink(Protocol):
    """Where a log reports outcomes, always on the event loop thread."""

    def committed(self, events: Batch) -> None: ...

    def failed(self, events: Batch, error: errors.Unavailable) -> None: ...


class Log(Protocol):
    """The durable part a dialect implements.

    ``name`` names the store in health checks (``sqlite``, ``etcd``). ``append`` is
    called in revision order. The log reports every appended event exactly once to the
    sink, as committed or failed, in the same order; after a failure it fails every event
    appended before the next ``resume()``, and commits again after it. ``probe`` makes a
    write that changes nothing and raises ``Unavailable`` if the log cannot commit now.
    ``close`` commits what was appended and delivers its outcome before returning.
    """

    name: str

    async def open(self, sink: CommitSink) -> Recovered: ...

    def append(self, event: Event) -> None: ...

    def resume(self) -> None: ...

    async def probe(self) -> None: ...

    async def close(self) -> None: ...


class LogStructured:
    """A :class:`~pyocm.apiserver.storage.interface.Backend` over a :class:`Log`."""

    def __init__(self, log: Log, *, options: Options | None = None) -> None:
        self.log = log
        self.options = options or Options()
        self._state = State()
        self._pending: dict[str, tuple[Event, asyncio.Future[KeyValue]]] = {}
        self._waiters: dict[int, asyncio.Future[KeyValue]] = {}
        self._revision = 0
        self._assigned = 0
        self._history = History(self.options, floor=0)
        self._watchers = Watchers(queue_size=self.options.watch_queue_size)
        self._hooks: list[CommitHook] = []
        self._state_error: errors.Unavailable | None = errors.Unavailable("storage is not started")
        # The last commit failure, until a write or a probe commits (what check reports);
        # and, while writes decided before that failure are still in flight, the error
        # new writes get (they would be decided on state that may never be durable).
        self._failure: errors.Unavailable | None = None
        self._refusing: errors.Unavailable | None = None
        self._probing: asyncio.Future[None] | None = None

    async def start(self) -> None:
        recovered = await self.log.open(self)
        self._state = State(recovered.kvs)
        self._revision = self._assigned = recovered.revision
        self._history = History(self.options, floor=recovered.revision)
        self._state_error = None

    async def close(self) -> None:
        """Refuse new requests, let the log commit what it holds, then end every watch."""
        if self._state_error is not None:
            return
        self._state_error = errors.Unavailable("storage is closed")
        await self.log.close()
        self._watchers.close()

    @property
    def name(self) -> str:
        return self.log.name

    async def check(self) -> None:
        self._check_open()
        if self._refusing is not None:
            raise self._refusing
        if self._failure is not None:
            await self._probe()

    async def catch_up(self) -> None:
        self._check_open()  # every write is this process's own, hooks run before its answer

    def current_revision(self) -> int:
        return self._revision

    def oldest_revision(self) -> int:
        return self._history.floor

    def add_commit_hook(self, hook: CommitHook) -> None:
        self._hooks.append(hook)

    async def get(self, key: str) -> KeyValue | None:
        self._check_open()
        return self._state.get(key)

    async def list(self, prefix: str, *, revision: int = 0) -> tuple[int, list[KeyValue]]:
        self._check_open()
        current = self._state.range(prefix)
        if revision in (0, self._revision):
            return self._revision, current
        if revision > self._revision:
            raise errors.FutureRevision(requested=revision, current=self._revision)
        if revision < self._history.floor:
            raise errors.Compacted(requested=revision, oldest=self._history.floor)
        return revision, as_of(current, self._history.replay(prefix, revision))

    async def count(self, prefix: str) -> int:
        self._check_open()
        return self._state.count(prefix)

    async def create(self, key: str, value: bytes) -> KeyValue:
        while True:
            latest = self._latest(key)
            if latest is None:
                revision = self._next_revision()
                kv = KeyValue(key, value, revision, revision)
                return await self._write(Event(EventType.PUT, kv, None))
            await self._settle(key, errors.KeyExists(key))

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        while True:
            latest = self._latest(key)
            if latest is not None and latest.mod_revision == expected_revision:
                kv = KeyValue(key, value, latest.create_revision, self._next_revision())
                return await self._write(Event(EventType.PUT, kv, latest))
            await self._settle(key, self._mismatch(key, latest))

    async def delete(self, key: str, *, expected_revision: int | None = None) -> KeyValue:
        while True:
            latest = self._latest(key)
            if latest is not None and expected_revision in (None, latest.mod_revision):
                kv = KeyValue(key, latest.value, latest.create_revision, self._next_revision())
                return await self._write(Event(EventType.DELETE, kv, latest))
            await self._settle(key, self._mismatch(key, latest))

    def watch(
        self,
        prefix: str,
        *,
        after_revision: int,
        progress_interval: float | None = None,
        exact: bool = False,
    ) -> AsyncIterator[Event]:
        if progress_interval is not None and progress_interval <= 0:
            raise ValueError("progress_interval must be positive")
        return self._stream(prefix, after_revision, progress_interval, exact=exact)

    # CommitSink: called by the log on the event loop.

    def committed(self, events: Batch) -> None:
        self._failure = None
        for event in events:
            self._apply(event)
        self._history.remember(events)
        for hook in self._hooks:
            try:
                hook(events)
            except Exception:  # a broken cache must not stop the store
                log.exception("storage commit hook failed")
        self._watchers.publish(events)
        for event in events:
            waiter = self._waiters.pop(event.revision, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(event.kv)

    def failed(self, events: Batch, error: errors.Unavailable) -> None:
        if self._refusing is None:
            if isinstance(error, Broken):
                log.error("storage commit failed, writes refused until restart: %s", error)
            else:
                log.error("storage commit failed: %s", error)
            self._refusing = self._failure = error
            self._pending.clear()
            self.log.resume()  # every write appended up to here is failed
        for event in events:
            waiter = self._waiters.pop(event.revision, None)
            if waiter is not None and not waiter.done():
                waiter.set_exception(self._refusing)
        if not self._waiters and not isinstance(self._refusing, Broken):
            self._refusing = None  # all reported: later writes try the log again

    async def _probe(self) -> None:
        """One probe of the log at a time, shared by every caller of ``check``."""
        if self._probing is None:
            self._probing = asyncio.ensure_future(self.log.probe())
            self._probing.add_done_callback(self._probed)
        await asyncio.shield(self._probing)

    def _probed(self, probe: asyncio.Future[None]) -> None:
        self._probing = None
        if not probe.cancelled() and probe.exception() is None and self._refusing is None:
            self._failure = None

    # Writes.

    def _latest(self, key: str) -> KeyValue | None:
        """The state a new write must be checked against: pending if any, else committed."""
        self._check_writable()
        entry = self._pending.get(key)
        if entry is None:
            return self._state.get(key)
        event = entry[0]
        return None if event.type is EventType.DELETE else event.kv

    def _mismatch(self, key: str, latest: KeyValue | None) -> errors.StorageError:
        if latest is None:
            return errors.KeyNotFound(key)
        return errors.Conflict(key, current=latest)

    async def _settle(self, key: str, error: errors.StorageError) -> None:
        """Raise ``error`` if it was decided on committed state; otherwise wait for the
        pending write it was decided on, so that no caller ever learns of a write that
        might still fail, and let the caller decide again."""
        entry = self._pending.get(key)
        if entry is None:
            raise error
        await asyncio.wait([entry[1]])

    def _next_revision(self) -> int:
        self._assigned += 1
        return self._assigned

    async def _write(self, event: Event) -> KeyValue:
        waiter: asyncio.Future[KeyValue] = asyncio.get_running_loop().create_future()
        # A writer cancelled while waiting leaves the outcome unobserved; retrieve it.
        waiter.add_done_callback(_consume_exception)
        self._pending[event.kv.key] = (event, waiter)
        self._waiters[event.revision] = waiter
        self.log.append(event)
        # Shielded: a cancelled writer must not cancel the future others wait on.
        return await asyncio.shield(waiter)

    def _check_open(self) -> None:
        if self._state_error is not None:
            raise self._state_error

    def _check_writable(self) -> None:
        self._check_open()
        if self._refusing is not None:
            raise self._refusing

    # Committed state and history.

    def _apply(self, event: Event) -> None:
        key = event.kv.key
        self._state.apply(event)
        self._revision = event.revision
        entry = self._pending.get(key)
        if entry is not None and entry[0] is event:
            del self._pending[key]

    # Watch.

    async def _stream(
        self, prefix: str, after_revision: int, progress_interval: float | None, *, exact: bool
    ) -> AsyncIterator[Event]:
        self._check_open()
        if after_revision > self._revision:
            raise errors.FutureRevision(requested=after_revision, current=self._revision)
        if after_revision < self._history.floor:
            raise errors.Compacted(requested=after_revision, oldest=self._history.floor)
        # Snapshot and subscribe in one step on the loop: no commit can fall between.
        replay = self._history.replay(prefix, after_revision, exact=exact)
        subscription = self._watchers.subscribe(prefix, exact=exact)
        if progress_interval is not None:
            subscription.report_progress(progress_interval, self.current_revision)
        delivered = after_revision
        try:
            for event in replay:
                yield event
                delivered = event.revision
            async for event in subscription:
                yield event
                delivered = event.revision
            if subscription.overflowed:
                raise errors.Compacted(requested=delivered, oldest=self._history.floor)
        finally:
            self._watchers.unsubscribe(subscription)


def _consume_exception(future: asyncio.Future[KeyValue]) -> None:
    if not future.cancelled():
        future.exception()
