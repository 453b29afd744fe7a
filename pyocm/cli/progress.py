"""Progress of a long wait, on stderr so that stdout keeps only results for scripts: a
live status line on a terminal, plain lines (a start and then one every so often) in a
log or a pipe, where a rewritten line would come out as noise.

``PYOCM_PROGRESS_INTERVAL`` (seconds, default 10) sets how often those plain lines come:
a log that is read live may want them sooner, a test cannot wait ten seconds."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable

import typer
from rich.console import Console

#: Seconds between "still waiting" lines when stderr is not a terminal.
PLAIN_EVERY = 10.0
INTERVAL_ENV = "PYOCM_PROGRESS_INTERVAL"


def plain_every() -> float:
    """:data:`PLAIN_EVERY`, or ``$PYOCM_PROGRESS_INTERVAL`` when that is a positive number."""
    try:
        seconds = float(os.environ.get(INTERVAL_ENV, ""))
    except ValueError:
        return PLAIN_EVERY
    return seconds if 0 < seconds < float("inf") else PLAIN_EVERY


@contextlib.asynccontextmanager
async def waiting(what: str, *, limit: float) -> AsyncIterator[None]:
    """Show that the body waits for ``what`` (up to ``limit`` seconds) while it runs."""
    if sys.stderr.isatty():
        console = Console(stderr=True)
        with console.status(_line(what, 0, limit)) as status:
            ticker = asyncio.create_task(_tick(lambda s: status.update(_line(what, s, limit))))
            try:
                yield
            finally:
                await _cancel(ticker)
        return
    typer.echo(_line(what, 0, limit), err=True)
    ticker = asyncio.create_task(
        _tick(lambda s: typer.echo(f"still {_line(what, s, limit)}", err=True), every=plain_every())
    )
    try:
        yield
    finally:
        await _cancel(ticker)


def _line(what: str, seconds: float, limit: float) -> str:
    return f"waiting for {what} ({seconds:.0f}s of {limit:.0f}s)"


async def _tick(show: Callable[[float], None], *, every: float = 1.0) -> None:
    """``show(seconds so far)`` every ``every`` seconds until cancelled."""
    started = asyncio.get_running_loop().time()
    while True:
        await asyncio.sleep(every)
        show(asyncio.get_running_loop().time() - started)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
