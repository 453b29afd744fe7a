"""A throwaway etcd for tests (Debian's etcd-server, which ./dev setup installs) on free
loopback ports with a temporary data directory: one member, or a cluster of several
(``start_cluster``) whose members a fault test can find the leader of, kill and restart.

``etcd_server`` is session-scoped (one etcd per xdist worker); tests keep apart by key
prefix (``etcd_prefix``), never by separate servers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
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

from pyocm.bench.etcdcluster import plan


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


@dataclass
class EtcdMember:
    """One member of an ``EtcdCluster``: its ports and data directory outlive its process,
    so a killed member restarts as itself (same ID, same log of the cluster)."""

    name: str
    client_port: int
    peer_port: int
    workdir: Path
    args: list[str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        """SIGKILL: no goodbye to the others, as a machine that loses power."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def status(self, timeout: float = 2.0) -> dict[str, object] | None:
        """The member's maintenance status (``etcdctl endpoint status``), or None when it
        does not answer."""
        request = urllib.request.Request(
            f"http://{self.endpoint}/v3/maintenance/status", data=b"{}"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                status = json.loads(answer.read())
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return status if isinstance(status, dict) else None


@dataclass
class EtcdCluster:
    """Several etcd members on loopback, peers of each other (``--initial-cluster``)."""

    members: list[EtcdMember]

    @property
    def endpoints(self) -> list[str]:
        return [member.endpoint for member in self.members]

    @property
    def url(self) -> str:
        """The storage URL naming every member."""
        return "etcd://" + ",".join(self.endpoints)

    def leader(self, *, timeout: float = 30.0) -> EtcdMember:
        """The member that live members agree leads (waits through an election)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ids: dict[str, EtcdMember] = {}
            leaders: set[str] = set()
            for member in self.members:
                status = member.status() if member.alive() else None
                if status is None:
                    continue
                header = status.get("header")
                if isinstance(header, dict):
                    ids[str(header.get("member_id"))] = member
                leaders.add(str(status.get("leader", "0")))
            if len(leaders) == 1 and (lead := leaders.pop()) in ids:
                return ids[lead]
            time.sleep(0.1)
        raise TimeoutError(f"no etcd leader after {timeout}s:\n{self.logs()}")

    def followers(self) -> list[EtcdMember]:
        leader = self.leader()
        return [member for member in self.members if member is not leader]

    def restart(self, member: EtcdMember, *, timeout: float = 30.0) -> None:
        """Start a killed member again, on its ports and data directory, and wait until
        it answers with a leader."""
        member.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not member.alive():
                raise RuntimeError(f"etcd {member.name} exited:\n{member.log()}")
            status = member.status()
            if status is not None and str(status.get("leader", "0")) != "0":
                return
            time.sleep(0.1)
        raise TimeoutError(f"etcd {member.name} not back after {timeout}s:\n{member.log()}")

    def stop(self) -> None:
        for member in self.members:
            member.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {m.name}\n{m.log()[-2000:]}" for m in self.members)


def start_cluster(workdir: Path, *, size: int = 3, timeout: float = 60.0) -> EtcdCluster:
    """``size`` etcd members on free loopback ports, started together as one new cluster
    (a token of their own, so no stray peer from another test's cluster can join)."""
    binary = shutil.which("etcd")
    if binary is None:
        pytest.fail("etcd is not installed: ./dev setup installs Debian's etcd-server")
    workdir.mkdir(parents=True, exist_ok=True)
    token = f"pyocm-test-{os.getpid()}-{workdir.name}"
    members = [
        EtcdMember(m.name, m.client, m.peer, workdir, m.args)
        for m in plan(binary, workdir, size=size, token=token)
    ]
    cluster = EtcdCluster(members)
    for member in members:
        member.start()
    try:
        _wait_cluster(cluster, timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait_cluster(cluster: EtcdCluster, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for member in cluster.members:
            if not member.alive():
                raise RuntimeError(f"etcd {member.name} exited:\n{cluster.logs()}")
        if all(str((m.status() or {}).get("leader", "0")) != "0" for m in cluster.members):
            return
        time.sleep(0.1)
    raise TimeoutError(f"etcd cluster not ready after {timeout}s:\n{cluster.logs()}")
