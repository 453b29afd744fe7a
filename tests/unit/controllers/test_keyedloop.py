"""The server's controller loop hands its work over between replicas: a held loop does
not start, and a paused one puts the key it was reconciling back for the next term."""

from __future__ import annotations

import asyncio

from pyocm.apiserver.controllers.base import KeyedLoop


class Recorder:
    """A reconcile that records the keys it starts and finishes, each held until
    :attr:`release` is set."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.finished: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, key: str) -> float | None:
        self.started.append(key)
        await self.release.wait()
        self.finished.append(key)
        return None


async def test_a_key_cancelled_in_flight_is_reconciled_again_after_a_pause() -> None:
    reconcile = Recorder()
    started, finished, release = reconcile.started, reconcile.finished, reconcile.release
    loop = KeyedLoop("test-loop", reconcile)
    loop.held = True
    loop.start()
    loop.add("a")
    await asyncio.sleep(0.01)
    assert started == [] and not loop.working  # held: a follower reconciles nothing
    loop.held = False
    loop.start()
    await asyncio.sleep(0.01)
    assert started == ["a"]
    await loop.pause()  # the Lease is lost while "a" is in flight
    assert not loop.working and finished == []
    release.set()
    loop.start()  # the next term
    for _ in range(100):
        if finished:
            break
        await asyncio.sleep(0.01)
    assert started == ["a", "a"]
    assert finished == ["a"]
    await loop.stop()


async def test_workers_reconcile_keys_side_by_side_and_a_pause_puts_each_back() -> None:
    reconcile = Recorder()
    started, finished, release = reconcile.started, reconcile.finished, reconcile.release
    loop = KeyedLoop("test-loop", reconcile, workers=2)
    for key in "abc":
        loop.add(key)
    loop.start()
    await asyncio.sleep(0.01)
    assert started == ["a", "b"]  # two at once, the third waits for a worker
    await loop.pause()
    release.set()
    loop.start()
    for _ in range(100):
        if len(finished) == 3:
            break
        await asyncio.sleep(0.01)
    assert sorted(finished) == ["a", "b", "c"]  # both keys cut short came back
    await loop.stop()
