"""The SQLite dialect: schema, group commit, in-place rewrites, errors, shutdown."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pyocm.apiserver.storage import errors, logstructured, sqlite
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "dir" / "state.db"


@pytest.fixture
async def store(path: Path) -> AsyncIterator[logstructured.LogStructured]:
    backend = sqlite.new_backend(path)
    await backend.start()
    yield backend
    await backend.close()


def rows(path: Path, query: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def sqlite_error(message: str, name: str) -> sqlite3.OperationalError:
    """An error as SQLite raises it, with its code's name."""
    error = sqlite3.OperationalError(message)
    error.sqlite_errorname = name
    return error


def log_of(store: logstructured.LogStructured) -> sqlite.SqliteLog:
    assert isinstance(store.log, sqlite.SqliteLog)
    return store.log


async def test_the_file_is_created_owner_only_in_wal_mode(
    store: logstructured.LogStructured, path: Path
) -> None:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert rows(path, "PRAGMA journal_mode") == [("wal",)]


async def test_concurrent_writes_share_transactions(store: logstructured.LogStructured) -> None:
    kvs = await asyncio.gather(*(store.create(f"/k{i}", b"v") for i in range(500)))
    before = log_of(store).transactions
    await asyncio.gather(
        *(store.update(kv.key, b"w", expected_revision=kv.mod_revision) for kv in kvs)
    )
    assert 1 <= log_of(store).transactions - before <= 50


async def test_sequential_writes_commit_one_transaction_each(
    store: logstructured.LogStructured,
) -> None:
    for i in range(10):
        await store.create(f"/k{i}", b"")
    assert log_of(store).transactions == 10


async def test_rewrites_update_rows_in_place_and_persist_the_revision(
    store: logstructured.LogStructured, path: Path
) -> None:
    kv = await store.create("/lease", b"0")
    for i in range(200):
        kv = await store.update("/lease", str(i).encode(), expected_revision=kv.mod_revision)
    await store.create("/gone", b"")
    last = await store.delete("/gone")
    assert rows(path, "SELECT key, value, create_revision, mod_revision FROM kv") == [
        ("/lease", b"199", 1, kv.mod_revision)
    ]
    assert rows(path, "SELECT name, value FROM meta") == [("revision", last.mod_revision)]


async def test_close_commits_queued_writes_and_checkpoints_the_wal(path: Path) -> None:
    backend = sqlite.new_backend(path, sqlite=sqlite.SqliteOptions(synchronous="NORMAL"))
    await backend.start()
    tasks = [asyncio.create_task(backend.create(f"/k{i}", b"")) for i in range(50)]
    await asyncio.sleep(0)
    await backend.close()
    assert all(task.done() and task.exception() is None for task in tasks)
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert rows(path, "SELECT COUNT(*) FROM kv") == [(50,)]


async def test_a_failing_commit_raises_unavailable_until_the_disk_takes_writes_again(
    store: logstructured.LogStructured, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = await store.create("/kept", b"")

    def broken(self: object, batch: object) -> None:
        raise sqlite_error("database or disk is full near '/secret/key'", "SQLITE_FULL")

    monkeypatch.setattr(sqlite._Writer, "_write", broken)
    with pytest.raises(errors.Unavailable) as caught:
        await store.create("/secret/key", b"")
    assert str(caught.value) == "sqlite commit failed (SQLITE_FULL)"
    with pytest.raises(errors.Unavailable):
        await store.update("/kept", b"x", expected_revision=kept.mod_revision)
    assert await store.get("/kept") == kept
    monkeypatch.undo()
    updated = await store.update("/kept", b"x", expected_revision=kept.mod_revision)
    await store.check()
    assert rows(path, "SELECT key, value, mod_revision FROM kv") == [
        ("/kept", b"x", updated.mod_revision)
    ]


class Outcomes:
    """A CommitSink that records what the log reports."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, list[str]]] = []
        self.changed = asyncio.Event()

    def committed(self, events: list[Event]) -> None:
        self.reports.append(("committed", [e.kv.key for e in events]))
        self.changed.set()

    def failed(self, events: list[Event], error: errors.Unavailable) -> None:
        self.reports.append(("failed", [e.kv.key for e in events]))
        self.changed.set()

    async def until(self, count: int) -> list[tuple[str, list[str]]]:
        while sum(len(keys) for _, keys in self.reports) < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), timeout=10)
        return self.reports


def put(key: str, revision: int) -> Event:
    return Event(EventType.PUT, KeyValue(key, b"", revision, revision), None)


async def test_the_writer_fails_what_was_queued_before_resume_and_commits_after(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes queued behind a failed batch were decided on its state: they fail even if
    the disk has room again, until the store says resume."""
    failures = iter([sqlite_error("database or disk is full", "SQLITE_FULL")])
    write = sqlite._Writer._write

    def fails_once(self: sqlite._Writer, batch: list[Event]) -> None:
        error = next(failures, None)
        if error is not None:
            raise error
        write(self, batch)

    monkeypatch.setattr(sqlite._Writer, "_write", fails_once)
    log = sqlite.SqliteLog(path)
    outcomes = Outcomes()
    await log.open(outcomes)
    log.append(put("/a", 1))
    log.append(put("/b", 2))
    await outcomes.until(2)
    log.resume()
    log.append(put("/c", 3))
    reports = await outcomes.until(3)
    await log.probe()
    await log.close()
    assert [(kind, key) for kind, keys in reports for key in keys] == [
        ("failed", "/a"), ("failed", "/b"), ("committed", "/c")
    ]  # fmt: skip
    assert rows(path, "SELECT key FROM kv") == [("/c",)]


async def test_a_zero_length_database_is_refused_and_left_as_found(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"")
    with pytest.raises(errors.Unavailable) as caught:
        await sqlite.new_backend(path).start()
    assert str(caught.value).startswith(f"the sqlite database {path} is empty (0 bytes)")
    assert path.stat().st_size == 0


async def test_a_new_database_is_built_aside_and_renamed_into_place(tmp_path: Path) -> None:
    """A crash while building leaves no state.db (or a whole one), never an empty one;
    what a crash left under the temporary name is built again."""
    path = tmp_path / "state.db"
    (tmp_path / "state.db.new").write_bytes(b"half-built")
    backend = sqlite.new_backend(path)
    await backend.start()
    try:
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".new")) == []
        assert path.read_bytes().startswith(b"SQLite format 3\0")
        assert rows(path, "PRAGMA journal_mode") == [("wal",)]
    finally:
        await backend.close()


async def test_a_dangling_symlink_gets_its_database_at_the_target(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "real.db"
    link = tmp_path / "state.db"
    link.symlink_to(target)
    backend = sqlite.new_backend(link)
    await backend.start()
    await backend.create("/k", b"v")
    await backend.close()
    assert link.is_symlink() and rows(target, "SELECT key FROM kv") == [("/k",)]


async def test_a_file_that_is_not_a_database_raises_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database" * 100)
    backend = sqlite.new_backend(path)
    with pytest.raises(errors.Unavailable) as caught:
        await backend.start()
    assert str(caught.value) == "cannot read the sqlite database (SQLITE_NOTADB)"


async def test_a_path_that_cannot_be_a_file_raises_unavailable(tmp_path: Path) -> None:
    backend = sqlite.new_backend(tmp_path)
    with pytest.raises(errors.Unavailable) as caught:
        await backend.start()
    assert str(caught.value) == "cannot open the sqlite database (IsADirectoryError)"


async def test_a_key_written_several_times_in_one_batch_keeps_its_last_state(
    store: logstructured.LogStructured, path: Path
) -> None:
    # Writes that do not wait for each other share batches; each key's last event wins.
    for round_ in range(20):
        await asyncio.gather(
            store.create(f"/again{round_}", b"first"),
            store.delete(f"/again{round_}"),
            store.create(f"/again{round_}", b"second"),
            store.create(f"/gone{round_}", b""),
            store.delete(f"/gone{round_}"),
            *(store.create(f"/plain{round_}-{i}", b"p") for i in range(5)),
        )
    assert log_of(store).transactions < 20 * 10  # some writes did share a batch
    _, live = await store.list("/")
    assert rows(path, "SELECT key, value, create_revision, mod_revision FROM kv ORDER BY key") == [
        (kv.key, kv.value, kv.create_revision, kv.mod_revision) for kv in live
    ]
    assert rows(path, "SELECT value FROM meta") == [(store.current_revision(),)]


async def test_a_batch_of_puts_moves_the_stored_revision(
    store: logstructured.LogStructured, path: Path
) -> None:
    await store.create("/gone", b"")
    await store.delete("/gone")
    kvs = await asyncio.gather(*(store.create(f"/k{i}", b"") for i in range(30)))
    assert rows(path, "SELECT value FROM meta") == [(max(kv.mod_revision for kv in kvs),)]


async def test_a_batch_larger_than_one_statement_is_one_transaction(
    store: logstructured.LogStructured, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Statements of 3 rows or keys: a shared batch takes several, under one commit.
    monkeypatch.setattr(sqlite, "_ROWS_PER_STATEMENT", 3)
    monkeypatch.setattr(sqlite, "_KEYS_PER_STATEMENT", 3)
    kvs = await asyncio.gather(*(store.create(f"/gone{i}", b"") for i in range(300)))
    before = log_of(store).transactions
    await asyncio.gather(
        *(store.create(f"/new{i}", b"n") for i in range(300)),
        *(store.delete(kv.key) for kv in kvs),
    )
    assert log_of(store).transactions - before < 20
    assert rows(path, "SELECT COUNT(*) FROM kv WHERE key LIKE '/gone%'") == [(0,)]
    assert rows(path, "SELECT COUNT(*) FROM kv WHERE key LIKE '/new%'") == [(300,)]
    assert rows(path, "SELECT value FROM meta") == [(store.current_revision(),)]


def test_max_batch_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"^max_batch must be at least 1$"):
        sqlite.SqliteOptions(max_batch=0)


@pytest.mark.parametrize(
    "error",
    [
        sqlite_error("disk I/O error", "SQLITE_IOERR_FSYNC"),
        sqlite_error("disk I/O error", "SQLITE_IOERR_WRITE"),
        sqlite_error("database disk image is malformed", "SQLITE_CORRUPT"),
        OSError(5, "Input/output error"),
    ],
    ids=["fsync", "write", "corrupt", "eio"],
)
async def test_a_commit_error_other_than_a_full_disk_keeps_writes_refused_until_restart(
    path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """After a failed fsync or an I/O error what is on disk is uncertain: the store does
    not resume by itself when the cause seems gone (as it does for a full disk); writes
    stay refused and readiness fails until a restart reloads the state from disk."""
    store = sqlite.new_backend(path)
    await store.start()
    kept = await store.create("/kept", b"")

    def broken(self: object, batch: object) -> None:
        raise error

    monkeypatch.setattr(sqlite._Writer, "_write", broken)
    with pytest.raises(errors.Unavailable):
        await store.create("/lost", b"")
    monkeypatch.undo()  # the disk seems fine again
    for _ in range(3):
        with pytest.raises(errors.Unavailable, match="restart"):
            await store.update("/kept", b"x", expected_revision=kept.mod_revision)
        with pytest.raises(errors.Unavailable, match="restart"):
            await store.check()
    with pytest.raises(errors.Unavailable, match="restart"):
        await log_of(store).probe()
    assert await store.get("/kept") == kept
    await store.close()
    restarted = sqlite.new_backend(path)
    await restarted.start()
    assert await restarted.get("/kept") == kept
    assert await restarted.get("/lost") is None
    await restarted.update("/kept", b"x", expected_revision=kept.mod_revision)
    await restarted.check()
    await restarted.close()
