"""Storage figures: durable update rate with group commit, get rate, list time, fan-out.

Run from the repository root as ``python -m tests.bench.bench_storage`` (or as a script).
It prints figures and asserts nothing about time: timings depend on the machine.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import uvloop

from pyocm.apiserver.storage import memory, sqlite
from pyocm.apiserver.storage.interface import KeyValue

VALUE = b"x" * 800  # about the size of a small Kubernetes object


async def durable_updates(
    directory: Path, *, synchronous: str, writers: int, total: int
) -> tuple[float, float]:
    """Updates per second with ``writers`` concurrent writers, and writes per transaction."""
    options = sqlite.SqliteOptions(synchronous="FULL" if synchronous == "FULL" else "NORMAL")
    store = sqlite.new_backend(directory / f"updates-{synchronous}-{writers}.db", sqlite=options)
    await store.start()
    kvs = await asyncio.gather(*(store.create(f"/bench/w{i}", VALUE) for i in range(writers)))
    log = store.log
    assert isinstance(log, sqlite.SqliteLog)
    transactions_before = log.transactions

    async def writer(kv: KeyValue) -> None:
        for _ in range(total // writers):
            kv = await store.update(kv.key, VALUE, expected_revision=kv.mod_revision)

    started = time.perf_counter()
    await asyncio.gather(*(writer(kv) for kv in kvs))
    elapsed = time.perf_counter() - started
    transactions = log.transactions - transactions_before
    await store.close()
    done = total // writers * writers
    return done / elapsed, done / max(transactions, 1)


async def reads(directory: Path, *, keys: int) -> tuple[float, list[float]]:
    """Gets per second, and the times of listing all ``keys`` keys."""
    store = sqlite.new_backend(directory / "reads.db")
    await store.start()
    await asyncio.gather(*(store.create(f"/bench/k{i:06d}", VALUE) for i in range(keys)))
    await asyncio.gather(*(store.create(f"/other/k{i:06d}", VALUE) for i in range(keys)))
    count = 200_000
    started = time.perf_counter()
    for i in range(count):
        await store.get(f"/bench/k{i % keys:06d}")
    gets = count / (time.perf_counter() - started)
    lists = []
    for _ in range(50):
        started = time.perf_counter()
        _, kvs = await store.list("/bench/")
        lists.append(time.perf_counter() - started)
        assert len(kvs) == keys
    await store.close()
    return gets, lists


async def fan_out(*, watchers: int, events: int) -> list[float]:
    """Seconds from a write until every one of ``watchers`` watchers has its event."""
    store = memory.new_backend()
    await store.start()
    received = 0
    all_received = asyncio.Event()

    async def consume() -> None:
        nonlocal received
        async for _ in store.watch("/bench/", after_revision=store.current_revision()):
            received += 1
            if received == watchers:
                all_received.set()

    tasks = [asyncio.create_task(consume()) for _ in range(watchers)]
    await asyncio.sleep(0.01)
    samples = []
    for i in range(events):
        received = 0
        all_received.clear()
        started = time.perf_counter()
        await store.create(f"/bench/k{i}", VALUE)
        await all_received.wait()
        samples.append(time.perf_counter() - started)
    await store.close()
    await asyncio.gather(*tasks)
    return samples


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for synchronous, writers, total in (
            ("FULL", 1, 2_000),
            ("FULL", 100, 20_000),
            ("NORMAL", 100, 20_000),
        ):
            rate, per_tx = await durable_updates(
                directory, synchronous=synchronous, writers=writers, total=total
            )
            print(
                f"durable updates, {writers} writer(s), synchronous={synchronous}: "
                f"{rate:,.0f}/s ({per_tx:.1f} writes per transaction)"
            )
        gets, lists = await reads(directory, keys=10_000)
        print(f"get: {gets:,.0f}/s")
        print(
            f"list of 10,000 keys (of 20,000): p50 {statistics.median(lists) * 1e3:.2f} ms, "
            f"p99 {percentile(lists, 0.99) * 1e3:.2f} ms"
        )
    samples = await fan_out(watchers=1_000, events=200)
    print(
        f"one event to 1,000 watchers, until all have it: "
        f"p50 {statistics.median(samples) * 1e3:.2f} ms, p99 {percentile(samples, 0.99) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    uvloop.run(main())
