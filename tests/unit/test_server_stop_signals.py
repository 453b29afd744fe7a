"""Open watches end when the server stops, each through a stop signal of its own."""

from __future__ import annotations

import asyncio
from typing import Any

from pyocm.apiserver.state import ServerState


def server_state() -> ServerState:
    unused: Any = None  # what a stop signal never touches
    return ServerState(
        config=unused,
        store=unused,
        catalog=unused,
        authenticator=unused,
        rbac=unused,
        ca=unused,
        sa_private_key=None,
        issuer="",
    )


async def test_stopping_the_server_ends_every_open_watchs_signal() -> None:
    state = server_state()
    signals = [state.stop_signal() for _ in range(3)]
    ended = signals.pop()
    state.release(ended)  # that watch ended before the server stopped
    await asyncio.sleep(0)
    assert not any(signal.done() for signal in [*signals, ended])
    state.stopping.set()
    await asyncio.wait_for(asyncio.gather(*signals), timeout=5)
    assert not ended.done()  # released: the server no longer holds it
    assert state.stop_signal().done()  # a watch opened while stopping ends at once


async def test_a_watch_waits_on_a_signal_no_other_watch_shares() -> None:
    """One shared future made every watch's wake cost the number of watches (its list
    of done callbacks was rebuilt at each removal)."""
    state = server_state()
    first, second = state.stop_signal(), state.stop_signal()
    assert first is not second
    state.stopping.set()
    await asyncio.wait_for(asyncio.gather(first, second), timeout=5)
