"""etcd v3 as the API server's store, through etcd's JSON gateway.

etcd's revisions are the store's revisions (resourceVersions), and etcd decides every
write: a txn comparing the key's create or mod revision, so several API server processes
can share one etcd. One watch per process feeds, in revision order, the state reads are
served from, the commit hooks, an in-memory history that watches resume from, and the
in-process watchers; each change's previous value comes from that state (etcd's
``prev_kv`` only while the history is filled back, below). A writer is answered only
once its own revision has come back through that watch, so the hooks (RBAC, CRD
routes, ...) have seen it, as the contract promises; another process's writes reach the
hooks the same way, and ``catch_up`` waits for those acknowledged before it.

Reads are linearizable and served from memory, as kube-apiserver's consistent reads
from its watch cache are: a read asks etcd for its current revision (one cheap read,
shared by every read that comes while none is in flight) and waits until the watch has
brought it, then answers from the state. So the watch covers etcd's whole keyspace,
not only the prefix: a write elsewhere (another hub's prefix, the compactor's key)
moves the revision too, and must come back for a read to stop waiting. A read whose
revision the watch does not bring within ``FRESH_TIMEOUT`` (it is reconnecting, or
the store is broken) reads etcd itself.

Layout: store key ``k`` is etcd key ``etcd_prefix + k`` (every key starts with ``/``), so
with the default prefix ``/registry`` the key ``/registry/core/namespaces/x`` is stored at
``/registry/registry/core/namespaces/x``. Another prefix keeps another hub apart.

Compaction is kube-apiserver's (apiserver/pkg/storage/etcd3/compact.go): at every tick
of ``etcd_compaction_interval`` the process whose compare-and-swap on the version of
``compact_rev_key`` wins compacts etcd to the revision seen at the previous tick, so
etcd keeps at least one interval of history, and N processes compact once per interval.

Like the log-structured stores, and like kube-apiserver's watch cache, a watch resumes
from the in-memory history only (``history_size``, ``history_max_age``): older, it gets
``Compacted`` even if etcd still has the changes. A list at a past revision is undone
from the same history and refused below the same floor, so lists and watches agree on
what is retained.

A process that starts beside others fills its history back from etcd: its watch starts
up to ``history_size`` revisions before the present (or at etcd's compaction), and the
changes before the start go to the history only, never to the hooks, which begin from
the present. Clients of a replica that died then resume their watches on one that
started a moment ago instead of relisting, one LIST per informer at once (a rolling
restart of replicas would otherwise make half the fleet relist at every step). The
older revisions become resumable once that back-fill is complete, which the watch shows
by its first change past the start (or a progress notification): until then, as
before, the history begins at the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import ssl
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from pyocm.apiserver.storage import errors
from pyocm.apiserver.storage.etcdgateway import (
    JSON,
    OUT_OF_RANGE,
    EtcdError,
    Gateway,
    b64,
    revision_of,
    unb64,
)
from pyocm.apiserver.storage.fanout import Watchers
from pyocm.apiserver.storage.history import History
from pyocm.apiserver.storage.interface import CommitHook, Event, EventType, KeyValue
from pyocm.apiserver.storage.logstructured import Options
from pyocm.apiserver.storage.state import State, as_of

log = logging.getLogger(__name__)

#: Seconds a call to etcd may take (a write, a page of a list).
REQUEST_TIMEOUT = 30.0
#: Seconds ``start`` waits for the watch, and ``close`` for writes in flight.
START_TIMEOUT = CLOSE_TIMEOUT = 10.0
#: Keys per range request of a list (kube-apiserver pages its own lists too).
PAGE_SIZE = 1000
#: Seconds a read waits for the watch to bring what etcd had when it came, before it
#: reads etcd instead (kube-apiserver's watch cache blocks as long, then falls back).
FRESH_TIMEOUT = 3.0
#: The key kube-apiserver's compactors agree through (outside any prefix, on purpose:
#: compaction is global to an etcd cluster).
COMPACT_REV_KEY = b"compact_rev_key"

Batch = list[Event]
#: (An alias because ``EtcdStore.list`` shadows the builtin inside the class.)
KeyValues = list[KeyValue]


@dataclass(frozen=True, slots=True)
class EtcdOptions:
    """The etcd options, named as kube-apiserver's flags (``--etcd-prefix`` ...).

    TLS is used when ``cafile`` or ``certfile`` is set: ``cafile`` verifies etcd's
    serving certificate, ``certfile`` and ``keyfile`` are the client certificate.
    ``compaction_interval`` 0 leaves compaction to someone else. ``healthcheck_timeout``
    bounds ``check`` (kube-apiserver's ``--etcd-healthcheck-timeout``, 2 s)."""

    prefix: str = "/registry"
    cafile: str = ""
    certfile: str = ""
    keyfile: str = ""
    compaction_interval: float = 300.0
    healthcheck_timeout: float = 2.0

    def __post_init__(self) -> None:
        if self.compaction_interval < 0:
            raise ValueError("etcd_compaction_interval must not be negative")
        if self.healthcheck_timeout <= 0:
            raise ValueError("etcd_healthcheck_timeout must be more than 0 seconds")
        if self.keyfile and not self.certfile:
            raise ValueError("etcd_keyfile needs etcd_certfile")


class EtcdStore:
    """A :class:`~pyocm.apiserver.storage.interface.Backend` on an etcd v3 cluster."""

    def __init__(
        self, endpoints: list[str], *, etcd: EtcdOptions, options: Options | None = None
    ) -> None:
        self.endpoints = endpoints
        self.settings = etcd
        self.options = options or Options()
        self._root = etcd.prefix.rstrip("/").encode()
        self._gateway: Gateway | None = None
        # _revision: everything up to it came through the watch (and the hooks).
        # _seen: the newest revision an answer to a read named; a client may watch from
        # it, though the watch may not have brought it yet.
        self._revision = 0
        self._seen = 0
        self._history = History(self.options, floor=0)
        # Every live key under the prefix as of _revision, which reads are served from.
        self._state = State()
        # The fence the next read joins, the one etcd is being asked for, and the task
        # asking.
        self._fence: asyncio.Future[int] | None = None
        self._asking: asyncio.Future[int] | None = None
        self._fencing: asyncio.Task[None] | None = None
        # The back-fill: changes up to _backfill_to (the revision at start) arriving
        # through the watch, kept here until it has brought them all; None when done.
        self._backfill: Batch | None = None
        self._backfill_to = 0
        self._backfill_floor = 0
        # The newest revision the etcd watch brought (changes or progress): it resumes
        # after it.
        self._watched = 0
        self._watchers = Watchers(queue_size=self.options.watch_queue_size)
        self._hooks: list[CommitHook] = []
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # a heap
        self._order = itertools.count()
        self._state_error: errors.Unavailable | None = errors.Unavailable("storage is not started")
        self._broken: errors.Unavailable | None = None
        self._connected = False
        self._follower: asyncio.Task[None] | None = None
        self._compactor: asyncio.Task[None] | None = None
        self._writes = 0
        self._idle = asyncio.Event()
        self._idle.set()

    # Lifecycle.

    async def start(self) -> None:
        self._gateway = Gateway(
            self.endpoints, ssl_context=_tls(self.settings), request_timeout=REQUEST_TIMEOUT
        )
        try:
            # The first page names the revision the others are read at: no compaction
            # can fall between learning the present and reading it.
            now, kvs = await self._range_etcd(*self._span(""), revision=0, starting=True)
            self._revision = self._seen = now
            self._state = State(kvs)
            self._history = History(self.options, floor=now)
            self._backfill_to = now
            self._backfill_floor = self._watched = max(0, now - self.options.history_size)
            self._backfill = [] if self._backfill_floor < now else None
            created: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._follower = asyncio.create_task(self._follow(created))
            try:
                await asyncio.wait_for(asyncio.shield(created), START_TIMEOUT)
            except TimeoutError:
                raise errors.Unavailable("etcd did not start the watch in time") from None
        except BaseException:
            await _cancel(self._follower)
            await self._gateway.close()
            raise
        self._state_error = None
        if self.settings.compaction_interval:
            self._compactor = asyncio.create_task(self._compact_every())

    async def close(self) -> None:
        """Refuse new requests, let writes in flight come back, then end every watch."""
        if self._state_error is not None:
            return
        closed = self._state_error = errors.Unavailable("storage is closed")
        if self._writes:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), CLOSE_TIMEOUT)
        await _cancel(self._compactor)
        asking = self._asking  # the fence task forgets it when cancelled
        await _cancel(self._fencing)
        await _cancel(self._follower)
        for fence in (asking, self._fence):
            if fence is not None and not fence.done():
                fence.set_exception(closed)
        self._fail_waiters(closed)
        self._watchers.close()
        if self._gateway is not None:
            await self._gateway.close()

    @property
    def name(self) -> str:
        return "etcd"

    async def check(self) -> None:
        self._check_writable()
        if not self._connected:
            raise errors.Unavailable("etcd: the watch is reconnecting")
        status = await self._call("/v3/maintenance/status", {}, self.settings.healthcheck_timeout)
        if not int(status.get("leader", 0)):
            raise errors.Unavailable("etcd has no leader")
        if status.get("errors"):
            raise errors.Unavailable(f"etcd reports: {'; '.join(map(str, status['errors']))}")

    async def catch_up(self) -> None:
        if not await self._fresh():
            raise errors.Unavailable("etcd: this process's watch is behind")

    def current_revision(self) -> int:
        return max(self._revision, self._seen)

    def oldest_revision(self) -> int:
        return self._history.floor

    def add_commit_hook(self, hook: CommitHook) -> None:
        self._hooks.append(hook)

    # Reads: linearizable, from the state the watch keeps once it has brought what etcd
    # had when the read came (kube-apiserver's consistent reads from its watch cache).

    async def get(self, key: str) -> KeyValue | None:
        if await self._fresh():
            return self._state.get(key)
        answer = await self._read({"key": self._key(key)})
        kvs = answer.get("kvs")
        return self._kv(kvs[0]) if kvs else None

    async def list(self, prefix: str, *, revision: int = 0) -> tuple[int, list[KeyValue]]:
        self._check_open()
        await self._not_ahead(revision)
        floor = self._history.floor
        if 0 < revision < floor:
            raise errors.Compacted(requested=revision, oldest=floor)
        if not await self._fresh(revision):
            return await self._range_etcd(*self._span(prefix), revision=revision)
        current = self._state.range(prefix)
        if revision in (0, self._revision):
            return self._revision, current
        if revision < self._history.floor:  # forgotten while the read waited
            raise errors.Compacted(requested=revision, oldest=self._history.floor)
        return revision, as_of(current, self._history.replay(prefix, revision))

    async def count(self, prefix: str) -> int:
        if await self._fresh():
            return self._state.count(prefix)
        start, end = self._span(prefix)
        answer = await self._read({"key": b64(start), "range_end": b64(end), "count_only": True})
        return int(answer.get("count", 0))

    async def _fresh(self, revision: int = 0) -> bool:
        """Wait until the state holds ``revision`` (0: every write etcd had acknowledged
        when this was called). False if the watch did not get there within
        ``FRESH_TIMEOUT`` (broken, or reconnecting): the caller reads etcd instead."""
        self._check_open()
        if self._broken is not None or not self._connected:
            return False  # the watch would not bring it soon: read etcd
        if not revision:
            if self._fence is None:
                self._fence = asyncio.get_running_loop().create_future()
                self._fence.add_done_callback(_retrieve)
                if self._fencing is None:
                    self._fencing = asyncio.create_task(self._ask_fences())
            revision = await asyncio.shield(self._fence)
        if revision <= self._revision:
            return True
        try:
            await asyncio.wait_for(self._until(revision), FRESH_TIMEOUT)
        except TimeoutError:
            self._drop_abandoned_waiters()
        except errors.Unavailable:
            pass
        self._check_open()  # closed while waiting: do not read etcd any more
        return revision <= self._revision

    async def _ask_fences(self) -> None:
        """Answer fences, one etcd read each, until none is waiting. A read that comes
        while etcd is asked joins the next fence: etcd may have answered the one in
        flight before that read's client was acknowledged a write. So concurrent reads
        cost one etcd round trip together, and a read at most two."""
        try:
            while (fence := self._fence) is not None:
                self._fence, self._asking = None, fence
                try:
                    fence.set_result(revision_of(await self._read({"key": b64(self._root)})))
                except errors.StorageError as err:
                    fence.set_exception(err)
                except Exception as err:  # never leave the fence's readers waiting
                    log.exception("etcd: asking for the current revision failed")
                    fence.set_exception(errors.Unavailable(f"etcd: {type(err).__name__}"))
        finally:
            self._fencing = self._asking = None

    async def _range_etcd(
        self, start: bytes, end: bytes, *, revision: int, starting: bool = False
    ) -> tuple[int, KeyValues]:
        """Every key in ``[start, end)`` as of ``revision`` (0: now), read from etcd
        page by page at one revision (``starting``: while the store is not open yet)."""
        snapshot, kvs = revision, list[KeyValue]()
        while True:
            body: JSON = {"key": b64(start), "range_end": b64(end), "limit": str(PAGE_SIZE)}
            if snapshot:
                body["revision"] = str(snapshot)
            try:
                answer = await self._read(body, starting=starting)
            except EtcdError as err:
                if err.code != OUT_OF_RANGE:
                    raise
                raise errors.Compacted(requested=snapshot, oldest=self._history.floor) from None
            snapshot = snapshot or revision_of(answer)
            page = answer.get("kvs") or []
            kvs.extend(self._kv(kv) for kv in page)
            if not answer.get("more") or not page:
                return snapshot, kvs
            start = unb64(page[-1]["key"]) + b"\0"  # the next key after the page's last

    # Writes: compare-and-swap in etcd, answered once the watch brought them back.

    async def create(self, key: str, value: bytes) -> KeyValue:
        k = self._key(key)
        answer = await self._commit(
            {
                "compare": [_compare(k, "EQUAL", "CREATE", 0)],
                "success": [{"request_put": {"key": k, "value": b64(value)}}],
            }
        )
        if not answer.get("succeeded"):
            raise errors.KeyExists(key)
        revision = revision_of(answer)
        return KeyValue(key, value, revision, revision)

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        k = self._key(key)
        answer = await self._commit(
            {
                "compare": [
                    _compare(k, "GREATER", "CREATE", 0),
                    _compare(k, "EQUAL", "MOD", expected_revision),
                ],
                "success": [{"request_put": {"key": k, "value": b64(value), "prev_kv": True}}],
                "failure": [{"request_range": {"key": k}}],
            }
        )
        if not answer.get("succeeded"):
            raise self._mismatch(key, answer)
        revision = revision_of(answer)
        prev = answer["responses"][0]["response_put"].get("prev_kv") or {}
        return KeyValue(key, value, int(prev.get("create_revision", revision)), revision)

    async def delete(self, key: str, *, expected_revision: int | None = None) -> KeyValue:
        k = self._key(key)
        compare = [_compare(k, "GREATER", "CREATE", 0)]
        if expected_revision is not None:
            compare.append(_compare(k, "EQUAL", "MOD", expected_revision))
        answer = await self._commit(
            {
                "compare": compare,
                "success": [{"request_delete_range": {"key": k, "prev_kv": True}}],
                "failure": [{"request_range": {"key": k}}],
            }
        )
        if not answer.get("succeeded"):
            raise self._mismatch(key, answer)
        prev = self._kv(answer["responses"][0]["response_delete_range"]["prev_kvs"][0])
        return KeyValue(key, prev.value, prev.create_revision, revision_of(answer))

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

    # Calls.

    async def _call(self, path: str, body: JSON, timeout: float | None = None) -> JSON:
        assert self._gateway is not None
        return await self._gateway.call(path, body, timeout=timeout)

    async def _read(self, body: JSON, *, starting: bool = False) -> JSON:
        if not starting:
            self._check_open()
        answer = await self._call("/v3/kv/range", body)
        self._seen = max(self._seen, revision_of(answer))
        return answer

    async def _commit(self, txn: JSON) -> JSON:
        """Run ``txn``; if it succeeded, wait until the watch has brought its revision."""
        self._check_writable()
        assert self._gateway is not None
        self._writes += 1
        self._idle.clear()
        try:
            answer = await self._gateway.call("/v3/kv/txn", txn, write=True)
            if answer.get("succeeded"):
                await self._until(revision_of(answer))
            return answer
        finally:
            self._writes -= 1
            if not self._writes:
                self._idle.set()

    def _mismatch(self, key: str, answer: JSON) -> errors.StorageError:
        kvs = answer["responses"][0]["response_range"].get("kvs")
        if not kvs:
            return errors.KeyNotFound(key)
        return errors.Conflict(key, current=self._kv(kvs[0]))

    async def _not_ahead(self, revision: int) -> None:
        """Raise ``FutureRevision`` if ``revision`` is newer than etcd's. A client may
        name a revision another API server process gave it, which this one has not
        seen yet: ask etcd before refusing."""
        if revision <= self.current_revision():
            return
        await self._read({"key": b64(self._root)})
        if revision > self.current_revision():
            raise errors.FutureRevision(requested=revision, current=self.current_revision())

    # The one etcd watch.

    async def _follow(self, created: asyncio.Future[None]) -> None:
        """Follow every change under the prefix from the revision after the last one
        seen, reconnecting (to the next endpoint) when the stream breaks."""
        assert self._gateway is not None
        delay = 0.1
        while True:
            # The values before each change only while filling the history back: past
            # that, the state has them, and etcd would read each one for every replica's
            # watch and send it again.
            backfilling = self._backfill is not None
            request = {
                "key": b64(b"\0"),  # with this range end: every key
                "range_end": b64(b"\0"),
                "start_revision": str(self._watched + 1),
                "prev_kv": backfilling,
                "progress_notify": True,
            }
            try:
                async with contextlib.aclosing(self._gateway.watch(request)) as responses:
                    async for response in responses:
                        if self._receive(response) and not created.done():
                            created.set_result(None)
                        delay = 0.1
                        if backfilling and self._backfill is None:
                            raise _Refill("back-fill complete: watch on without prev_kv")
                failure = errors.Unavailable("etcd ended the watch")
            except _Refill:
                continue  # at once, from the revision after the last one seen
            except errors.Unavailable as err:
                failure = err
            self._connected = False
            if not created.done():
                created.set_exception(failure)
                return
            if self._broken is not None:
                return
            log.warning("etcd watch lost, reconnecting: %s", failure)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _receive(self, response: JSON) -> bool:
        """Take one WatchResponse; True when it says the watch was created."""
        if response.get("canceled"):
            compacted = int(response.get("compact_revision", 0))
            if compacted and compacted <= self._backfill_to + 1 and self._backfill is not None:
                # Only the back-fill's first part is gone: fill back from there.
                self._backfill.clear()
                self._backfill_floor = self._watched = compacted - 1
                raise _Refill(f"etcd compacted to {compacted}")
            if compacted:
                self._lose(compacted)
            reason = response.get("cancel_reason") or "no reason given"
            raise errors.Unavailable(f"etcd canceled the watch: {reason}")
        if response.get("created"):
            self._connected = True
            return True
        events = response.get("events")
        if events:
            # The watch covers etcd's whole keyspace, so that every revision comes back
            # (a read waits for the one etcd named); other keys only move it on.
            revision = int(events[-1]["kv"]["mod_revision"])
            batch = self._events(events)
            self._watched = max(self._watched, revision)
            if self._backfill is not None:
                batch = self._fill(batch, revision)
            if batch:
                self._deliver(batch)
            self._advance(revision)
        else:  # a progress notification: nothing up to its revision is left to send
            revision = revision_of(response)
            self._watched = max(self._watched, revision)
            if self._backfill is not None and revision >= self._backfill_to:
                self._filled()
            self._advance(revision)
        return False

    def _fill(self, batch: Batch, revision: int) -> Batch:
        """Keep the back-fill's part of ``batch`` (the watch is at ``revision``); the
        rest, once it is complete."""
        assert self._backfill is not None
        cut = next(
            (i for i, event in enumerate(batch) if event.revision > self._backfill_to),
            len(batch),
        )
        kept = batch[:cut]
        self._backfill.extend(kept)
        for event in kept:
            if _lacks_prev(event):
                # etcd had compacted the revision before it (the watch's first, after a
                # refill from etcd's compaction): a list cannot be undone past it.
                self._backfill_floor = max(self._backfill_floor, event.revision)
        if revision > self._backfill_to:
            self._filled()
        return batch[cut:]

    def _filled(self) -> None:
        """The back-fill is complete: watches may resume from its first revision on.
        Nothing was delivered before it (its changes are all older), so the history is
        the back-fill alone."""
        assert self._backfill is not None
        history = History(self.options, floor=self._backfill_floor)
        if self._backfill:
            history.remember(self._backfill)
        self._history, self._backfill = history, None

    def _deliver(self, batch: Batch) -> None:
        for event in batch:
            self._state.apply(event)
        self._revision = max(self._revision, batch[-1].revision)
        self._history.remember(batch)
        for hook in self._hooks:
            try:
                hook(batch)
            except Exception:  # a broken cache must not stop the store
                log.exception("storage commit hook failed")
        self._watchers.publish(batch)
        self._advance(self._revision)

    def _advance(self, revision: int) -> None:
        self._revision = max(self._revision, revision)
        while self._waiters and self._waiters[0][0] <= self._revision:
            waiter = heapq.heappop(self._waiters)[2]
            if not waiter.done():
                waiter.set_result(None)

    def _lose(self, compacted: int) -> None:
        """etcd compacted changes this process had not seen yet: the hooks missed
        them, so its caches may be wrong. Refuse writes and watches until a restart
        (the health check says why), as a store whose disk failed does."""
        self._broken = errors.Unavailable(
            f"etcd compacted revision {compacted} before this API server saw the changes"
            f" after {self._revision}; restart it"
        )
        log.error("%s", self._broken)
        self._fail_waiters(self._broken)
        self._watchers.close()

    def _drop_abandoned_waiters(self) -> None:
        """Forget the waiters of reads that gave up (so a watch that lags for long does
        not keep one per read)."""
        self._waiters = [entry for entry in self._waiters if not entry[2].done()]
        heapq.heapify(self._waiters)

    async def _until(self, revision: int) -> None:
        if revision <= self._revision:
            return
        if self._broken is not None:
            raise self._broken
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (revision, next(self._order), waiter))
        await waiter

    def _fail_waiters(self, error: errors.Unavailable) -> None:
        waiters, self._waiters = self._waiters, []
        for _, _, waiter in waiters:
            if not waiter.done():
                waiter.set_exception(error)

    # In-process watches.

    async def _stream(
        self, prefix: str, after_revision: int, progress_interval: float | None, *, exact: bool
    ) -> AsyncIterator[Event]:
        self._check_watchable()
        await self._not_ahead(after_revision)
        self._check_watchable()
        floor = self._history.floor
        if after_revision < floor:
            raise errors.Compacted(requested=after_revision, oldest=floor)
        # Snapshot and subscribe in one step on the loop: no event can fall between.
        replay = self._history.replay(prefix, after_revision, exact=exact)
        subscription = self._watchers.subscribe(prefix, exact=exact)
        if progress_interval is not None:
            # Events up to after_revision are never delivered to this watch, so its
            # progress is at least there even while the etcd watch is behind it.
            subscription.report_progress(
                progress_interval, lambda: max(after_revision, self._revision)
            )
        delivered = after_revision
        try:
            for event in replay:
                yield event
                delivered = event.revision
            async for event in subscription:
                if event.type is EventType.PROGRESS or event.revision > after_revision:
                    yield event
                    delivered = max(delivered, event.revision)
            if subscription.overflowed:
                raise errors.Compacted(requested=delivered, oldest=self._history.floor)
            if self._broken is not None:
                raise self._broken
        finally:
            self._watchers.unsubscribe(subscription)

    # Compaction.

    async def _compact_every(self) -> None:
        known_version, previous = 0, 0
        while True:
            await asyncio.sleep(self.settings.compaction_interval)
            try:
                known_version, previous = await self._compact(known_version, previous)
            except errors.StorageError as err:
                log.warning("etcd compaction failed: %s", err)

    async def _compact(self, known_version: int, previous: int) -> tuple[int, int]:
        """One tick of kube-apiserver's compactor: if ``compact_rev_key``'s version is
        still ``known_version`` no one compacted since our last tick, so record the
        revision we compact to (bumping the version) and compact to ``previous``, the
        revision seen at that last tick. Returns the version and revision to remember."""
        key = b64(COMPACT_REV_KEY)
        answer = await self._call(
            "/v3/kv/txn",
            {
                "compare": [_compare(key, "EQUAL", "VERSION", known_version)],
                "success": [{"request_put": {"key": key, "value": b64(str(previous).encode())}}],
                "failure": [{"request_range": {"key": key}}],
            },
        )
        current = revision_of(answer)
        if not answer.get("succeeded"):  # another API server compacted: follow its clock
            kvs = answer["responses"][0]["response_range"].get("kvs") or [{}]
            return int(kvs[0].get("version", 0)), current
        if previous:  # never on the first tick: there is no previous revision yet
            try:
                await self._call("/v3/kv/compaction", {"revision": str(previous)})
            except EtcdError as err:
                if err.code != OUT_OF_RANGE:  # already compacted further: fine
                    raise
            log.info("etcd compacted to revision %d", previous)
        return known_version + 1, current

    # Keys and values.

    def _key(self, key: str) -> str:
        return b64(self._root + key.encode())

    def _span(self, prefix: str) -> tuple[bytes, bytes]:
        start = self._root + (prefix.encode() or b"/")
        return start, _prefix_end(start)

    def _kv(self, kv: JSON) -> KeyValue:
        key = unb64(kv.get("key"))[len(self._root) :].decode(errors="replace")
        return KeyValue(
            key, unb64(kv.get("value")), int(kv.get("create_revision", 0)), int(kv["mod_revision"])
        )

    def _ours(self, event: JSON) -> bool:
        return unb64(event["kv"].get("key")).startswith(self._root + b"/")

    def _events(self, events: Iterable[JSON]) -> Batch:
        """The changes under the prefix among a WatchResponse's ``events``. Each value
        before a change is etcd's ``prev_kv`` in the back-fill, and past it the state's
        (with the batch's earlier changes to the same key on top)."""
        batch: Batch = []
        newer: dict[str, KeyValue | None] = {}  # keys this batch changed, as it left them
        for event in events:
            if not self._ours(event):
                continue
            kv = self._kv(event["kv"])
            if kv.mod_revision <= self._backfill_to:
                prev = self._kv(event["prev_kv"]) if event.get("prev_kv") else None
            elif event.get("type") != "DELETE" and kv.create_revision == kv.mod_revision:
                prev = None  # created by this change
            else:
                prev = newer[kv.key] if kv.key in newer else self._state.get(kv.key)
                if prev is None:  # the state is wrong: say so rather than guess
                    log.warning("etcd changed %s, which this replica's state lacks", kv.key)
            if event.get("type") == "DELETE":
                gone = prev or kv
                deleted = KeyValue(kv.key, gone.value, gone.create_revision, kv.mod_revision)
                batch.append(Event(EventType.DELETE, deleted, prev))
                newer[kv.key] = None
            else:
                batch.append(Event(EventType.PUT, kv, prev))
                newer[kv.key] = kv
        return batch

    # State checks.

    def _check_open(self) -> None:
        if self._state_error is not None:
            raise self._state_error

    def _check_watchable(self) -> None:
        self._check_open()
        if self._broken is not None:
            raise self._broken

    _check_writable = _check_watchable


class _Refill(errors.Unavailable):
    """Watch again at once, from the revision after the last one seen: the back-fill
    started before etcd's compaction (and starts again from there), or it is complete
    (and the watch goes on without prev_kv)."""


def _compare(key: str, result: str, target: str, value: int) -> JSON:
    field = {"CREATE": "create_revision", "MOD": "mod_revision", "VERSION": "version"}[target]
    return {"key": key, "result": result, "target": target, field: str(value)}


def _lacks_prev(event: Event) -> bool:
    """Whether etcd sent a change without the value before it, which it had."""
    if event.prev is not None:
        return False
    return event.type is EventType.DELETE or event.kv.create_revision != event.kv.mod_revision


def _retrieve(future: asyncio.Future[int]) -> None:
    """Mark a fence's failure seen: its readers may all have been cancelled."""
    if not future.cancelled():
        future.exception()


def _prefix_end(prefix: bytes) -> bytes:
    """etcd's range end for every key starting with ``prefix`` (clientv3's
    GetPrefixRangeEnd): the prefix with its last byte below 0xff incremented."""
    for index in range(len(prefix) - 1, -1, -1):
        if prefix[index] < 0xFF:
            return prefix[:index] + bytes([prefix[index] + 1])
    return b"\0"  # every key from the start on


def _tls(options: EtcdOptions) -> ssl.SSLContext | None:
    if not (options.cafile or options.certfile):
        return None
    try:
        context = ssl.create_default_context(cafile=options.cafile or None)
        if options.certfile:
            context.load_cert_chain(options.certfile, options.keyfile or None)
    except (OSError, ssl.SSLError) as err:
        raise errors.Unavailable(f"cannot load the etcd TLS files: {err}") from None
    return context


async def _cancel(task: asyncio.Task[None] | None) -> None:
    """Cancel ``task`` and wait until it has ended."""
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def new_backend(
    endpoints: list[str], *, etcd: EtcdOptions, options: Options | None = None
) -> EtcdStore:
    return EtcdStore(endpoints, etcd=etcd, options=options)
