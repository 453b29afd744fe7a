from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from pyocm.base.clock import FakeClock, RealClock


async def test_fake_clock_wakes_sleepers_in_deadline_order() -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [asyncio.create_task(sleeper(n, s)) for n, s in (("c", 3), ("a", 1), ("b", 2))]
    await clock.settle()
    clock.advance(1.5)
    await clock.settle()
    assert woke == ["a"]
    clock.advance(10)
    await clock.settle()
    assert woke == ["a", "b", "c"]
    assert clock.monotonic() == 11.5
    assert clock.now() == datetime(2026, 1, 1, 0, 0, 11, 500000, tzinfo=UTC)
    await asyncio.gather(*tasks)


async def test_fake_clock_cancelled_sleeper_is_dropped() -> None:
    clock = FakeClock()
    task = asyncio.create_task(clock.sleep(5))
    await clock.settle()
    assert clock.sleepers == 1
    task.cancel()
    await clock.settle()
    assert clock.sleepers == 0
    clock.advance(10)


async def test_real_clock_is_aware_utc() -> None:
    clock = RealClock()
    assert clock.now().tzinfo is UTC
    before = clock.monotonic()
    await clock.sleep(0.01)
    assert clock.monotonic() > before
