"""The history watches resume from: what a replay returns, what it walks, what it forgets."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyocm.apiserver.storage.history import History, directories
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


@dataclass
class Retention:
    history_size: int = 100_000
    history_min_age: float = 0.0
    history_max_age: float = 300.0
    now: list[float] = field(default_factory=lambda: [0.0])

    @property
    def clock(self) -> Callable[[], float]:
        return lambda: self.now[0]


def put(key: str, revision: int) -> Event:
    return Event(EventType.PUT, KeyValue(key, b"v", revision, revision), None)


class CountingKey(str):
    """A key that counts how often a replay compares it with a prefix."""

    checks = 0

    def startswith(self, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        CountingKey.checks += 1
        return super().startswith(*args, **kwargs)


class Opened(dict[str, Any]):
    """A history's directories, counting how often a replay opens one."""

    count = 0

    def get(self, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        Opened.count += 1
        return super().get(*args, **kwargs)


def test_directories_are_every_prefix_ending_in_a_slash() -> None:
    assert list(directories("/registry/leases/ns/a")) == [
        "/",
        "/registry/",
        "/registry/leases/",
        "/registry/leases/ns/",
    ]
    assert list(directories("/registry/ns/")) == ["/", "/registry/", "/registry/ns/"]
    assert list(directories("plain")) == []


def test_replay_matches_a_walk_of_everything_kept() -> None:
    """Random writes (several keys at one revision sometimes, as another etcd client's
    transaction), keys that are prefixes of each other, keys without a slash, and
    retention by size: every prefix and start revision replays exactly what a walk of
    the kept changes finds."""
    rng = random.Random(11)
    keys = [
        "/a/k1",
        "/a/k10",
        "/a/k2",
        "/a/b/c",
        "/a/b/cd",
        "/b/x",
        "/b/",
        "top",
        *(f"/c/{i}/lease" for i in range(10)),
    ]
    prefixes = [*keys, "/", "", "/a/", "/a/k", "/a/b/", "/a/b/c/", "/c/", "/c/1", "/z/", "t"]
    history = History(Retention(history_size=60), floor=0)
    kept: list[Event] = []
    for revision in range(1, 401):
        batch = [put(key, revision) for key in rng.sample(keys, rng.choice([1, 1, 1, 3]))]
        history.remember(batch)
        kept.extend(batch)
        kept = [event for event in kept if event.revision > history.floor]
        assert len(history) == len(kept)
        for prefix in prefixes:
            for after in {history.floor, revision, rng.randint(history.floor, revision)}:
                expected = [e for e in kept if e.revision > after and e.kv.key.startswith(prefix)]
                assert history.replay(prefix, after) == expected, (prefix, after)
                alone = [e for e in expected if e.kv.key == prefix]
                assert history.replay(prefix, after, exact=True) == alone, (prefix, after)


def test_a_replay_walks_only_its_own_directory() -> None:
    """A watch of one namespace resuming passes over that namespace's changes, not over
    the thousands of other Lease renewals kept beside them."""
    history = History(Retention(), floor=0)
    for revision in range(1, 5001):
        key = CountingKey(f"/registry/leases/cluster-{revision % 1000}/lease")
        history.remember([put(key, revision)])
    CountingKey.checks = 0
    replay = history.replay("/registry/leases/cluster-7/lease", 0)
    assert [event.revision for event in replay] == [7, 1007, 2007, 3007, 4007]
    assert CountingKey.checks == 5


def test_forgetting_drops_whole_revisions() -> None:
    now = [0.0]
    history = History(Retention(history_size=2, history_max_age=10.0, now=now), floor=0)
    history.remember([put("/a/x", 1), put("/b/y", 1)])
    history.remember([put("/a/x", 2)])
    assert history.floor == 1  # three kept is over the size: revision 1 goes, both keys
    assert history.replay("/b/", 0) == []
    assert history.replay("/b/y", 0, exact=True) == []
    assert [e.revision for e in history.replay("/a/x", 0, exact=True)] == [2]
    now[0] = 10.5
    history.remember([put("/c/z", 3)])
    assert history.floor == 2  # older than history_max_age
    assert [e.revision for e in history.replay("/", 0)] == [3]
    assert [e.revision for e in history.replay("/a/", 0)] == []
    assert history.replay("/a/x", 0, exact=True) == []


def test_a_watch_of_one_unchanged_key_walks_nothing() -> None:
    """An agent's watch of its own cluster resumes, every few minutes, while thousands
    of other clusters changed and it did not: no change is looked at."""
    history = History(Retention(), floor=0)
    for revision in range(1, 2001):
        history.remember([put(f"/registry/managedclusters/cluster-{revision % 1000}", revision)])
    history._filed = Opened(history._filed)
    Opened.count = 0
    assert history.replay("/registry/managedclusters/cluster-1", 1001, exact=True) == []
    assert history.replay("/registry/managedclusters/cluster-1000", 0, exact=True) == []
    assert Opened.count == 0
    changed = history.replay("/registry/managedclusters/cluster-1", 900, exact=True)
    assert [event.revision for event in changed] == [1001]
    assert Opened.count == 1


def test_a_directory_grown_past_a_list_still_forgets_in_order() -> None:
    """A busy directory (every Lease of a resource) turns from a list into a deque; both
    drop their oldest change as it leaves, and replays agree with what is kept."""
    history = History(Retention(history_size=100), floor=0)
    for revision in range(1, 1001):
        history.remember([put(f"/leases/ns-{revision % 3}/lease", revision)])
    assert history.floor == 900
    assert [e.revision for e in history.replay("/leases/", 990)] == list(range(991, 1001))
    assert [e.revision for e in history.replay("/leases/ns-1/", 990)] == [991, 994, 997, 1000]
    assert len(history.replay("/leases/", 0)) == 100
