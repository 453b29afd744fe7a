"""An HA hub as a person runs one, in real processes: a 3-member etcd, two ``pyocm hub
--reuse-port`` replicas on it sharing one port and data directory, and a ``pyocm sim``
fleet joined through that port, with the probes of tests/ha/probes.py running."""

from __future__ import annotations

import contextlib
import os
import ssl
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyocm.api import conditions, wellknown
from pyocm.kube import timefmt
from pyocm.pki import kubeconfig
from pyocm.testing import HubProcess
from tests.cli import Running
from tests.e2e.test_hub_replicas import owner
from tests.etcd import EtcdCluster, EtcdMember, free_port, start_cluster
from tests.ha.probes import FAILURES, Availability, Connection, Writer, requests_by_verb

#: A small fleet: enough agents for their watches to tell a relist storm from a few
#: relists, few enough for a loaded 2-core machine to run beside 3 etcds and 2 hubs.
CLUSTERS = 20
#: leaseDurationSeconds of the simulated clusters: they renew every 4 s, and the hub
#: makes one Unknown after 5 missed renewals (20 s), so an outage that long shows.
LEASE_SECONDS = 4
NAMESPACE = "ha-probe"
SERVER_LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
HUB_LEASE = (
    "/apis/coordination.k8s.io/v1/namespaces/open-cluster-management-hub/leases/"
    "pyocm-hub-controllers"
)


def wait_for(what: str, check: Callable[[], bool], *, timeout: float = 90.0) -> float:
    """Poll ``check`` until true; the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")


@dataclass
class HaHub:
    etcd: EtcdCluster
    replicas: list[HubProcess]
    port: int
    context: ssl.SSLContext
    workdir: Path
    fleet: Running | None = None
    clusters: list[str] = field(default_factory=list)
    writer: Writer | None = None
    availability: Availability | None = None
    #: LIST requests the replicas had served once the fleet settled: about one per
    #: informer (each lists once, then watches), the size of a relist storm.
    informers: int = 0
    _starts: Counter[int] = field(default_factory=Counter)

    def connection(self) -> Connection:
        return Connection(self.port, self.context)

    def call(self, method: str, path: str, body: dict[str, object] | None = None) -> object:
        """One request through the shared port, retried while the hub is unavailable."""
        conn = self.connection()
        try:
            for _ in range(60):
                with contextlib.suppress(*FAILURES):
                    code, answer = conn.call(method, path, body)
                    if code < 500:
                        return answer
                time.sleep(0.5)
        finally:
            conn.close()
        pytest.fail(f"{method} {path}: the hub stayed unavailable")

    # Replicas.

    def alive(self) -> list[HubProcess]:
        return [hub for hub in self.replicas if hub.proc is not None and hub.proc.poll() is None]

    def holder(self, lease: str) -> HubProcess | None:
        """The live replica holding ``lease`` (its log names the identity it runs as)."""
        answer = self.call("GET", lease)
        assert isinstance(answer, dict)
        identity = str(answer.get("spec", {}).get("holderIdentity") or "")
        for hub in self.alive():
            if identity and f"as {identity}" in hub.log():
                return hub
        return None

    def leading(self) -> HubProcess:
        """The replica running the OCM hub controllers (which keep the fleet Available)
        once it also runs the server's."""
        found: list[HubProcess] = []

        def settled() -> bool:
            hub = self.holder(HUB_LEASE)
            if hub is None:
                return False
            found[:] = [hub]
            return True

        wait_for("a replica leading the hub controllers", settled)
        return found[0]

    def restart(self, hub: HubProcess) -> None:
        """Start a killed replica again, on the shared port and data directory, with a
        log of its own (the identity it runs as is new)."""
        index = self.replicas.index(hub)
        self._starts[index] += 1
        hub.log_path = self.workdir / f"replica-{index}.{self._starts[index]}.log"
        hub.start(timeout=120)

    def metrics(self, hub: HubProcess) -> str:
        """``hub``'s own /metrics: connections to the shared port until the kernel gives
        one to its process."""
        assert hub.proc is not None
        pids = [h.proc.pid for h in self.alive() if h.proc is not None]
        for _ in range(200):
            conn = self.connection()
            try:
                code, text = conn.call("GET", "/version")
                if code == 200 and conn.conn is not None and owner(conn.conn, pids) == hub.proc.pid:
                    code, text = conn.call("GET", "/metrics")
                    assert code == 200, text
                    return str(text)
            except FAILURES:
                time.sleep(0.1)
            finally:
                conn.close()
        pytest.fail(f"no connection reached replica {hub.proc.pid}")

    def requests(self, verb: str) -> dict[int, Counter[str]]:
        """apiserver_request_total of ``verb`` per resource, for each live replica's pid."""
        return {
            hub.proc.pid: requests_by_verb(self.metrics(hub), verb)
            for hub in self.alive()
            if hub.proc is not None
        }

    def etcd_members_used(self) -> list[EtcdMember]:
        """The etcd members some live replica holds a connection to."""
        pids = [hub.proc.pid for hub in self.alive() if hub.proc is not None]
        ports = connected_ports(pids)
        return [m for m in self.etcd.members if m.client_port in ports]

    def check_controllers_work(self, name: str) -> None:
        """The OCM hub controllers accept a new cluster and the server's finalize a
        deleted namespace: whoever leads them now, they run."""
        cluster = {
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": name},
            "spec": {"hubAcceptsClient": True},
        }
        path = "/apis/cluster.open-cluster-management.io/v1/managedclusters"
        self.call("POST", path, cluster)

        def accepted() -> bool:
            found = self.call("GET", f"{path}/{name}")
            assert isinstance(found, dict)
            return conditions.is_true(
                found.get("status", {}).get("conditions"), wellknown.CLUSTER_HUB_ACCEPTED
            )

        wait_for(f"the hub controllers to accept {name}", accepted)
        self.call("DELETE", f"{path}/{name}")
        namespace = f"{name}-gone"
        self.call("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        self.call("DELETE", f"/api/v1/namespaces/{namespace}")
        wait_for(
            f"namespace {namespace} finalized",
            lambda: _status(self.connection(), f"/api/v1/namespaces/{namespace}") == 404,
        )

    # The fleet.

    def renewed_since(self, wall: float) -> list[str]:
        """The fleet's clusters whose agent has renewed its lease since ``wall``
        (time.time()): they outlived the fault."""
        renewed = []
        for name in self.clusters:
            lease = self.call(
                "GET",
                f"/apis/coordination.k8s.io/v1/namespaces/{name}/leases/managed-cluster-lease",
            )
            assert isinstance(lease, dict)
            stamp = lease.get("spec", {}).get("renewTime")
            if stamp and timefmt.parse_time(stamp).timestamp() > wall:
                renewed.append(name)
        return renewed

    def fleet_available(self, since: float) -> bool:
        assert self.availability is not None
        return self.availability.all_available_after(since)

    def check_fleet_running(self) -> None:
        assert self.fleet is not None
        assert self.fleet.process.poll() is None, "\n".join(self.fleet.lines[-40:])


def start_replicas(workdir: Path, etcd: EtcdCluster) -> tuple[list[HubProcess], int]:
    """Two replicas on the shared port. Each names every member, but a replica talks to
    the first that answers: one is given a follower first and the other the leader, so
    that killing either kind of member breaks a replica's connection to etcd."""
    port = free_port()
    leader = etcd.leader()
    first = [next(m for m in etcd.members if m is not leader), leader]
    prefix = f"/ha-{uuid.uuid4().hex[:8]}"
    hubs = []
    for member in first:
        others = [m.endpoint for m in etcd.members if m is not member]
        url = "etcd://" + ",".join([member.endpoint, *others])
        args = ["--storage", url, "--etcd-prefix", prefix, "--reuse-port"]
        hubs.append(HubProcess(workdir / "hub", port=port, extra_args=args))
    for index, hub in enumerate(hubs):
        hub.log_path = workdir / f"replica-{index}.0.log"
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda hub: hub.start(timeout=120), hubs))
    return hubs, port


def _status(conn: Connection, path: str) -> int:
    try:
        return conn.call("GET", path)[0]
    except FAILURES:
        return 0
    finally:
        conn.close()


def connected_ports(pids: list[int]) -> set[int]:
    """The remote loopback ports the processes ``pids`` have established TCP
    connections to (/proc/net/tcp, matched to their sockets by inode)."""
    inodes: set[str] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    link = os.readlink(fd)
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01" and fields[9] in inodes:  # 01: ESTABLISHED
            ports.add(int(fields[2].split(":")[1], 16))
    return ports


def total(counts: dict[int, Counter[str]]) -> int:
    return sum(sum(c.values()) for c in counts.values())


@contextlib.contextmanager
def running_ha_hub(workdir: Path) -> Iterator[HaHub]:
    etcd = start_cluster(workdir / "etcd")
    hubs: list[HubProcess] = []
    ha: HaHub | None = None
    try:
        hubs, port = start_replicas(workdir, etcd)
        info = kubeconfig.load_kubeconfig(hubs[0].kubeconfig)
        ha = HaHub(etcd, hubs, port, kubeconfig.client_ssl_context(info), workdir)
        yield from _with_fleet(ha)
    finally:
        for hub in hubs:
            hub.stop()
            print(f"--- {hub.log_path.name}\n{hub.log()[-3000:]}")  # shown if a test failed
        etcd.stop()
        if ha is not None and ha.fleet is not None:
            print("--- pyocm sim\n" + "\n".join(ha.fleet.lines[-20:]))


def _with_fleet(ha: HaHub) -> Iterator[HaHub]:
    ha.call("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    writer = Writer(ha.connection(), namespace=NAMESPACE, prefix="acked")
    writer.create()
    ha.fleet = Running(
        "sim", "--clusters", str(CLUSTERS), "--kubeconfig", str(ha.replicas[0].kubeconfig),
        "--auto-accept", "--join-rate", "20", "--lease-duration", str(LEASE_SECONDS),
        "--healthcheck-period", "10", "--prefix", "ha-",
    )  # fmt: skip
    try:
        ha.fleet.wait_for(f"all {CLUSTERS} clusters are available", timeout=180)
        ha.clusters = [f"ha-{index}" for index in range(1, CLUSTERS + 1)]
        ha.availability = Availability(ha.connection(), ha.clusters)
        ha.availability.start()
        start = time.monotonic()
        wait_for("the hub to see every cluster Available", lambda: ha.fleet_available(start))
        ha.writer = writer
        writer.start()
        ha.informers = total(ha.requests("LIST"))
        yield ha
    finally:
        for probe in (ha.writer, ha.availability):
            if probe is not None:
                probe.stop()
        ha.fleet.stop()
