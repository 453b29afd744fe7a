"""Ctrl-C or SIGTERM ends a command's work and waits for its cleanup: ``pyocm up`` left
its embedded clusters running and their clients unclosed ("Unclosed connector") when the
loop closed in the middle of it."""

from __future__ import annotations

import asyncio
import os
import signal

from pyocm.cli.common import until_signal


async def test_the_work_cleans_up_before_until_signal_returns() -> None:
    cleaned: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.2)  # stopping servers, closing clients
            cleaned.append("done")

    async def interrupt() -> None:
        await asyncio.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    poke = asyncio.create_task(interrupt())
    await until_signal(work())
    await poke
    assert cleaned == ["done"]


async def test_a_second_signal_cuts_a_hanging_cleanup_short() -> None:
    reached: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            reached.append("cleanup")
            await asyncio.sleep(3600)  # a cleanup that hangs
            reached.append("never")

    async def interrupt() -> None:
        for _ in range(2):
            await asyncio.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)

    poke = asyncio.create_task(interrupt())
    await asyncio.wait_for(until_signal(work()), timeout=10)
    await poke
    assert reached == ["cleanup"]
