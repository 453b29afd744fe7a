"""Acknowledged writes survive SIGKILL, also when many arrive at once and share a commit.

``tests/e2e/test_hub_lifecycle.py::test_sigkill_loses_no_acknowledged_write`` kills the
hub under one client creating objects one after the other. Here sixteen clients create,
update and delete at once, so acknowledgements come out of grouped commits, and the hub is
killed while many requests are in flight. After a restart on the same data directory,
the last acknowledged write to every object is what is stored; only an object whose last
request was never answered may be in either state.
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from pyocm.testing import Client, HubProcess

NAMESPACE = "durable"
CMS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
WORKERS = 16
ENOUGH = 300  # acknowledged creates before the kill


@dataclass
class Ledger:
    """Per object: its last acknowledged state (None = deleted) and, if a request about it
    was still unanswered at the kill, the state that request would have left."""

    acked: dict[str, str | None] = field(default_factory=dict)
    pending: dict[str, str | None] = field(default_factory=dict)
    creates: int = 0
    updates: int = 0
    deletes: int = 0
    killed: asyncio.Event = field(default_factory=asyncio.Event)


async def _worker(client: Client, ledger: Ledger, worker: int) -> None:
    """Create objects; update every third one and delete every fifth once created."""
    i = 0
    while not ledger.killed.is_set():
        name = f"w{worker}-{i}"
        steps: list[tuple[str, str | None]] = [("create", f"{name}:0")]
        if i % 3 == 0:
            steps.append(("update", f"{name}:1"))
        if i % 5 == 0:
            steps.append(("delete", None))
        for op, state in steps:
            ledger.pending[name] = state
            try:
                if op == "create":
                    code, _ = await client.post(CMS, {"metadata": {"name": name}, "data": {"v": state}})
                    ok = code == 201
                elif op == "update":
                    code, _ = await client.patch(f"{CMS}/{name}", {"data": {"v": state}})
                    ok = code == 200
                else:
                    code, _ = await client.delete(f"{CMS}/{name}")
                    ok = code == 200
            except (aiohttp.ClientError, ConnectionError):
                return  # the hub is gone: this request stays pending
            assert ok, (op, name, code)
            del ledger.pending[name]
            ledger.acked[name] = state
            if op == "create":
                ledger.creates += 1
            elif op == "update":
                ledger.updates += 1
            else:
                ledger.deletes += 1
        i += 1


async def test_concurrent_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub", extra_args=["--no-controllers"]).start()
    ledger = Ledger()
    try:
        async with Client(hub.kubeconfig) as client:
            code, _ = await client.post("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
            assert code == 201
            workers = [asyncio.create_task(_worker(client, ledger, w)) for w in range(WORKERS)]
            try:
                while ledger.creates < ENOUGH:
                    done = [w for w in workers if w.done()]
                    for task in done:
                        task.result()  # a worker that stopped early failed: say why
                    await asyncio.sleep(0.01)
                assert hub.proc is not None
                os.kill(hub.proc.pid, signal.SIGKILL)
                ledger.killed.set()
                await asyncio.gather(*workers)
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
    finally:
        hub.kill()
    assert hub.proc is not None and hub.proc.returncode == -signal.SIGKILL
    assert ledger.creates >= ENOUGH and ledger.updates and ledger.deletes
    assert ledger.pending, "the kill came while requests were in flight"

    hub = HubProcess(tmp_path / "hub", port=hub.port, extra_args=["--no-controllers"]).start()
    try:
        async with Client(hub.kubeconfig) as client:
            code, listed = await client.get(CMS)
            assert code == 200
    finally:
        assert hub.stop() == 0
    stored: dict[str, str | None] = {
        item["metadata"]["name"]: (item.get("data") or {}).get("v") for item in listed["items"]
    }
    wrong = {}
    for name, state in ledger.acked.items():
        allowed = {state, ledger.pending[name]} if name in ledger.pending else {state}
        if stored.get(name) not in allowed:
            wrong[name] = (stored.get(name), allowed)
    assert wrong == {}, f"{len(wrong)} objects lost their last acknowledged write"
    unknown = set(stored) - set(ledger.acked) - set(ledger.pending)
    assert unknown == set(), "nothing appears that was never asked for"
