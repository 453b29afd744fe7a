"""Every acknowledged write survives the writer process being killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pyocm.apiserver.storage import sqlite
from pyocm.apiserver.storage.interface import KeyValue

REPO = Path(__file__).resolve().parents[3]

# Eight concurrent writers, so that acknowledged writes come from shared transactions.
CHILD = """
import asyncio, sys
from pyocm.apiserver.storage import sqlite

async def main(path):
    store = sqlite.new_backend(path)
    await store.start()

    async def writer(name):
        for i in range(1_000_000):
            key = f"/d/{name}/{i}"
            kv = await store.create(key, key.encode())
            sys.stdout.write(f"{kv.mod_revision} {key}\\n")
            sys.stdout.flush()

    await asyncio.gather(*(writer(n) for n in range(8)))

asyncio.run(main(sys.argv[1]))
"""


def acknowledged_writes_before_kill(path: Path, *, wanted: int) -> list[tuple[int, str]]:
    """Run the writer, SIGKILL it after ``wanted`` acknowledgements, return all it printed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, env=env, cwd=REPO
    )
    assert child.stdout is not None
    lines: list[bytes] = []
    deadline = time.monotonic() + 10
    while len(lines) < wanted and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        lines.append(line)
    os.kill(child.pid, signal.SIGKILL)
    lines.extend(child.stdout.readlines())
    child.wait()
    assert child.returncode == -signal.SIGKILL, "the writer must still be writing when killed"
    # A line cut by the kill was never fully acknowledged.
    complete = [line.decode().split() for line in lines if line.endswith(b"\n")]
    return [(int(revision), key) for revision, key in complete]


async def test_every_acknowledged_write_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    acked = acknowledged_writes_before_kill(path, wanted=400)
    assert len(acked) >= 400

    store = sqlite.new_backend(path)
    await store.start()
    try:
        for revision, key in acked:
            assert await store.get(key) == KeyValue(key, key.encode(), revision, revision)
        recovered = store.current_revision()
        assert recovered >= max(revision for revision, _ in acked)
        assert (await store.create("/after", b"")).mod_revision > recovered
    finally:
        await store.close()
