"""A throwaway etcd for tests: one member (Debian's etcd-server, which ./dev setup
installs) on free loopback ports with a temporary data directory.

``etcd_server`` is session-scoped (one etcd per xdist worker); tests keep apart by key
prefix (``etcd_prefix``), never by separate servers.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for an etcd that serves TLS and asks for client certificates."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


@dataclass
class EtcdServer:
    endpoint: str  # host:port
    process: subprocess.Popen[bytes]
    log_path: Path
    tls: TlsFiles | None = None

    @property
    def url(self) -> str:
        """The storage URL of this etcd."""
        return f"etcd://{self.endpoint}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_etcd(workdir: Path, *, tls: TlsFiles | None = None) -> EtcdServer:
    binary = shutil.which("etcd")
    if binary is None:
        pytest.fail("etcd is not installed: ./dev setup installs Debian's etcd-server")
    workdir.mkdir(parents=True, exist_ok=True)
    client, peer = free_port(), free_port()
    scheme = "https" if tls else "http"
    client_url, peer_url = f"{scheme}://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    args = [
        binary,
        "--name=test",
        f"--data-dir={workdir / 'data'}",
        f"--listen-client-urls={client_url}",
        f"--advertise-client-urls={client_url}",
        f"--listen-peer-urls={peer_url}",
        f"--initial-advertise-peer-urls={peer_url}",
        f"--initial-cluster=test={peer_url}",
    ]
    if tls:
        args += [
            f"--cert-file={tls.server_cert}",
            f"--key-file={tls.server_key}",
            f"--trusted-ca-file={tls.ca}",
            "--client-cert-auth",
        ]
    log_path = workdir / "etcd.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = EtcdServer(f"127.0.0.1:{client}", process, log_path, tls)
    try:
        _wait_ready(server, client_url)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_ready(server: EtcdServer, url: str, timeout: float = 30.0) -> None:
    context = None
    if server.tls:
        context = ssl.create_default_context(cafile=server.tls.ca)
        context.load_cert_chain(server.tls.client_cert, server.tls.client_key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"etcd exited with {server.process.returncode}:\n{server.log()}")
        request = urllib.request.Request(f"{url}/v3/maintenance/status", data=b"{}")
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as answer:
                if json.loads(answer.read()).get("leader"):
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    raise TimeoutError(f"etcd not ready after {timeout}s:\n{server.log()}")


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = start_etcd(tmp_path_factory.mktemp("etcd"))
    yield server
    server.stop()
