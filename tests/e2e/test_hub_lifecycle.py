"""The hub process itself: first start, restart, clean shutdown, crash durability."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyocm.pki import kubeconfig
from pyocm.testing import Client, HubProcess

CM = "/api/v1/namespaces/default/configmaps"


async def test_restart_reuses_ca_and_data_and_expires_old_watches(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub").start()
    try:
        info = kubeconfig.load_kubeconfig(hub.kubeconfig)
        assert info.server == hub.url and info.cert_pem and info.ca_pem
        ca_before = hub.ca_pem
        async with Client(hub.kubeconfig) as client:
            code, obj = await client.post(CM, {"metadata": {"name": "kept"}, "data": {"a": "1"}})
            assert code == 201
            assert (await client.post(CM, {"metadata": {"name": "later"}}))[0] == 201
        rv = obj["metadata"]["resourceVersion"]
    finally:
        assert hub.stop() == 0
    assert "pyocm hub stopped" in hub.log()
    hub = HubProcess(tmp_path / "hub", port=hub.port).start()
    try:
        assert hub.ca_pem == ca_before
        async with Client(hub.kubeconfig) as client:
            code, again = await client.get(f"{CM}/kept")
            assert code == 200 and again["data"] == {"a": "1"}
            code, newer = await client.post(CM, {"metadata": {"name": "after"}})
            assert int(newer["metadata"]["resourceVersion"]) > int(rv)
            events = await client.watch_lines(CM, params={"resourceVersion": rv}, limit=1)
            assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    finally:
        assert hub.stop() == 0


WRITER = r"""
import asyncio, sys
from pathlib import Path
from pyocm.testing import Client

async def main(path):
    async with Client(Path(path)) as client:
        i = 0
        while True:
            code, obj = await client.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"w{i}"}})
            if code != 201:
                print("error", code, obj, flush=True)
                return
            print(obj["metadata"]["name"], flush=True)
            i += 1

asyncio.run(main(sys.argv[1]))
"""


async def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub").start()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(hub.kubeconfig)], stdout=subprocess.PIPE, text=True)
    acknowledged: list[str] = []
    assert writer.stdout is not None
    deadline = time.monotonic() + 30
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        line = writer.stdout.readline().strip()
        if line:
            acknowledged.append(line)
    os.kill(hub.proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
    hub.proc.wait()  # type: ignore[union-attr]
    writer.wait(timeout=30)
    acknowledged.extend(line.strip() for line in writer.stdout if line.strip() and not line.startswith("error"))
    assert len(acknowledged) >= 150
    hub = HubProcess(tmp_path / "hub", port=hub.port).start()
    try:
        async with Client(hub.kubeconfig) as client:
            _, lst = await client.get(CM)
        stored = {i["metadata"]["name"] for i in lst["items"]}
        missing = [n for n in acknowledged if n.startswith("w") and n not in stored]
        assert missing == []
    finally:
        assert hub.stop() == 0


def test_bad_listen_address_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pyocm", "hub", "--data-dir", str(tmp_path), "--listen", "127.0.0.1:notaport"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0
    assert "port 'notaport' is not a number" in result.stderr


@pytest.mark.parametrize("duration", ["abc", "10x", "-5m"])
def test_bad_signing_duration_is_a_clear_error(tmp_path: Path, duration: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pyocm", "hub", "--data-dir", str(tmp_path), "--cluster-signing-duration", duration],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0 and "invalid duration" in result.stderr
