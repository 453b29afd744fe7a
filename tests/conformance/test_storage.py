"""The storage contract, checked against every backend.

Each test exercises one promise of :mod:`pyocm.apiserver.storage.interface`. A backend
is done when this file passes unchanged against it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from pyocm.apiserver.storage import errors
from pyocm.apiserver.storage.interface import Backend, Event, EventType, KeyValue
from tests.conformance.conftest import OpenStore

PUT, DELETE = EventType.PUT, EventType.DELETE


async def take(stream: AsyncIterator[Event], count: int) -> list[Event]:
    """The next ``count`` events, failing rather than hanging if they never come."""
    return [await asyncio.wait_for(anext(stream), timeout=5) for _ in range(count)]


# Reads and writes.


async def test_create_returns_the_stored_key_at_a_new_revision(backend: Backend) -> None:
    before = backend.current_revision()
    kv = await backend.create("/r/a", b"one")
    assert kv == KeyValue("/r/a", b"one", kv.mod_revision, kv.mod_revision)
    assert kv.mod_revision > before
    assert backend.current_revision() == kv.mod_revision
    assert await backend.get("/r/a") == kv


async def test_create_of_a_live_key_raises_key_exists(backend: Backend) -> None:
    kv = await backend.create("/r/a", b"one")
    with pytest.raises(errors.KeyExists) as caught:
        await backend.create("/r/a", b"two")
    assert caught.value.key == "/r/a"
    assert await backend.get("/r/a") == kv


async def test_get_of_a_missing_key_is_none(backend: Backend) -> None:
    assert await backend.get("/r/missing") is None


async def test_values_round_trip_as_exact_bytes(backend: Backend) -> None:
    value = bytes(range(256)) * 4096  # every byte value, 1 MiB
    await backend.create("/r/binary", value)
    kv = await backend.get("/r/binary")
    assert kv is not None and kv.value == value


async def test_list_is_sorted_by_key_at_the_current_revision(backend: Backend) -> None:
    keys = [f"/r/k{i:03d}" for i in range(50)]
    for key in random.Random(7).sample(keys, len(keys)):
        await backend.create(key, key.encode())
    revision, kvs = await backend.list("/r/")
    assert [kv.key for kv in kvs] == keys
    assert [kv.value for kv in kvs] == [key.encode() for key in keys]
    assert revision == backend.current_revision()


PREFIX_KEYS = ["/a/b", "/a/b/x", "/a/b/y", "/a/bc/z", "/a/c", "/b/x"]


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        pytest.param("/a/b/", ["/a/b/x", "/a/b/y"], id="slash-ends-the-prefix"),
        pytest.param("/a/b", ["/a/b", "/a/b/x", "/a/b/y", "/a/bc/z"], id="plain-string-prefix"),
        pytest.param("/a/", ["/a/b", "/a/b/x", "/a/b/y", "/a/bc/z", "/a/c"], id="parent"),
        pytest.param("", PREFIX_KEYS, id="everything"),
        pytest.param("/a/b/x", ["/a/b/x"], id="exact-key"),
        pytest.param("/z/", [], id="nothing"),
    ],
)
async def test_list_and_count_match_exactly_the_prefix(
    backend: Backend, prefix: str, expected: list[str]
) -> None:
    for key in reversed(PREFIX_KEYS):
        await backend.create(key, b"")
    _, kvs = await backend.list(prefix)
    assert [kv.key for kv in kvs] == expected
    assert await backend.count(prefix) == len(expected)


async def test_list_at_a_past_revision_is_the_snapshot_of_then(backend: Backend) -> None:
    await backend.create("/other/x", b"")  # so that the revision before "a" is not 0
    a = await backend.create("/s/a", b"a1")
    b = await backend.create("/s/b", b"b1")
    then = backend.current_revision()
    await backend.update("/s/a", b"a2", expected_revision=a.mod_revision)
    await backend.delete("/s/b", expected_revision=b.mod_revision)
    await backend.create("/s/c", b"c1")
    revision, kvs = await backend.list("/s/", revision=then)
    assert revision == then
    assert [(kv.key, kv.value) for kv in kvs] == [("/s/a", b"a1"), ("/s/b", b"b1")]
    assert [kv.mod_revision for kv in kvs] == [a.mod_revision, b.mod_revision]
    _, now = await backend.list("/s/", revision=backend.current_revision())
    assert [(kv.key, kv.value) for kv in now] == [("/s/a", b"a2"), ("/s/c", b"c1")]
    _, before_all = await backend.list("/s/", revision=a.mod_revision - 1)
    assert before_all == []


async def test_list_outside_the_retained_history_raises(open_store: OpenStore) -> None:
    backend = await open_store(history_size=5)
    written = [await backend.create(f"/l/k{i:02d}", b"") for i in range(20)]
    with pytest.raises(errors.Compacted):
        await backend.list("/l/", revision=written[0].mod_revision)
    oldest = backend.oldest_revision()
    _, kvs = await backend.list("/l/", revision=oldest)
    assert [kv.mod_revision for kv in kvs] == [
        kv.mod_revision for kv in written if kv.mod_revision <= oldest
    ]
    with pytest.raises(errors.FutureRevision):
        await backend.list("/l/", revision=backend.current_revision() + 1)


async def test_update_with_the_expected_revision_replaces_the_value(backend: Backend) -> None:
    created = await backend.create("/r/a", b"one")
    updated = await backend.update("/r/a", b"two", expected_revision=created.mod_revision)
    assert updated.key == "/r/a" and updated.value == b"two"
    assert updated.create_revision == created.create_revision
    assert updated.mod_revision > created.mod_revision
    assert await backend.get("/r/a") == updated


async def test_update_with_a_stale_revision_raises_conflict_with_the_current_value(
    backend: Backend,
) -> None:
    created = await backend.create("/r/a", b"one")
    current = await backend.update("/r/a", b"two", expected_revision=created.mod_revision)
    with pytest.raises(errors.Conflict) as caught:
        await backend.update("/r/a", b"three", expected_revision=created.mod_revision)
    assert caught.value.key == "/r/a"
    assert caught.value.current == current
    assert await backend.get("/r/a") == current


async def test_update_of_a_missing_key_raises_key_not_found(backend: Backend) -> None:
    with pytest.raises(errors.KeyNotFound) as caught:
        await backend.update("/r/missing", b"x", expected_revision=1)
    assert caught.value.key == "/r/missing"


async def test_delete_returns_the_value_at_the_delete_revision(backend: Backend) -> None:
    created = await backend.create("/r/a", b"one")
    deleted = await backend.delete("/r/a")
    assert deleted == KeyValue("/r/a", b"one", created.create_revision, deleted.mod_revision)
    assert deleted.mod_revision > created.mod_revision
    assert backend.current_revision() == deleted.mod_revision
    assert await backend.get("/r/a") is None
    assert await backend.list("/r/") == (deleted.mod_revision, [])
    assert await backend.count("/r/") == 0


async def test_delete_with_the_expected_revision(backend: Backend) -> None:
    created = await backend.create("/r/a", b"one")
    deleted = await backend.delete("/r/a", expected_revision=created.mod_revision)
    assert deleted.value == b"one"
    assert await backend.get("/r/a") is None


async def test_delete_with_a_stale_revision_raises_conflict(backend: Backend) -> None:
    created = await backend.create("/r/a", b"one")
    current = await backend.update("/r/a", b"two", expected_revision=created.mod_revision)
    with pytest.raises(errors.Conflict) as caught:
        await backend.delete("/r/a", expected_revision=created.mod_revision)
    assert caught.value.current == current
    assert await backend.get("/r/a") == current


@pytest.mark.parametrize("expected", [pytest.param(None, id="any"), pytest.param(3, id="expected")])
async def test_delete_of_a_missing_key_raises_key_not_found(
    backend: Backend, expected: int | None
) -> None:
    with pytest.raises(errors.KeyNotFound):
        await backend.delete("/r/missing", expected_revision=expected)


async def test_create_after_delete_starts_a_new_life(backend: Backend) -> None:
    await backend.create("/r/a", b"one")
    deleted = await backend.delete("/r/a")
    again = await backend.create("/r/a", b"two")
    assert again.create_revision == again.mod_revision > deleted.mod_revision
    assert again.value == b"two"


async def test_revisions_strictly_increase_across_every_kind_of_write(backend: Backend) -> None:
    a = await backend.create("/r/a", b"")
    b = await backend.create("/r/b", b"")
    a2 = await backend.update("/r/a", b"x", expected_revision=a.mod_revision)
    gone = await backend.delete("/r/b")
    a3 = await backend.update("/r/a", b"y", expected_revision=a2.mod_revision)
    revisions = [kv.mod_revision for kv in (a, b, a2, gone, a3)]
    assert revisions == sorted(set(revisions))
    assert backend.current_revision() == a3.mod_revision


async def test_concurrent_compare_and_swap_loses_no_increment(backend: Backend) -> None:
    await backend.create("/r/counter", b"0")

    async def increment() -> None:
        while True:
            kv = await backend.get("/r/counter")
            assert kv is not None
            try:
                await backend.update(
                    "/r/counter", str(int(kv.value) + 1).encode(), expected_revision=kv.mod_revision
                )
                return
            except errors.Conflict:
                continue

    await asyncio.gather(*(increment() for _ in range(50)))
    final = await backend.get("/r/counter")
    assert final is not None and final.value == b"50"


# Watch.


async def test_watch_replays_every_event_after_a_past_revision(backend: Backend) -> None:
    base = backend.current_revision()
    a1 = await backend.create("/w/a", b"1")
    a2 = await backend.update("/w/a", b"2", expected_revision=a1.mod_revision)
    gone = await backend.delete("/w/a")
    b = await backend.create("/w/b", b"x")
    await backend.create("/other/c", b"")
    assert await take(backend.watch("/w/", after_revision=base), 4) == [
        Event(PUT, a1, None),
        Event(PUT, a2, a1),
        Event(DELETE, gone, a2),
        Event(PUT, b, None),
    ]
    assert await take(backend.watch("/w/", after_revision=a2.mod_revision), 2) == [
        Event(DELETE, gone, a2),
        Event(PUT, b, None),
    ]


async def test_watch_continues_from_replay_into_live_events_without_gaps(backend: Backend) -> None:
    base = backend.current_revision()
    first = await backend.create("/w/a", b"")
    stream = backend.watch("/w/", after_revision=base)
    assert await take(stream, 1) == [Event(PUT, first, None)]
    second = await backend.create("/w/b", b"")
    assert await take(stream, 1) == [Event(PUT, second, None)]


async def test_watch_from_the_current_revision_sees_only_new_events(backend: Backend) -> None:
    await backend.create("/w/old", b"")
    stream = backend.watch("/w/", after_revision=backend.current_revision())
    new = await backend.create("/w/new", b"")
    assert await take(stream, 1) == [Event(PUT, new, None)]


async def test_watch_sees_only_keys_under_its_prefix(backend: Backend) -> None:
    stream = backend.watch("/w/b/", after_revision=backend.current_revision())
    for key in ("/w/bc/x", "/w/b", "/w/a/x"):
        await backend.create(key, b"")
    inside = await backend.create("/w/b/x", b"")
    assert await take(stream, 1) == [Event(PUT, inside, None)]


async def test_an_exact_watch_sees_its_key_alone_replayed_and_live(backend: Backend) -> None:
    """A watch of one object by name: ``/w/c1`` is not ``/w/c10``, though it starts it."""
    base = backend.current_revision()
    old = await backend.create("/w/c1", b"")
    await backend.create("/w/c10", b"")
    await backend.create("/w/c1/x", b"")
    exact = backend.watch("/w/c1", after_revision=base, exact=True)
    prefix = backend.watch("/w/c1", after_revision=base)
    for key in ("/w/c11", "/w/c1/y", "/w/c"):
        await backend.create(key, b"")
    new = await backend.update("/w/c1", b"2", expected_revision=old.mod_revision)
    assert await take(exact, 2) == [Event(PUT, old, None), Event(PUT, new, old)]
    assert [event.kv.key for event in await take(prefix, 6)] == [
        "/w/c1",
        "/w/c10",
        "/w/c1/x",
        "/w/c11",
        "/w/c1/y",
        "/w/c1",
    ]


async def test_watch_orders_events_of_concurrent_writers(backend: Backend) -> None:
    stream = backend.watch("/w/", after_revision=backend.current_revision())
    written = await asyncio.gather(*(backend.create(f"/w/k{i}", b"v") for i in range(200)))
    events = await take(stream, 200)
    revisions = [event.revision for event in events]
    assert revisions == sorted(kv.mod_revision for kv in written)
    assert len(set(revisions)) == 200
    assert {event.kv for event in events} == set(written)


async def test_watch_from_before_the_retained_history_raises_compacted(
    open_store: OpenStore,
) -> None:
    backend = await open_store(history_size=5)
    written = [await backend.create(f"/w/k{i:02d}", b"") for i in range(20)]
    revisions = [kv.mod_revision for kv in written]
    oldest = backend.oldest_revision()
    assert revisions[0] <= oldest <= revisions[-6]
    with pytest.raises(errors.Compacted) as caught:
        await anext(backend.watch("/w/", after_revision=revisions[0] - 1))
    assert (caught.value.requested, caught.value.oldest) == (revisions[0] - 1, oldest)
    retained = [revision for revision in revisions if revision > oldest]
    events = await take(backend.watch("/w/", after_revision=oldest), len(retained))
    assert [event.revision for event in events] == retained


async def test_a_watcher_that_falls_behind_gets_compacted(open_store: OpenStore) -> None:
    backend = await open_store(watch_queue_size=5)
    stream = backend.watch("/w/", after_revision=backend.current_revision())
    first = await backend.create("/w/first", b"")
    assert await take(stream, 1) == [Event(PUT, first, None)]
    for i in range(10):
        await backend.create(f"/w/k{i}", b"")
    with pytest.raises(errors.Compacted):
        await asyncio.wait_for(anext(stream), timeout=5)


async def test_watch_from_a_future_revision_raises_future_revision(backend: Backend) -> None:
    await backend.create("/w/a", b"")
    current = backend.current_revision()
    with pytest.raises(errors.FutureRevision) as caught:
        await anext(backend.watch("/w/", after_revision=current + 1))
    assert (caught.value.requested, caught.value.current) == (current + 1, current)


async def test_close_ends_open_watches_and_refuses_writes(backend: Backend) -> None:
    stream = backend.watch("/w/", after_revision=backend.current_revision())
    created = await backend.create("/w/a", b"")

    async def drain() -> list[Event]:
        return [event async for event in stream]

    task = asyncio.create_task(drain())
    await asyncio.sleep(0)
    await backend.close()
    assert await asyncio.wait_for(task, timeout=5) == [Event(PUT, created, None)]
    with pytest.raises(errors.Unavailable):
        await backend.create("/w/b", b"")


# Commit hooks.


async def test_commit_hooks_see_each_batch_before_its_writers_are_answered(
    backend: Backend,
) -> None:
    seen: list[int] = []

    def hook(events: list[Event]) -> None:
        seen.extend(event.revision for event in events)
        # The state is already committed when the hook runs.
        assert backend.current_revision() == events[-1].revision

    backend.add_commit_hook(hook)
    first = await backend.create("/h/a", b"")
    assert seen == [first.mod_revision]

    async def write(i: int) -> int:
        kv = await backend.create(f"/h/k{i}", b"")
        assert kv.mod_revision in seen
        return kv.mod_revision

    revisions = await asyncio.gather(*(write(i) for i in range(100)))
    assert seen == sorted([first.mod_revision, *revisions])


# Restart.


async def test_restart_recovers_every_key_and_continues_the_revision(
    open_store: OpenStore,
) -> None:
    backend = await open_store()
    a = await backend.create("/s/a", b"a")
    b = await backend.create("/s/b", b"b")
    b2 = await backend.update("/s/b", b"b2", expected_revision=b.mod_revision)
    await backend.create("/s/c", b"c")
    gone = await backend.delete("/s/c")
    await backend.close()

    reopened = await open_store()
    assert reopened.current_revision() == gone.mod_revision
    assert await reopened.list("/s/") == (gone.mod_revision, [a, b2])
    after = await reopened.create("/s/d", b"d")
    assert after.mod_revision > gone.mod_revision


async def test_restart_forgets_the_watch_history(open_store: OpenStore) -> None:
    backend = await open_store()
    first = await backend.create("/s/a", b"")
    await backend.create("/s/b", b"")
    await backend.close()

    reopened = await open_store()
    assert reopened.oldest_revision() == reopened.current_revision()
    with pytest.raises(errors.Compacted):
        await anext(reopened.watch("/s/", after_revision=first.mod_revision))
    stream = reopened.watch("/s/", after_revision=reopened.current_revision())
    new = await reopened.create("/s/c", b"")
    assert await take(stream, 1) == [Event(PUT, new, None)]


async def test_a_quiet_watch_reports_progress_at_the_current_revision(backend: Backend) -> None:
    mine = await backend.create("/w/mine", b"")
    stream = backend.watch("/w/mine", after_revision=mine.mod_revision, progress_interval=0.2)
    other = await backend.create("/x/other", b"")
    progress = await asyncio.wait_for(anext(stream), timeout=5)
    assert (progress.type, progress.revision) == (EventType.PROGRESS, other.mod_revision)
    updated = await backend.update("/w/mine", b"v", expected_revision=mine.mod_revision)
    assert await asyncio.wait_for(anext(stream), timeout=5) == Event(PUT, updated, mine)


async def test_progress_never_overtakes_queued_events(backend: Backend) -> None:
    stream = backend.watch("/w/", after_revision=backend.current_revision(), progress_interval=0.05)
    written = [await backend.create(f"/w/k{i}", b"") for i in range(3)]
    await asyncio.sleep(0.2)  # the interval passes while the events wait in the queue
    events = [await asyncio.wait_for(anext(stream), timeout=5) for _ in range(4)]
    assert [e.kv for e in events[:3]] == written
    assert (events[3].type, events[3].revision) == (EventType.PROGRESS, written[-1].mod_revision)
