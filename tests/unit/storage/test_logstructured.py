"""The MVCC rules of LogStructured over a log whose commits the test controls."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from pyocm.apiserver.storage import errors, logstructured
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


class HeldLog:
    """Holds appended writes until the test commits or fails them. Probes fail while
    ``probe_error`` is set; ``resumed`` and ``probes`` count the store's calls."""

    name = "held"

    def __init__(self) -> None:
        self.held: list[Event] = []
        self.sink: logstructured.CommitSink | None = None
        self.resumed = 0
        self.probes = 0
        self.probe_error: errors.Unavailable | None = None

    async def open(self, sink: logstructured.CommitSink) -> logstructured.Recovered:
        self.sink = sink
        return logstructured.Recovered(0, [])

    def append(self, event: Event) -> None:
        self.held.append(event)

    def commit(self) -> None:
        assert self.sink is not None
        batch, self.held = self.held, []
        self.sink.committed(batch)

    def fail(self, count: int | None = None, *, error: errors.Unavailable | None = None) -> None:
        """Fail the first ``count`` held writes (all by default) as one batch."""
        assert self.sink is not None
        count = len(self.held) if count is None else count
        batch, self.held = self.held[:count], self.held[count:]
        self.sink.failed(batch, error or errors.Unavailable("sqlite commit failed (SQLITE_FULL)"))

    def resume(self) -> None:
        self.resumed += 1

    async def probe(self) -> None:
        self.probes += 1
        await asyncio.sleep(0)
        if self.probe_error is not None:
            raise self.probe_error

    async def close(self) -> None:
        if self.held:
            self.commit()


async def started(log: HeldLog, **options: object) -> logstructured.LogStructured:
    store = logstructured.LogStructured(log, options=logstructured.Options(**options))  # type: ignore[arg-type]
    await store.start()
    return store


async def settle() -> None:
    """Let every ready task run up to its next real wait."""
    for _ in range(5):
        await asyncio.sleep(0)


async def committed_key(store: logstructured.LogStructured, log: HeldLog, key: str) -> KeyValue:
    task = asyncio.create_task(store.create(key, b"v1"))
    await settle()
    log.commit()
    return await task


async def test_a_write_is_invisible_until_it_is_durable() -> None:
    log = HeldLog()
    store = await started(log)
    task = asyncio.create_task(store.create("/k", b"v"))
    await settle()
    assert not task.done()
    assert await store.get("/k") is None
    assert await store.count("/") == 0
    assert store.current_revision() == 0
    log.commit()
    kv = await task
    assert kv == KeyValue("/k", b"v", 1, 1)
    assert await store.get("/k") == kv
    assert store.current_revision() == 1


async def test_create_on_a_pending_create_waits_then_raises_key_exists() -> None:
    log = HeldLog()
    store = await started(log)
    first = asyncio.create_task(store.create("/k", b"a"))
    second = asyncio.create_task(store.create("/k", b"b"))
    await settle()
    assert not second.done()
    assert len(log.held) == 1
    log.commit()
    assert (await first).value == b"a"
    with pytest.raises(errors.KeyExists):
        await second


async def test_conflict_waits_for_the_pending_write_and_carries_it_once_durable() -> None:
    log = HeldLog()
    store = await started(log)
    created = await committed_key(store, log, "/k")
    winner = asyncio.create_task(store.update("/k", b"v2", expected_revision=created.mod_revision))
    loser = asyncio.create_task(store.update("/k", b"v3", expected_revision=created.mod_revision))
    await settle()
    assert not loser.done()
    log.commit()
    won = await winner
    with pytest.raises(errors.Conflict) as caught:
        await loser
    assert caught.value.current == won


async def test_a_create_may_follow_a_pending_delete() -> None:
    log = HeldLog()
    store = await started(log)
    await committed_key(store, log, "/k")
    deleting = asyncio.create_task(store.delete("/k"))
    recreating = asyncio.create_task(store.create("/k", b"again"))
    await settle()
    assert [event.type for event in log.held] == [EventType.DELETE, EventType.PUT]
    log.commit()
    assert (await deleting).mod_revision == 2
    assert await recreating == KeyValue("/k", b"again", 3, 3)


async def test_an_update_after_a_pending_delete_raises_key_not_found_once_durable() -> None:
    log = HeldLog()
    store = await started(log)
    created = await committed_key(store, log, "/k")
    deleting = asyncio.create_task(store.delete("/k"))
    updating = asyncio.create_task(store.update("/k", b"x", expected_revision=created.mod_revision))
    await settle()
    assert not updating.done()
    assert await store.get("/k") == created
    log.commit()
    await deleting
    with pytest.raises(errors.KeyNotFound):
        await updating


async def test_a_failed_commit_fails_the_writes_in_flight_with_it_and_keeps_reads() -> None:
    log = HeldLog()
    store = await started(log)
    kept = await committed_key(store, log, "/kept")
    first = asyncio.create_task(store.create("/a", b""))
    second = asyncio.create_task(store.update("/kept", b"x", expected_revision=kept.mod_revision))
    await settle()
    log.fail(1)
    with pytest.raises(errors.Unavailable, match=r"^sqlite commit failed \(SQLITE_FULL\)$"):
        await first
    assert log.resumed == 1, "the log is told to fail what it holds, then go on"
    # The second write is still in flight: a new one is refused, not appended.
    with pytest.raises(errors.Unavailable, match=r"^sqlite commit failed \(SQLITE_FULL\)$"):
        await store.create("/b", b"")
    assert [event.kv.key for event in log.held] == ["/kept"]
    log.fail()  # what the log held before resume() fails, as the contract says
    with pytest.raises(errors.Unavailable):
        await second
    assert await store.get("/kept") == kept
    assert await store.get("/a") is None
    assert store.current_revision() == kept.mod_revision
    assert log.resumed == 1


async def test_writes_are_tried_again_once_the_failed_ones_are_all_reported() -> None:
    log = HeldLog()
    store = await started(log)
    failing = asyncio.create_task(store.create("/a", b"lost"))
    await settle()
    log.fail()
    with pytest.raises(errors.Unavailable):
        await failing
    lost_revision = store._assigned
    kv = await committed_key(store, log, "/a")
    assert kv.mod_revision > lost_revision, "no revision is given twice"
    assert await store.get("/a") == kv
    await store.check()
    assert log.probes == 0, "a committed write is proof enough"


async def test_check_probes_the_log_until_a_probe_commits() -> None:
    log = HeldLog()
    store = await started(log)
    await store.check()
    assert log.probes == 0, "a healthy store is not probed"
    failing = asyncio.create_task(store.create("/a", b""))
    await settle()
    log.probe_error = errors.Unavailable("sqlite probe write failed (SQLITE_FULL)")
    log.fail()
    with pytest.raises(errors.Unavailable):
        await failing
    with pytest.raises(errors.Unavailable, match="probe write failed"):
        await store.check()
    results = await asyncio.gather(store.check(), store.check(), return_exceptions=True)
    assert all(isinstance(result, errors.Unavailable) for result in results)
    assert log.probes == 2, "concurrent checks share one probe"
    log.probe_error = None
    await store.check()
    await store.check()
    assert log.probes == 3, "once a probe commits the store is healthy again"


async def test_check_refuses_while_failed_writes_are_in_flight_without_probing() -> None:
    log = HeldLog()
    store = await started(log)
    tasks = [asyncio.create_task(store.create(key, b"")) for key in ("/a", "/b")]
    await settle()
    log.fail(1)
    with pytest.raises(errors.Unavailable, match="commit failed"):
        await store.check()
    assert log.probes == 0
    log.fail()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_cancelled_writer_still_commits() -> None:
    log = HeldLog()
    store = await started(log)
    task = asyncio.create_task(store.create("/k", b"v"))
    await settle()
    task.cancel()
    await settle()
    log.commit()
    assert await store.get("/k") == KeyValue("/k", b"v", 1, 1)


async def test_a_raising_commit_hook_is_logged_and_does_not_stop_the_commit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = HeldLog()
    store = await started(log)
    calls: list[int] = []

    def broken(events: list[Event]) -> None:
        raise RuntimeError("boom")

    store.add_commit_hook(broken)
    store.add_commit_hook(lambda events: calls.append(events[-1].revision))
    with caplog.at_level(logging.ERROR):
        kv = await committed_key(store, log, "/k")
    assert calls == [kv.mod_revision]
    assert "storage commit hook failed" in caplog.text


async def test_history_keeps_exactly_history_size_events() -> None:
    log = HeldLog()
    store = await started(log, history_size=3)
    for i in range(5):
        await committed_key(store, log, f"/k{i}")
    assert store.oldest_revision() == 2
    with pytest.raises(errors.Compacted):
        await anext(store.watch("/", after_revision=1))
    events = [
        await anext(stream) for stream in [store.watch("/", after_revision=2)] for _ in range(3)
    ]
    assert [event.revision for event in events] == [3, 4, 5]


async def test_history_keeps_young_events_beyond_its_size() -> None:
    now = [100.0]
    log = HeldLog()
    store = await started(log, history_size=2, history_min_age=60.0, clock=lambda: now[0])
    for i in range(4):
        await committed_key(store, log, f"/k{i}")
    assert store.oldest_revision() == 0
    now[0] += 60.0
    await committed_key(store, log, "/k4")
    assert store.oldest_revision() == 3


async def test_history_drops_events_older_than_its_max_age() -> None:
    now = [100.0]
    log = HeldLog()
    store = await started(log, history_max_age=300.0, clock=lambda: now[0])
    for i in range(3):
        await committed_key(store, log, f"/k{i}")
    now[0] += 300.0
    await committed_key(store, log, "/k3")  # the first three are exactly 300 s old: kept
    assert store.oldest_revision() == 0
    now[0] += 0.5
    await committed_key(store, log, "/k4")
    assert store.oldest_revision() == 3
    with pytest.raises(errors.Compacted):
        await anext(store.watch("/", after_revision=2))
    assert [(await anext(store.watch("/", after_revision=3))).revision] == [4]


async def test_history_min_age_outlasts_a_shorter_max_age() -> None:
    now = [100.0]
    log = HeldLog()
    store = await started(log, history_min_age=600.0, history_max_age=300.0, clock=lambda: now[0])
    await committed_key(store, log, "/k0")
    now[0] += 400.0
    await committed_key(store, log, "/k1")
    assert store.oldest_revision() == 0
    now[0] += 201.0
    await committed_key(store, log, "/k2")
    assert store.oldest_revision() == 1


async def test_replay_matches_a_walk_of_the_history() -> None:
    """Writes, deletes and re-creations of keys that are prefixes of each other, with
    compaction; every prefix (and key alone) and start revision must replay what the
    history holds."""
    rng = random.Random(7)
    log = HeldLog()
    store = await started(log, history_size=40)
    keys = ["/a/k1", "/a/k10", "/a/k2", "/b/x", *(f"/c/{i}" for i in range(12))]
    committed: list[Event] = []
    store.add_commit_hook(committed.extend)
    for _ in range(300):
        key = rng.choice(keys)
        current = await store.get(key)
        if current is None:
            write = store.create(key, b"new")
        elif rng.random() < 0.3:
            write = store.delete(key)
        else:
            write = store.update(key, b"changed", expected_revision=current.mod_revision)
        task = asyncio.ensure_future(write)
        await settle()
        log.commit()
        await task
        oldest, newest = store.oldest_revision(), store.current_revision()
        for prefix in ("/a/k1", "/a/k2", "/a/k10", "/b/x", "/b/y", "/c/1", "/c/", "/"):
            for after in {oldest, newest, rng.randint(oldest, newest)}:
                expected = [
                    e for e in committed if e.revision > after and e.kv.key.startswith(prefix)
                ]
                assert store._history.replay(prefix, after) == expected, (prefix, after)
                alone = [e for e in expected if e.kv.key == prefix]
                assert store._history.replay(prefix, after, exact=True) == alone, (prefix, after)


async def test_an_overflowing_watcher_is_cut_off_and_others_go_on() -> None:
    log = HeldLog()
    store = await started(log, watch_queue_size=2)
    slow = store.watch("/", after_revision=0)
    fast = store.watch("/", after_revision=0)
    first = await committed_key(store, log, "/k0")
    assert (await anext(slow)).kv == first
    assert (await anext(fast)).kv == first
    later = []
    for i in range(1, 4):
        later.append(await committed_key(store, log, f"/k{i}"))
        assert (await anext(fast)).kv == later[-1]
    with pytest.raises(errors.Compacted) as caught:
        await anext(slow)
    assert (caught.value.requested, caught.value.oldest) == (first.mod_revision, 0)


async def test_an_event_reaches_only_watchers_of_matching_prefixes() -> None:
    log = HeldLog()
    store = await started(log)
    streams = {
        prefix: store.watch(prefix, after_revision=0) for prefix in ("", "/a/", "/a/b/", "/c/")
    }
    pending = {prefix: asyncio.ensure_future(anext(stream)) for prefix, stream in streams.items()}
    await settle()
    kv = await committed_key(store, log, "/a/b/x")
    await settle()
    assert {prefix for prefix, task in pending.items() if task.done()} == {"", "/a/", "/a/b/"}
    assert pending["/a/b/"].result().kv == kv
    pending["/c/"].cancel()


async def test_prefixes_ending_in_the_last_code_point_are_ranges_too() -> None:
    log = HeldLog()
    store = await started(log)
    top = "\U0010ffff"
    for key in (f"a{top}", f"a{top}z", "b", f"{top}{top}"):
        await committed_key(store, log, key)
    assert [kv.key for kv in (await store.list(f"a{top}"))[1]] == [f"a{top}", f"a{top}z"]
    assert await store.count(top) == 1
    assert await store.count(f"{top}{top}") == 1


async def test_requests_before_start_are_refused() -> None:
    store = logstructured.LogStructured(HeldLog())
    with pytest.raises(errors.Unavailable, match=r"^storage is not started$"):
        await store.get("/k")


async def test_close_commits_what_the_log_holds_then_refuses_reads() -> None:
    log = HeldLog()
    store = await started(log)
    task = asyncio.create_task(store.create("/k", b""))
    await settle()
    await store.close()
    assert (await task).mod_revision == 1
    with pytest.raises(errors.Unavailable, match=r"^storage is closed$"):
        await store.list("/")
    await store.close()


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"history_size": -1}, id="negative-history"),
        pytest.param({"history_min_age": -1.0}, id="negative-age"),
        pytest.param({"history_max_age": -1.0}, id="negative-max-age"),
        pytest.param({"watch_queue_size": 0}, id="empty-queue"),
    ],
)
def test_options_reject_impossible_values(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        logstructured.Options(**options)  # type: ignore[arg-type]


def test_event_kinds() -> None:
    assert [kind.value for kind in EventType] == ["PUT", "DELETE", "PROGRESS"]


async def test_a_commit_failure_other_than_a_full_disk_refuses_writes_until_restart() -> None:
    """After a failed fsync or an I/O error the state on disk is uncertain: unlike a full
    disk, nothing heals it while the hub runs. Writes stay refused, readiness says why,
    reads keep serving the last durable state; a restart reloads from disk."""
    log = HeldLog()
    store = await started(log)
    kept = await committed_key(store, log, "/kept")
    failing = asyncio.create_task(store.create("/a", b""))
    await settle()
    broken = logstructured.Broken("sqlite commit failed (SQLITE_IOERR_FSYNC)")
    log.fail(error=broken)
    with pytest.raises(errors.Unavailable):
        await failing
    for _ in range(2):
        with pytest.raises(logstructured.Broken):
            await store.create("/b", b"")
        with pytest.raises(logstructured.Broken):
            await store.update("/kept", b"x", expected_revision=kept.mod_revision)
        with pytest.raises(logstructured.Broken, match="SQLITE_IOERR_FSYNC"):
            await store.check()
    assert log.held == [], "nothing more reaches the log"
    assert log.probes == 0, "a probe that commits would not make the state certain"
    assert await store.get("/kept") == kept
