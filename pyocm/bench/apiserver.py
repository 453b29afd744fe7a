"""The hub API server under load, next to a bare aiohttp TLS server doing nothing.

A hub runs in its own process (``pyocm hub --no-controllers``, SQLite with FULL sync:
every acknowledged write is durable) and so does the baseline; the load comes from this
process over keep-alive TLS with a client certificate. Figures, never assertions.

``storage`` ``etcd`` stores in a single-member etcd started for the run (Debian's
etcd-server, default fsync on every commit: durable as FULL is), and ``etcd://...`` in an
existing etcd, under a prefix of the run's own (left there afterwards).

Rates are compared at saturation. The bare server is CPU-bound at 16 clients, but a
durable PUT spends most of its time waiting for the commit it shares with others, so
the hub reaches its update rate only with more requests in flight. The baseline runs
with ``--clients`` and four times as many (16 and 64 by default) and every ratio divides
by its best rate; the update ratio is the hub's rate with four times ``--clients``, and
the ratio with ``--clients`` is printed beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import aiohttp
import orjson

from pyocm.bench.stats import percentile
from pyocm.pki import kubeconfig as kubeconfigs

CM = "/api/v1/namespaces/default/configmaps"
#: Writes timed for the fan-out figure; its p99 covers them all, so one slow moment on a
#: shared machine does not become the p99 by itself.
FAN_OUT_WRITES = 20


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.2),
        ):
            return
        time.sleep(0.05)
    raise RuntimeError("server did not start")


@contextlib.contextmanager
def _process(args: list[str], port: int) -> Iterator[None]:
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, process)
        yield None
    finally:
        process.terminate()
        process.wait(timeout=20)


_BASELINE = textwrap.dedent(
    """
    import ssl, sys, uvloop
    from aiohttp import web
    cert, key, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    body = b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"a":"1"}}'
    async def handle(request):
        return web.Response(body=body, content_type="application/json")
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    web.run_app(
        app, host="127.0.0.1", port=port, ssl_context=ctx, print=None, access_log=None,
        loop=uvloop.new_event_loop(),
    )
    """
)


async def _rate(
    session: aiohttp.ClientSession,
    call: Callable[[aiohttp.ClientSession, int], Awaitable[int]],
    *,
    workers: int,
    seconds: float,
) -> tuple[float, list[float]]:
    latencies: list[float] = []
    deadline = time.monotonic() + seconds

    async def worker(index: int) -> None:
        sequence = 0
        while time.monotonic() < deadline:
            start = time.monotonic()
            code = await call(session, index * 1_000_000 + sequence)
            if code >= 300:
                raise RuntimeError(f"request failed with {code}")
            latencies.append(time.monotonic() - start)
            sequence += 1

    begin = time.monotonic()
    await asyncio.gather(*(worker(i) for i in range(workers)))
    return len(latencies) / (time.monotonic() - begin), latencies


def _line(name: str, rate: float, latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = percentile(ordered, 0.99)
    return f"{name}: {rate:,.0f} req/s, p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"


async def _fan_out(url: str, ctx: ssl.SSLContext, *, watchers: int, writes: int) -> list[float]:
    gc.collect()
    gc.freeze()  # the load generator's own GC pauses are not the server's latency
    connector = aiohttp.TCPConnector(limit=0, ssl=ctx)
    delays: list[float] = []
    async with aiohttp.ClientSession(url, connector=connector) as session:
        async with session.post(
            f"{CM}", json={"metadata": {"name": "fan-out"}, "data": {"n": "0"}}
        ) as resp:
            version = (await resp.json())["metadata"]["resourceVersion"]
        received: dict[int, list[float]] = {}
        ready = asyncio.Semaphore(0)

        async def watch(index: int) -> None:
            params = {
                "watch": "true",
                "resourceVersion": version,
                "fieldSelector": "metadata.name=fan-out",
            }
            async with session.get(
                CM, params=params, timeout=aiohttp.ClientTimeout(total=None)
            ) as resp:
                ready.release()
                async for line in resp.content:
                    if line.strip():
                        received.setdefault(index, []).append(time.monotonic())
                        if len(received[index]) == writes:
                            return

        tasks = [asyncio.create_task(watch(i)) for i in range(watchers)]
        for _ in range(watchers):
            await ready.acquire()
        await asyncio.sleep(0.5)
        sent: list[float] = []
        for n in range(1, writes + 1):
            sent.append(time.monotonic())
            body = [{"op": "replace", "path": "/data/n", "value": str(n)}]
            headers = {"Content-Type": "application/json-patch+json"}
            async with session.patch(
                f"{CM}/fan-out", data=orjson.dumps(body), headers=headers
            ) as resp:
                await resp.read()
            await asyncio.sleep(0.3)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
        for times in received.values():
            delays.extend(t - s for t, s in zip(times, sent, strict=True))
    return delays


@contextlib.contextmanager
def _storage(storage: str, folder: Path) -> Iterator[list[str]]:
    """The hub's storage flags for ``storage``, with a throwaway etcd for ``etcd``."""
    if storage == "sqlite":
        yield []
        return
    prefix = ["--etcd-prefix", f"/pyocm-bench-{uuid.uuid4().hex[:8]}"]
    if storage.startswith("etcd://"):
        yield ["--storage", storage, *prefix]
        return
    if storage != "etcd":
        raise ValueError("storage is sqlite, etcd or an etcd:// URL")
    client, peer = f"http://127.0.0.1:{_free_port()}", f"http://127.0.0.1:{_free_port()}"
    etcd = [
        "etcd",
        "--name=bench",
        f"--data-dir={folder / 'etcd'}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=bench={peer}",
    ]
    with _process(etcd, int(client.rsplit(":", 1)[1])):
        yield ["--storage", f"etcd://{client.removeprefix('http://')}", *prefix]


async def run(
    *, seconds: float = 5.0, workers: int = 16, watchers: int = 1000, storage: str = "sqlite"
) -> list[str]:
    lines: list[str] = []
    hub_name = "hub" if storage == "sqlite" else "hub on etcd"
    with (
        tempfile.TemporaryDirectory(prefix="pyocm-bench-") as folder,
        _storage(storage, Path(folder)) as storage_args,
    ):
        data = Path(folder) / "hub"
        port = _free_port()
        hub = [
            sys.executable,
            "-m",
            "pyocm",
            "hub",
            "--data-dir",
            str(data),
            "--listen",
            f"127.0.0.1:{port}",
            "--no-controllers",
            *storage_args,
        ]
        with _process(hub, port):
            for _ in range(300):  # the kubeconfig is written once the hub is ready
                if (data / "admin.kubeconfig").exists():
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            info = kubeconfigs.load_kubeconfig(data / "admin.kubeconfig")
            ctx = kubeconfigs.client_ssl_context(info)
            connector = aiohttp.TCPConnector(limit=0, ssl=ctx)
            async with aiohttp.ClientSession(info.server, connector=connector) as session:
                async with session.post(
                    CM, json={"metadata": {"name": "bench-get"}, "data": {"a": "1"}}
                ) as resp:
                    await resp.read()

                async def get(s: aiohttp.ClientSession, _: int) -> int:
                    async with s.get(f"{CM}/bench-get") as resp:
                        await resp.read()
                        return resp.status

                async def put(s: aiohttp.ClientSession, n: int) -> int:
                    body = {
                        "metadata": {"name": f"bench-put-{n // 1_000_000}"},
                        "data": {"n": str(n)},
                    }
                    async with s.put(f"{CM}/{body['metadata']['name']}", json=body) as resp:
                        await resp.read()
                        return resp.status

                get_rate, latencies = await _rate(session, get, workers=workers, seconds=seconds)
                lines.append(
                    _line(f"{hub_name} GET configmap ({workers} clients)", get_rate, latencies)
                )
                writers = workers * 4
                for index in range(writers):
                    async with session.post(
                        CM, json={"metadata": {"name": f"bench-put-{index}"}}
                    ) as resp:
                        await resp.read()
                put_rate, latencies = await _rate(session, put, workers=workers, seconds=seconds)
                lines.append(
                    _line(
                        f"{hub_name} PUT configmap, durable ({workers} clients)",
                        put_rate,
                        latencies,
                    )
                )
                # Group commit shines with many writers in flight: each fsync covers them all.
                many_rate, latencies = await _rate(session, put, workers=writers, seconds=seconds)
                lines.append(
                    _line(
                        f"durable writes with group commit ({writers} clients)",
                        many_rate,
                        latencies,
                    )
                )
            delays = await _fan_out(info.server, ctx, watchers=watchers, writes=FAN_OUT_WRITES)
            ordered = sorted(delays)
            lines.append(
                f"watch fan-out to {watchers} watchers ({FAN_OUT_WRITES} writes): p50 {statistics.median(ordered) * 1000:.0f} ms, "
                f"p99 {percentile(ordered, 0.99) * 1000:.0f} ms"
            )
            cert, key = data / "pki" / "serving.crt", data / "pki" / "serving.key"
        base_port = _free_port()
        script = Path(folder) / "baseline.py"
        script.write_text(_BASELINE)
        with _process(
            [sys.executable, str(script), str(cert), str(key), str(base_port)], base_port
        ):
            plain = ssl.create_default_context()
            plain.check_hostname = False
            plain.verify_mode = ssl.CERT_NONE
            if info.cert_pem and info.key_pem:
                ctx_file = Path(folder) / "client.pem"
                ctx_file.write_bytes(info.cert_pem + info.key_pem)
                os.chmod(ctx_file, 0o600)
                plain.load_cert_chain(str(ctx_file))
            connector = aiohttp.TCPConnector(limit=0, ssl=plain)
            async with aiohttp.ClientSession(
                f"https://127.0.0.1:{base_port}", connector=connector
            ) as session:

                async def bare(s: aiohttp.ClientSession, _: int) -> int:
                    async with s.get("/configmaps/x") as resp:
                        await resp.read()
                        return resp.status

                bare_rates = []
                for clients in (workers, writers):
                    rate, latencies = await _rate(session, bare, workers=clients, seconds=seconds)
                    bare_rates.append(rate)
                    lines.append(
                        _line(
                            f"bare aiohttp TLS GET, baseline ({clients} clients)", rate, latencies
                        )
                    )
    # Each ratio is against the baseline's best rate at either concurrency, so no hub
    # figure is flattered by a baseline run below its own peak.
    bare_rate = max(bare_rates)
    lines.append(
        f"ratios to the bare server: GET {get_rate / bare_rate:.2f} (goal >= 0.5), "
        f"update {many_rate / bare_rate:.2f} with {writers} clients (goal >= 0.3), "
        f"{put_rate / bare_rate:.2f} with {workers} (each PUT waits for its fsync)"
    )
    return lines
