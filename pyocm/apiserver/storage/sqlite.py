"""The SQLite dialect: one table of live keys, one writer thread, group commit.

``kv`` holds the current state only. An update rewrites its row in place and a delete
removes it, so heartbeat-style rewrites never grow the file; history lives only in the
in-memory ring of :class:`LogStructured` (that is the compaction). ``meta`` holds the
revision counter, written once per transaction, so revisions keep rising across
restarts even when the last write was a delete.

One dedicated thread owns the write connection. It blocks for the first queued write,
drains whatever else is queued (up to ``max_batch``), commits all of it in one
transaction (one fsync), and then reports the batch to the event loop. Concurrent
writers therefore share transactions instead of queueing for fsyncs.

A batch of puts only, the usual case, is one multi-row upsert that SQLite commits by
itself, and triggers keep ``meta`` in step. Every statement hands the GIL back and must
win it again from the busy event loop, which made a four-statement transaction wait
about three times as long as its fsync.

A commit that fails for a full disk leaves the connection usable: SQLite rolls the
statement or transaction back, and once space is freed the next one succeeds. Only the
writer's own failure flag, which fails what was queued behind the failed batch, must be
cleared, by the store's ``resume()``. Any other commit failure (a failed fsync, an I/O
error) leaves what is on disk uncertain: it is reported as ``logstructured.Broken``,
``resume()`` does not clear it, and writes stay refused until a restart.

A new database is built under a temporary name and renamed into place, so this module
never leaves a zero-length file behind; one found at start was truncated, and opening
it would silently serve an empty store, so it is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pyocm.apiserver.storage import errors, logstructured
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL,"
    " create_revision INTEGER NOT NULL, mod_revision INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS kv_revision_on_{verb.lower()} AFTER {verb} ON kv BEGIN"
        " UPDATE meta SET value = NEW.mod_revision"
        " WHERE name = 'revision' AND value < NEW.mod_revision; END"
        for verb in ("INSERT", "UPDATE")
    ),
)
_UPSERT_TAIL = (
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value,"
    " create_revision = excluded.create_revision, mod_revision = excluded.mod_revision"
)
_SET_REVISION = "UPDATE meta SET value = ? WHERE name = 'revision'"
#: Rows per upsert statement and keys per delete statement: within the 999 parameters
#: older SQLite builds allow, and few enough statement shapes for the connection's cache
#: of prepared statements. A batch needing more statements is one explicit transaction.
_ROWS_PER_STATEMENT = 64
_KEYS_PER_STATEMENT = 256
_PROBE = "UPDATE meta SET value = value WHERE name = 'revision'"
#: Below this many free bytes the disk counts as full: an I/O error at open is taken for
#: a full disk (SQLite reports a shared-memory file it cannot grow as
#: SQLITE_IOERR_SHMSIZE, not SQLITE_FULL), and a probe does not report the store healthy.
_NEARLY_FULL = 1 << 20
_STOP = object()
_RESUME = object()
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Probe:
    """Asks the writer for a write that changes nothing; answered with its error."""

    answer: asyncio.Future[errors.Unavailable | None]


@dataclass(frozen=True, slots=True)
class SqliteOptions:
    """``synchronous``: FULL survives power loss; NORMAL in WAL mode may lose the last
    transactions on power loss (never on a process crash) and is about twice as fast."""

    synchronous: Literal["FULL", "NORMAL"] = "FULL"
    max_batch: int = 1000

    def __post_init__(self) -> None:
        # synchronous is spliced into a PRAGMA, so only the two known words may pass.
        if self.synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {self.synchronous!r}")
        if self.max_batch < 1:
            raise ValueError("max_batch must be at least 1")


class SqliteLog:
    """A :class:`logstructured.Log` in one SQLite file (WAL mode).

    ``transactions`` counts committed write transactions, so tests and benchmarks can
    see how many writes group commit folded into each.
    """

    name = "sqlite"

    def __init__(
        self, path: str | os.PathLike[str], *, options: SqliteOptions | None = None
    ) -> None:
        self.path = Path(path)
        self.options = options or SqliteOptions()
        self._queue: queue.SimpleQueue[Event | object] = queue.SimpleQueue()
        self._writer: _Writer | None = None

    @property
    def transactions(self) -> int:
        return 0 if self._writer is None else self._writer.transactions

    async def open(self, sink: logstructured.CommitSink) -> logstructured.Recovered:
        loop = asyncio.get_running_loop()
        conn, recovered = await asyncio.to_thread(self._open_sync)
        self._writer = _Writer(
            conn,
            folder=self.path.parent,
            inbox=self._queue,
            max_batch=self.options.max_batch,
            sink=sink,
            loop=loop,
        )
        # A daemon: a process that exits without close() loses nothing acknowledged.
        thread = threading.Thread(target=self._writer.run, name="pyocm-sqlite-writer", daemon=True)
        thread.start()
        return recovered

    def append(self, event: Event) -> None:
        self._queue.put(event)

    def resume(self) -> None:
        self._queue.put(_RESUME)

    async def probe(self) -> None:
        answer: asyncio.Future[errors.Unavailable | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._queue.put(_Probe(answer))
        error = await answer
        if error is not None:
            raise error

    async def close(self) -> None:
        """Commit what is queued, checkpoint the WAL into the main file, close."""
        if self._writer is None:
            return
        self._queue.put(_STOP)
        await self._writer.stopped

    def _open_sync(self) -> tuple[sqlite3.Connection, logstructured.Recovered]:
        try:
            if not self.path.exists():
                self._create()
            os.close(os.open(self.path, os.O_RDWR))
            _refuse_empty(self.path)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise self._open_error("cannot open the sqlite database", exc) from None
        try:
            self._prepare(conn)
            return conn, self._recover()
        except sqlite3.Error as exc:
            conn.close()
            raise self._open_error("cannot read the sqlite database", exc) from None

    def _prepare(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.options.synchronous}")
        for statement in _SCHEMA:
            conn.execute(statement)

    def _create(self) -> None:
        """Build the schema in a file of its own and rename it into place (beside the
        link's target, if ``path`` is a dangling symlink), durably: a crash leaves no
        database or a whole one, never a zero-length file."""
        target = self.path.resolve()
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        building = target.with_name(target.name + ".new")
        for leftover in ("", "-wal", "-shm", "-journal"):
            Path(f"{building}{leftover}").unlink(missing_ok=True)
        # Objects include Secrets: the file is created readable by the owner only (the
        # WAL and shared-memory files SQLite makes take the same mode).
        os.close(os.open(building, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        conn = sqlite3.connect(building, isolation_level=None)
        try:
            self._prepare(conn)
        finally:
            conn.close()  # checkpoints: the file alone holds the schema now
        _fsync(building)
        os.replace(building, target)
        _fsync(target.parent)

    def _open_error(self, what: str, exc: BaseException) -> errors.Unavailable:
        """Say "disk full" with the path and the remedy (this is what an operator reads
        when the hub will not start); otherwise only the error code."""
        if _disk_full(self.path, exc):
            path = self.path.resolve()  # as the operator knows it: no "//", no links
            return errors.Unavailable(
                f"cannot open the sqlite database {path}: the disk is full"
                f" ({_code(exc)}); free space on the filesystem holding"
                f" {path.parent}, then start again"
            )
        return _unavailable(what, exc)

    def _recover(self) -> logstructured.Recovered:
        """Read the state on its own connection, as the writer never reads."""
        reader = sqlite3.connect(self.path)
        try:
            rows = reader.execute("SELECT key, value, create_revision, mod_revision FROM kv")
            kvs = [KeyValue(key, bytes(value), create, mod) for key, value, create, mod in rows]
            row = reader.execute("SELECT value FROM meta WHERE name = 'revision'").fetchone()
        finally:
            reader.close()
        revision = max([row[0] if row else 0, *(kv.mod_revision for kv in kvs)])
        return logstructured.Recovered(revision, kvs)


class _Writer:
    """The body of the writer thread; it alone touches the write connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        folder: Path,
        inbox: queue.SimpleQueue[Event | object],
        max_batch: int,
        sink: logstructured.CommitSink,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.transactions = 0
        self.stopped: asyncio.Future[None] = loop.create_future()
        self._conn = conn
        self._folder = folder
        self._inbox = inbox
        self._max_batch = max_batch
        self._sink = sink
        self._loop = loop
        self._failure: errors.Unavailable | None = None

    def run(self) -> None:
        while True:
            batch, order = self._next_batch()
            if batch:
                self._commit(batch)
            if order is _STOP:
                break
            if order is _RESUME and not isinstance(self._failure, logstructured.Broken):
                self._failure = None
            elif isinstance(order, _Probe):
                self._probe(order)
        self._shutdown()

    def _next_batch(self) -> tuple[list[Event], object]:
        """Block for one item, then take the events already queued behind it, up to the
        first item that is not an event (an order, answered after the batch)."""
        batch: list[Event] = []
        item = self._inbox.get()
        while isinstance(item, Event):
            batch.append(item)
            if len(batch) >= self._max_batch:
                return batch, None
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return batch, None
        return batch, item

    def _commit(self, batch: list[Event]) -> None:
        if self._failure is None:
            try:
                self._write(batch)
            except Exception as exc:  # any failure here must reach the waiting writers
                self._rollback()
                self._failure = _commit_failure(self._folder, exc)
        if self._failure is None:
            self.transactions += 1
            self._report(self._sink.committed, batch)
        else:
            self._report(self._sink.failed, batch, self._failure)

    def _write(self, batch: list[Event]) -> None:
        # kv holds the current state, so only each key's last event in the batch counts.
        last = {event.kv.key: event for event in batch}
        rows: list[tuple[str, bytes, int, int]] = []
        deleted: list[str] = []
        for event in last.values():
            kv = event.kv
            if event.type is EventType.PUT:
                rows.append((kv.key, kv.value, kv.create_revision, kv.mod_revision))
            else:
                deleted.append(kv.key)
        conn = self._conn
        if not deleted and len(rows) <= _ROWS_PER_STATEMENT:
            conn.execute(_upsert(len(rows)), [v for row in rows for v in row])
            return  # one statement commits itself; the triggers moved the revision
        conn.execute("BEGIN IMMEDIATE")
        for part in _chunks(rows, _ROWS_PER_STATEMENT):
            conn.execute(_upsert(len(part)), [v for row in part for v in row])
        for keys in _chunks(deleted, _KEYS_PER_STATEMENT):
            conn.execute(f"DELETE FROM kv WHERE key IN ({','.join('?' * len(keys))})", keys)
        conn.execute(_SET_REVISION, (batch[-1].revision,))
        conn.execute("COMMIT")

    def _probe(self, probe: _Probe) -> None:
        """A write that changes nothing, on a filesystem that has room: a small write
        may still fit in space SQLite holds (its WAL) while the next large one fails."""
        error = self._failure
        if error is None and _free_bytes(self._folder) < _NEARLY_FULL:
            error = errors.Unavailable("sqlite probe write refused: the disk is full")
        if error is None:
            try:
                self._conn.execute(_PROBE)
            except Exception as exc:  # the answer must reach the waiting caller
                self._rollback()
                error = _unavailable("sqlite probe write failed", exc)
        self._report(_answer, probe.answer, error)

    def _rollback(self) -> None:
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the failure being reported already says the connection is unusable

    def _shutdown(self) -> None:
        try:
            if self._failure is None:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()
        except sqlite3.Error:
            pass  # every write is committed or reported failed; nothing is lost here
        self._report(_resolve, self.stopped)

    def _report(self, callback: Callable[..., object], *args: object) -> None:
        # A closed loop raises RuntimeError: nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(callback, *args)


def _chunks(items: list[_T], size: int) -> list[list[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@functools.cache  # at most _ROWS_PER_STATEMENT shapes
def _upsert(count: int) -> str:
    """One statement for ``count`` rows; SQLite caches it prepared by its text."""
    values = ",".join(["(?, ?, ?, ?)"] * count)
    return (
        f"INSERT INTO kv (key, value, create_revision, mod_revision) VALUES {values}" + _UPSERT_TAIL
    )


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _answer(
    future: asyncio.Future[errors.Unavailable | None], error: errors.Unavailable | None
) -> None:
    if not future.done():
        future.set_result(error)


def _unavailable(what: str, exc: BaseException) -> errors.Unavailable:
    """Name the failure by its SQLite error code, never by a message that may quote
    values, paths or keys."""
    return errors.Unavailable(f"{what} ({_code(exc)})")


#: I/O errors that are never a full disk's: after a failed fsync the kernel may have
#: dropped the dirty pages, so what is on disk is uncertain however much room there is.
_FSYNC_ERRORS = frozenset({"SQLITE_IOERR_FSYNC", "SQLITE_IOERR_DIR_FSYNC"})


def _commit_failure(folder: Path, exc: BaseException) -> errors.Unavailable:
    """A full disk heals once space is freed; anything else needs a restart."""
    if _code(exc) not in _FSYNC_ERRORS and _disk_full(folder / "state", exc):
        return _unavailable("sqlite commit failed", exc)
    return logstructured.Broken(
        f"sqlite commit failed ({_code(exc)}); writes are refused until the hub restarts"
    )


def _code(exc: BaseException) -> str:
    return getattr(exc, "sqlite_errorname", None) or type(exc).__name__


def _disk_full(path: Path, exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    code = _code(exc)
    if code == "SQLITE_FULL":
        return True
    return code.startswith("SQLITE_IOERR") and _free_bytes(path.parent) < _NEARLY_FULL


def _free_bytes(folder: Path) -> int:
    """Bytes an unprivileged writer may still use there (unknown: as good as unlimited)."""
    try:
        fs = os.statvfs(folder)
    except OSError:
        return _NEARLY_FULL
    return fs.f_bavail * fs.f_frsize


def _refuse_empty(path: Path) -> None:
    if path.stat().st_size == 0:
        raise errors.Unavailable(
            f"the sqlite database {path.resolve()} is empty (0 bytes) although it exists: it was"
            " truncated or replaced, and starting would serve none of the stored objects;"
            " restore it from a backup, or remove it to start with an empty store"
        )


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_backend(
    path: str | os.PathLike[str],
    *,
    sqlite: SqliteOptions | None = None,
    options: logstructured.Options | None = None,
) -> logstructured.LogStructured:
    """A store (not started) in the SQLite file at ``path``."""
    return logstructured.LogStructured(SqliteLog(path, options=sqlite), options=options)
