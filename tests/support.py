"""Helpers the tests share."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pyocm.kube.status import ApiError


async def eventually(check: Callable[[], Awaitable[Any]], *, timeout: float = 30) -> Any:
    """Call ``check`` until it returns something truthy without raising; return that.

    Controllers converge asynchronously: tests wait for the state of the world, not for
    a fixed time. An AssertionError or ApiError counts as "not yet"; the last one is
    reported if time runs out.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    last: BaseException | None = None
    while asyncio.get_running_loop().time() < deadline:
        try:
            result = await check()
            if result:
                return result
        except (AssertionError, ApiError) as err:
            last = err
        await asyncio.sleep(0.05)
    raise AssertionError(f"not reached in {timeout}s; last: {last!r}")
