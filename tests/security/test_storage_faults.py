"""Storage faults a hub must survive or refuse clearly: a full disk (writes fail with a
clear 503 and readiness says so, then both recover once space is freed, without a
restart), starting on a full disk, and a database file truncated to zero bytes. And the
health checks: served by name, 404 for any other name, even through ``..``.

The full disk is real: a small tmpfs mounted for the test (the suite runs as root, as
CI does), filled with a file until the kernel answers ENOSPC."""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyocm.testing import Client, HubProcess
from tests.security.conftest import Caller

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
#: Room for the hub's key material and its seeded database, little more.
DISK_SIZE = "6m"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of DISK_SIZE, unmounted (whatever the test left in it) at the end."""
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE},mode=0700", "tmpfs", str(mount)],
        check=True,
    )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path) -> Path:
    """Write a file until the filesystem holding ``disk`` has no block left."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    chunk = b"\0" * 65536
    try:
        while True:
            try:
                os.write(fd, chunk)
            except OSError:
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]
    finally:
        os.close(fd)
    return filler


def hub_on(disk: Path, log_dir: Path) -> HubProcess:
    """A hub whose data directory is ``disk``; its log stays off that disk, so a full
    disk cannot silence it."""
    hub = HubProcess(disk, extra_args=["--no-controllers"])
    hub.log_path = log_dir / "hub.log"
    return hub


def configmap(name: str, size: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"blob": "x" * size}}


def run_hub(data_dir: Path) -> subprocess.CompletedProcess[str]:
    """Start a hub that is expected to refuse to start."""
    return subprocess.run(
        [sys.executable, "-m", "pyocm", "hub", "--data-dir", str(data_dir),
         "--listen", "127.0.0.1:0", "--no-controllers"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


async def write_until_refused(admin: Client) -> tuple[int, Any]:
    """Create configmaps until one is refused; a write may still land in space SQLite
    already holds (its WAL), but the disk runs out within a few."""
    for i in range(40):
        code, body = await admin.post(CONFIGMAPS, configmap(f"fill-{i}", 256 * 1024))
        if code != 201:
            return code, body
    raise AssertionError("40 writes of 256 KiB fitted on a full disk")


async def test_a_full_disk_refuses_writes_keeps_reads_and_recovers_without_restart(
    small_disk: Path, tmp_path: Path
) -> None:
    hub = hub_on(small_disk, tmp_path)
    with hub:
        async with Client(hub.kubeconfig) as admin:
            assert (await admin.post(CONFIGMAPS, configmap("before")))[0] == 201
            filler = fill(small_disk)

            code, status = await write_until_refused(admin)
            assert code == 503, status
            assert status["reason"] == "ServiceUnavailable"
            assert "SQLITE_FULL" in status["message"]
            code, kept = await admin.get(f"{CONFIGMAPS}/before")
            assert code == 200 and kept["metadata"]["name"] == "before"
            code, text = await admin.get("/readyz", params={"verbose": ""})
            assert code == 500
            assert "[-]sqlite failed: reason withheld\n" in text
            assert text.endswith("readyz check failed\n")
            code, text = await admin.get("/readyz/sqlite")
            assert code == 500 and "FULL" in text.upper(), text
            # Still full: the probe behind /readyz must not turn it green.
            assert (await admin.get("/readyz"))[0] == 500

            filler.unlink()
            code, text = await admin.get("/readyz", params={"verbose": ""})
            assert code == 200, text
            assert "[+]sqlite ok\n" in text and "etcd" not in text
            code, created = await admin.post(CONFIGMAPS, configmap("after"))
            assert code == 201, created
    assert hub.proc is not None and hub.proc.returncode == 0


async def test_a_write_that_succeeds_makes_the_hub_ready_again(
    small_disk: Path, tmp_path: Path
) -> None:
    """Writes are retried against the disk, not refused forever after one failure."""
    hub = hub_on(small_disk, tmp_path)
    with hub:
        async with Client(hub.kubeconfig) as admin:
            filler = fill(small_disk)
            assert (await write_until_refused(admin))[0] == 503
            filler.unlink()
            code, created = await admin.post(CONFIGMAPS, configmap("after"))
            assert code == 201, created
            code, text = await admin.get("/readyz/sqlite")
            assert (code, text) == (200, "ok")


def test_starting_on_a_full_disk_says_the_disk_is_full(small_disk: Path, tmp_path: Path) -> None:
    hub = hub_on(small_disk, tmp_path)
    with hub:
        pass  # a first start creates the key material and the database
    fill(small_disk)
    result = run_hub(small_disk)
    assert result.returncode == 1, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: "), result.stderr
    assert "disk is full" in line and str(small_disk / "state.db") in line, line
    assert "free" in line and "Traceback" not in result.stderr


def test_a_zero_length_database_beside_key_material_refuses_to_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with HubProcess(data, extra_args=["--no-controllers"]):
        pass
    (data / "state.db").write_bytes(b"")
    result = run_hub(data)
    assert result.returncode == 1, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and str(data / "state.db") in line, result.stderr
    assert "empty" in line and "Traceback" not in result.stderr
    assert (data / "state.db").stat().st_size == 0, "the evidence is left as found"


def test_a_fresh_data_directory_still_starts(tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    with HubProcess(data, extra_args=["--no-controllers"]):
        assert (data / "state.db").stat().st_size > 0
    assert not list(data.glob("state.db.*")), "no temporary file is left behind"


@pytest.mark.parametrize(
    "path",
    [
        "/healthz/ping", "/healthz/sqlite", "/livez/ping", "/livez/sqlite",
        "/readyz/ping", "/readyz/sqlite", "/readyz/shutdown",
    ],
)  # fmt: skip
async def test_named_health_checks_answer_ok(anonymous: Caller, path: str) -> None:
    assert await anonymous.request("GET", path) == (200, "ok")


@pytest.mark.parametrize(
    "path",
    [
        "/healthz/etcd", "/healthz/log", "/healthz/anything", "/livez/shutdown",
        "/readyz/x/ping", "/healthz/ping/extra",
    ],
)  # fmt: skip
async def test_other_health_paths_are_not_found(anonymous: Caller, path: str) -> None:
    code, body = await anonymous.request("GET", path)
    assert code == 404, body
    assert body["reason"] == "NotFound" and "items" not in body


@pytest.mark.parametrize("verbose_path", ["/healthz", "/livez", "/readyz"])
async def test_verbose_health_lists_the_real_checks(anonymous: Caller, verbose_path: str) -> None:
    code, text = await anonymous.request("GET", verbose_path, params={"verbose": ""})
    name = verbose_path.strip("/")
    checks = "[+]ping ok\n[+]sqlite ok\n"
    if name == "readyz":
        checks += "[+]shutdown ok\n"
    assert (code, text) == (200, f"{checks}{name} check passed\n")


@pytest.mark.parametrize(
    "target",
    [
        "/healthz/../api/v1/secrets",
        "/healthz/../api/v1/namespaces/kube-system/secrets",
        "/readyz/..%2fapi/v1/secrets",
        "/healthz/%2e%2e/api/v1/secrets",
        "/livez/./../api/v1/secrets",
    ],
)
async def test_dot_segments_after_a_health_path_never_reach_a_resource(
    hub: HubProcess, target: str
) -> None:
    """Sent byte for byte (a client library would normalise the path first): answered as
    a health path that does not exist, or as the resource path demanding credentials;
    never with a resource."""
    context = ssl.create_default_context(cadata=hub.ca_pem.decode())
    reader, writer = await asyncio.open_connection("127.0.0.1", hub.port, ssl=context)
    try:
        request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        writer.write(request.encode())
        answer = await asyncio.wait_for(reader.read(), timeout=30)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await writer.wait_closed()
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.split()[1] in (b"401", b"404"), answer[:300]
    assert b'"items"' not in answer and b"SecretList" not in answer
