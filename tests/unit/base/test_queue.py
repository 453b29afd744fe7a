"""The work queue's guarantees: dedup, one worker per key, delays and backoff in virtual time."""

from __future__ import annotations

import asyncio

import pytest

from pyocm.base.clock import FakeClock
from pyocm.base.queue import ShutDown, WorkQueue


async def test_a_waiting_key_is_queued_once() -> None:
    queue = WorkQueue()
    for key in ["a", "b", "a", "a", "c", "b"]:
        queue.add(key)
    assert len(queue) == 3
    assert [await queue.get() for _ in range(3)] == ["a", "b", "c"]


async def test_a_key_added_while_processing_waits_for_done() -> None:
    queue = WorkQueue()
    queue.add("a")
    key = await queue.get()
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0, "a second worker must not get a key that is being processed"
    queue.done(key)
    assert len(queue) == 1
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_get_waits_for_an_add() -> None:
    queue = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not getter.done()
    queue.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_add_after_keeps_the_earliest_deadline() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    queue.add_after("k", 10)
    queue.add_after("k", 30)  # later: ignored
    queue.add_after("k", 5)  # earlier: replaces
    clock.advance(4.9)
    await clock.settle()
    assert len(queue) == 0
    clock.advance(0.1)
    await clock.settle()
    assert len(queue) == 1
    clock.advance(100)
    await clock.settle()
    assert len(queue) == 1, "the replaced delays must not add the key again"


async def test_rate_limited_backoff_doubles_until_forget() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock, base_delay=1, max_delay=4)
    waits = []
    for _ in range(5):
        queue.add_rate_limited("k")
        start = clock.monotonic()
        while len(queue) == 0:
            clock.advance(0.5)
            await clock.settle()
        waits.append(clock.monotonic() - start)
        queue.done(await queue.get())
    assert waits == [1, 2, 4, 4, 4]
    assert queue.requeues("k") == 5
    queue.forget("k")
    assert queue.requeues("k") == 0


async def test_shut_down_wakes_waiters_and_drops_delays() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    getter = asyncio.create_task(queue.get())
    queue.add_after("later", 1)
    await asyncio.sleep(0)
    queue.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)
    queue.add("x")
    clock.advance(5)
    await clock.settle()
    assert len(queue) == 0
    assert clock.sleepers == 0


async def test_a_worker_lets_other_tasks_run_between_keys() -> None:
    # A reconcile that never suspends (nothing to write) must not hold the event loop
    # for a whole backlog: the hub serves its API on the same loop.
    queue = WorkQueue()
    for index in range(50):
        queue.add(f"k{index}")
    order: list[str] = []

    async def process(key: str) -> None:
        order.append(key)
        if len(order) == 50:
            queue.shut_down()

    async def other() -> None:
        order.append("other")

    worker = asyncio.create_task(queue.serve(process))
    bystander = asyncio.create_task(other())
    await asyncio.gather(worker, bystander)
    assert order.index("other") < 5, order[:10]
