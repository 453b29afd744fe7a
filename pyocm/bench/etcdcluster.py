"""A throw-away etcd cluster for a benchmark run: ``size`` members on free loopback ports
(Debian's etcd-server, default settings: an fsync per commit on each member), peers of
each other, in a directory of the run's own, stopped and deleted with it.

Its members' PIDs let the report give each one's CPU; ``keys`` and ``db_mib`` stand in
for the SQLite file's size and row count when the hub stores in etcd.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Member:
    name: str
    client: str  # host:port
    process: subprocess.Popen[bytes]

    def status(self) -> dict[str, object]:
        """The member's maintenance status (``etcdctl endpoint status``), {} if it does
        not answer."""
        with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
            answer = _post(self.client, "/v3/maintenance/status", {})
            return answer if isinstance(answer, dict) else {}
        return {}


@dataclass
class EtcdCluster:
    members: list[Member]

    @property
    def url(self) -> str:
        """The hub's ``--storage`` URL, naming every member."""
        return "etcd://" + ",".join(m.client for m in self.members)

    def db_mib(self) -> float:
        """The largest member's database file (they hold the same data)."""
        sizes = [int(str(m.status().get("dbSize", 0))) for m in self.members]
        return max(sizes, default=0) / (1024 * 1024)

    def keys(self, prefix: str) -> Counter[str]:
        """Live keys under ``prefix`` by resource (the segment after the API group), as
        :func:`pyocm.bench.fleet.database` counts SQLite rows."""
        start = f"{prefix}/".encode()
        end = start[:-1] + bytes([start[-1] + 1])
        answer = _post(
            self.members[0].client,
            "/v3/kv/range",
            {"key": _b64(start), "range_end": _b64(end), "keys_only": True},
            timeout=120.0,
        )
        kvs = answer.get("kvs")
        listed = kvs if isinstance(kvs, list) else []
        found = [base64.b64decode(kv["key"]).decode().removeprefix(prefix) for kv in listed]
        return Counter(key.split("/")[3] for key in found if key.count("/") >= 4)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _post(client: str, path: str, body: object, *, timeout: float = 2.0) -> dict[str, object]:
    request = urllib.request.Request(f"http://{client}{path}", data=json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        loaded = json.loads(answer.read())
    return loaded if isinstance(loaded, dict) else {}


@dataclass(frozen=True)
class Plan:
    """One member of a new loopback cluster: its ports and its command line."""

    name: str
    client: int
    peer: int
    args: list[str]


def plan(binary: str, folder: Path, *, size: int, token: str) -> list[Plan]:
    """``size`` members on free loopback ports, data under ``folder``, started together
    as a new cluster; ``token`` is its own, so no stray peer of another cluster joins."""
    ports = [(f"m{i}", _free_port(), _free_port()) for i in range(size)]
    peers = ",".join(f"{name}=http://127.0.0.1:{peer}" for name, _, peer in ports)
    return [
        Plan(
            name,
            client,
            peer,
            [
                binary,
                f"--name={name}",
                f"--data-dir={folder / name}",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster={peers}",
                f"--initial-cluster-token={token}",
                "--initial-cluster-state=new",
            ],
        )
        for name, client, peer in ports
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running(folder: Path, *, size: int = 3, timeout: float = 60.0) -> Iterator[EtcdCluster]:
    """``size`` members started together as a new cluster (a token of their own, so no
    stray peer of another run joins), once each of them knows the leader."""
    members: list[Member] = []
    try:
        token = f"pyocm-bench-{os.getpid()}-{folder.name}"
        for planned in plan("etcd", folder, size=size, token=token):
            with (folder / f"{planned.name}.log").open("wb") as log:
                process = subprocess.Popen(planned.args, stdout=log, stderr=subprocess.STDOUT)
            members.append(Member(planned.name, f"127.0.0.1:{planned.client}", process))
        cluster = EtcdCluster(members)
        _wait_leader(cluster, folder, timeout)
        yield cluster
    finally:
        for member in members:
            member.process.terminate()
        for member in members:
            try:
                member.process.wait(20)
            except subprocess.TimeoutExpired:
                member.process.kill()
                member.process.wait(10)


def _wait_leader(cluster: EtcdCluster, folder: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for member in cluster.members:
            if member.process.poll() is not None:
                log = (folder / f"{member.name}.log").read_text(errors="replace")
                raise RuntimeError(f"etcd {member.name} exited:\n{log[-2000:]}")
        if all(str(m.status().get("leader", "0")) != "0" for m in cluster.members):
            return
        time.sleep(0.1)
    raise TimeoutError(f"etcd cluster not ready after {timeout}s")
