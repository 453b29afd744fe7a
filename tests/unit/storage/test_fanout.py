"""Routing events to in-process watchers by prefix and by key."""

from __future__ import annotations

from pyocm.apiserver.storage.fanout import Watchers
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


def put(key: str, revision: int) -> Event:
    return Event(EventType.PUT, KeyValue(key, b"", revision, revision), None)


async def test_a_key_watch_and_a_prefix_watch_of_one_string_differ_and_leave_nothing() -> None:
    watchers = Watchers(queue_size=10)
    alone = watchers.subscribe("/c/cluster-1", exact=True)
    starting = watchers.subscribe("/c/cluster-1")
    watchers.publish([put("/c/cluster-1", 1), put("/c/cluster-10", 2), put("/c/cluster-2", 3)])
    assert [event.revision for event in alone._queue] == [1]
    assert [event.revision for event in starting._queue] == [1, 2]
    watchers.unsubscribe(alone)
    watchers.publish([put("/c/cluster-1", 4)])
    assert [event.revision for event in alone._queue] == [1]
    watchers.unsubscribe(starting)
    assert (watchers._by_key, watchers._by_prefix, watchers._lengths) == ({}, {}, {})


async def test_an_overflowing_key_watch_is_cut_off() -> None:
    watchers = Watchers(queue_size=1)
    alone = watchers.subscribe("/c/a", exact=True)
    watchers.publish([put("/c/a", 1), put("/c/a", 2)])
    assert alone.overflowed
    assert watchers._by_key == {}
