"""Waiting on whichever of several things happens first."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


async def first(*waits: Coroutine[Any, Any, Any]) -> None:
    """Return when one of ``waits`` ends; the others are cancelled and awaited."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
