from __future__ import annotations

import asyncio

import pytest

from pyocm.base.backoff import Backoff, retry
from pyocm.base.clock import FakeClock


def test_delays_double_from_duration_up_to_the_cap() -> None:
    backoff = Backoff(duration=0.2, cap=5.0)
    assert [backoff.delay(n) for n in range(7)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    assert backoff.delay(10_000) == 5.0  # no overflow long past the cap


def test_without_a_cap_delays_keep_growing() -> None:
    assert Backoff(duration=1.0, factor=3.0).delay(4) == 81.0


def test_jitter_stays_within_its_fraction_either_side_of_the_capped_delay() -> None:
    backoff = Backoff(duration=1.0, cap=32.0, jitter=0.2)
    assert backoff.delay(2, rand=lambda: 0.0) == pytest.approx(3.2)
    assert backoff.delay(2, rand=lambda: 0.5) == pytest.approx(4.0)
    assert backoff.delay(2, rand=lambda: 1.0) == pytest.approx(4.8)
    # After the cap, as in client-go: a fleet at the cap still spreads out.
    assert backoff.delay(9, rand=lambda: 1.0) == pytest.approx(38.4)
    drawn = [backoff.delay(3) for _ in range(200)]
    assert all(6.4 <= d <= 9.6 for d in drawn) and len(set(drawn)) > 1


def test_steps_bound_the_pauses_between_attempts() -> None:
    assert list(Backoff(duration=1.0, steps=4).delays()) == [1.0, 2.0, 4.0]
    assert list(Backoff(duration=1.0, steps=1).delays()) == []


@pytest.mark.parametrize(
    "options",
    [
        {"duration": -1.0},
        {"duration": 1.0, "factor": 0.5},
        {"duration": 1.0, "jitter": 1.0},
        {"duration": 1.0, "steps": 0},
    ],
)
def test_nonsense_is_refused(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**options)  # type: ignore[arg-type]


class Flaky(Exception):
    pass


async def test_retry_pauses_by_the_backoff_then_returns_the_success() -> None:
    clock = FakeClock()
    calls: list[float] = []

    async def call() -> str:
        calls.append(clock.monotonic())
        if len(calls) < 4:
            raise Flaky
        return "done"

    backoff = Backoff(duration=1.0, cap=3.0, steps=5)
    task = asyncio.create_task(
        retry(call, retriable=lambda e: isinstance(e, Flaky), clock=clock, backoff=backoff)
    )
    for _ in range(10):
        await clock.settle()
        clock.advance(1.0)
    assert await task == "done"
    assert calls == [0.0, 1.0, 3.0, 6.0]  # pauses 1, 2, then 3 (capped)


async def test_retry_gives_up_after_its_steps_with_the_last_error() -> None:
    clock = FakeClock()
    calls = 0

    async def call() -> None:
        nonlocal calls
        calls += 1
        raise Flaky(calls)

    task = asyncio.create_task(
        retry(call, retriable=lambda e: True, clock=clock, backoff=Backoff(duration=1, steps=3))
    )
    for _ in range(5):
        await clock.settle()
        clock.advance(10)
    with pytest.raises(Flaky) as raised:
        await task
    assert calls == 3 and raised.value.args == (3,)
    assert clock.sleepers == 0


async def test_retry_does_not_retry_what_is_not_retriable() -> None:
    clock = FakeClock()
    calls = 0

    async def call() -> None:
        nonlocal calls
        calls += 1
        raise KeyError("no")

    with pytest.raises(KeyError):
        await retry(call, retriable=lambda e: isinstance(e, Flaky), clock=clock)
    assert calls == 1
