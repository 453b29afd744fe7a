"""The emulated watch-cache lag keeps deletions only briefly, and only deletions."""

from __future__ import annotations

import time

from pyocm.apiserver.registry.watchlag import RecentDeletes
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue

PREFIX = "/registry/cluster.open-cluster-management.io/managedclustersets/"


def _kv(name: str, revision: int) -> KeyValue:
    return KeyValue(key=PREFIX + name, value=b"{}", create_revision=1, mod_revision=revision)


def _delete(name: str, revision: int) -> Event:
    return Event(EventType.DELETE, _kv(name, revision), _kv(name, revision - 1))


def test_deletions_are_kept_for_the_lag_then_forgotten() -> None:
    recent = RecentDeletes(lag=0.2)
    recent([Event(EventType.PUT, _kv("a", 2), None), _delete("a", 3), _delete("b", 4)])
    recent([_delete("a", 6)])
    found = recent.under(PREFIX, upto=10)
    # one per key, its last deletion; the PUT is not a deletion
    assert sorted((e.kv.key.removeprefix(PREFIX), e.revision) for e in found) == [
        ("a", 6),
        ("b", 4),
    ]
    assert [e.revision for e in recent.under(PREFIX + "b", upto=10)] == [4]
    assert [e.revision for e in recent.under(PREFIX, upto=5)] == [3, 4]  # not after the list
    time.sleep(0.3)
    assert recent.under(PREFIX, upto=10) == []


def test_the_number_kept_is_bounded() -> None:
    recent = RecentDeletes(lag=60, limit=3)
    recent([_delete(f"s{i}", 10 + i) for i in range(5)])
    assert sorted(e.revision for e in recent.under(PREFIX, upto=100)) == [12, 13, 14]
