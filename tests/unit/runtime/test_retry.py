from __future__ import annotations

import asyncio

import pytest

from pyocm.base.backoff import DEFAULT_RETRY
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.runtime.retry import retry_on_conflict


def _error(code: int) -> ApiError:
    return ApiError(code=code, reason="Conflict" if code == 409 else "Other", message="m")


async def test_a_conflict_is_retried_until_the_write_goes_through() -> None:
    clock = FakeClock()
    attempts = 0

    async def write() -> int:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise _error(409)
        return attempts

    task = asyncio.create_task(retry_on_conflict(write, clock=clock))
    for _ in range(3):
        await clock.settle()
        clock.advance(1.0)
    assert await task == 3


async def test_conflicts_past_the_steps_and_other_errors_propagate() -> None:
    clock = FakeClock()
    attempts = 0

    async def always_conflicts() -> None:
        nonlocal attempts
        attempts += 1
        raise _error(409)

    task = asyncio.create_task(retry_on_conflict(always_conflicts, clock=clock))
    for _ in range(10):
        await clock.settle()
        clock.advance(1.0)
    with pytest.raises(ApiError):
        await task
    assert attempts == DEFAULT_RETRY.steps

    async def forbidden() -> None:
        raise _error(403)

    with pytest.raises(ApiError) as raised:
        await retry_on_conflict(forbidden, clock=clock)
    assert raised.value.code == 403
