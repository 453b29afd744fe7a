"""Two ``pyocm hub`` replicas on one etcd behind one port (``--reuse-port``), as real
processes sharing a data directory: they start together on an empty etcd, the kernel
spreads connections over both, a write through one is read and watched through the
other, the controllers run in one of them only, and when that one is killed the other
takes their Lease and goes on; Services created through both at once get distinct
cluster IPs and node ports.

The test tells the replicas apart by which process holds the server side of each of
its connections (/proc), so every check goes through the one shared port."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pyocm.pki import csr, keys, kubeconfig
from pyocm.testing import HubProcess
from tests.cli import pyocm
from tests.etcd import EtcdServer, etcd_server, free_port

__all__ = ["etcd_server"]

Obj = dict[str, Any]
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
LEADING = re.compile(
    r"leading the server's controllers \(Lease kube-system/kube-controller-manager\)"
)


class Replica:
    """One replica: its process and a connection the kernel gave to it."""

    def __init__(self, hub: HubProcess, *, pid: int | None = None) -> None:
        self.hub = hub
        self._pid = pid
        self.conn: http.client.HTTPSConnection | None = None
        #: More connections the kernel gave to it.
        self.extra: list[http.client.HTTPSConnection] = []

    @property
    def pid(self) -> int:
        if self._pid is not None:
            return self._pid
        assert self.hub.proc is not None
        return self.hub.proc.pid

    def call(self, method: str, path: str, body: Obj | None = None) -> tuple[int, Any]:
        assert self.conn is not None
        return call(self.conn, method, path, body)

    def leads(self) -> bool:
        return LEADING.search(self.hub.log()) is not None

    def reconciled(self, controller: str) -> int:
        """How many keys this process's ``controller`` reconciled (its /metrics)."""
        code, text = self.call("GET", "/metrics")
        assert code == 200
        pattern = (
            rf'^controller_runtime_reconcile_total\{{controller="{controller}",[^}}]*\}} (\S+)'
        )
        return int(sum(float(m) for m in re.findall(pattern, text, re.MULTILINE)))


def call(
    conn: http.client.HTTPSConnection, method: str, path: str, body: Obj | None = None
) -> tuple[int, Any]:
    """(status, decoded JSON body), or the text of a watch's stream or of /metrics."""
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    raw = answer.read().decode()
    if "json" in (answer.getheader("Content-Type") or "") and "watch=1" not in path:
        return answer.status, json.loads(raw)
    return answer.status, raw


def owner(conn: http.client.HTTPSConnection, pids: list[int]) -> int | None:
    """The process among ``pids`` holding the server side of ``conn``."""
    assert conn.sock is not None
    client_port = conn.sock.getsockname()[1]
    inode = ""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[2].split(":")[1], 16) == client_port:
            inode = fields[9]
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        for fd in fds.iterdir():
            try:
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


def connect(port: int, ssl_context: Any, replicas: list[Replica], *, per_replica: int = 1) -> None:
    """New connections to the shared port until each replica has ``per_replica`` more
    (the first becomes its ``conn``); the kernel decides where each one goes."""
    pids = [r.pid for r in replicas]
    wanted = {r.pid: per_replica for r in replicas}
    for _ in range(200):
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ssl_context, timeout=60)
        assert call(conn, "GET", "/version")[0] == 200
        pid = owner(conn, pids)
        replica = next((r for r in replicas if r.pid == pid), None)
        if replica is None or wanted[replica.pid] == 0:
            conn.close()
            continue
        wanted[replica.pid] -= 1
        if replica.conn is None:
            replica.conn = conn
        else:
            replica.extra.append(conn)
        if not any(wanted.values()):
            return
    pytest.fail(f"the kernel never gave every replica a connection: still wanted {wanted}")


def wait_for(what: str, check: Callable[[], bool], *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def replicas(etcd_server: EtcdServer, tmp_path: Path) -> Iterator[list[Replica]]:
    """Two replicas started at the same moment on an empty prefix of the session's etcd."""
    port = free_port()
    args = ["--storage", etcd_server.url, "--etcd-prefix", f"/ha-{uuid.uuid4().hex}"]
    hubs = [
        HubProcess(tmp_path / "hub", port=port, extra_args=[*args, "--reuse-port"])
        for _ in range(2)
    ]
    for i, hub in enumerate(hubs):
        hub.log_path = tmp_path / f"replica-{i}.log"
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda hub: hub.start(timeout=120), hubs))
    started = [Replica(hub) for hub in hubs]
    try:
        info = kubeconfig.load_kubeconfig(hubs[0].kubeconfig)
        connect(port, kubeconfig.client_ssl_context(info), started)
        yield started
    finally:
        for replica in started:
            for conn in [replica.conn, *replica.extra]:
                if conn is not None:
                    conn.close()
        codes = [hub.stop() for hub in hubs]
        for hub in hubs:
            print(hub.log()[-3000:])
        assert all(code in (0, -9) for code in codes), codes


def configmap(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}}


def test_replicas_start_together_and_serve_one_store_behind_one_port(
    replicas: list[Replica],
) -> None:
    one, two = replicas
    for replica in replicas:  # neither failed to seed or to create keys beside the other
        assert "Traceback" not in replica.hub.log()
        assert " ERROR " not in replica.hub.log()
    path = "/api/v1/namespaces/default/configmaps"
    code, listed = two.call("GET", path)
    assert code == 200
    since = listed["metadata"]["resourceVersion"]
    code, created = one.call("POST", path, configmap("written-through-one"))
    assert code == 201, created
    code, read = two.call("GET", f"{path}/written-through-one")
    assert code == 200, read
    assert read["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    code, text = two.call("GET", f"{path}?watch=1&resourceVersion={since}&timeoutSeconds=1")
    assert code == 200
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "written-through-one")
    ]
    # And the other way: one's caches (RBAC, CRD routes) follow two's writes.
    role = {
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    }
    assert (
        two.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role)[0]
        == 201
    )
    binding = {
        "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "ann"}],
    }
    assert (
        two.call(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding
        )[0]
        == 201
    )
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "ann",
            "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "configmaps"},
        },
    }
    code, answer = one.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert code == 201, answer
    assert answer["status"]["allowed"] is True
    # A CRD created through one is served by two the moment it is acknowledged.
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    code, answer = one.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, answer
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    code, answer = two.call("POST", "/apis/example.com/v1/namespaces/default/widgets", widget)
    assert code == 201, answer
    # A watch without a resourceVersion through two, sent right after a delete through
    # one, shows the object then its deletion, as kube's trailing watch cache does.
    assert one.call("DELETE", f"{path}/written-through-one")[0] == 200
    selector = "fieldSelector=metadata.name%3Dwritten-through-one"
    code, text = two.call("GET", f"{path}?watch=1&{selector}&timeoutSeconds=1")
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


def approved_csr(name: str) -> Obj:
    pem = csr.build_csr(keys.generate_private_key(), common_name=f"user-{name}", organizations=[])
    return {
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(pem).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "key encipherment", "client auth"],
        },
    }


def sign(through: Replica, name: str) -> None:
    code, created = through.call("POST", CSRS, approved_csr(name))
    assert code == 201, created
    created["status"] = {
        "conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]
    }
    code, approved = through.call("PUT", f"{CSRS}/{name}/approval", created)
    assert code == 200, approved
    wait_for(
        f"CSR {name} signed",
        lambda: bool(
            (through.call("GET", f"{CSRS}/{name}")[1].get("status") or {}).get("certificate")
        ),
    )


def finalize(through: Replica, namespace: str) -> None:
    assert through.call("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})[0] == 201
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert through.call("POST", path, configmap("content"))[0] == 201
    assert through.call("DELETE", f"/api/v1/namespaces/{namespace}")[0] == 200
    wait_for(
        f"namespace {namespace} finalized",
        lambda: through.call("GET", f"/api/v1/namespaces/{namespace}")[0] == 404,
    )


def test_the_controllers_run_in_one_replica_and_move_when_it_is_killed(
    replicas: list[Replica],
) -> None:
    wait_for("a leader", lambda: any(r.leads() for r in replicas))
    leader = next(r for r in replicas if r.leads())
    follower = next(r for r in replicas if r is not leader)
    code, lease = follower.call(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
    )
    assert code == 200, lease
    # Work asked through either replica is done by the leader, and only by it.
    sign(follower, "through-follower")
    sign(leader, "through-leader")
    finalize(follower, "gone-through-follower")
    assert leader.reconciled("csr-signer") >= 2
    assert leader.reconciled("namespace-controller") >= 1
    assert follower.reconciled("csr-signer") == 0
    assert follower.reconciled("namespace-controller") == 0
    assert follower.reconciled("garbage-collector") == 0

    leader.hub.kill()
    wait_for("the follower to take the Lease", follower.leads, timeout=60)
    code, taken = follower.call(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
    )
    assert code == 200
    assert taken["spec"]["holderIdentity"] != lease["spec"]["holderIdentity"]
    sign(follower, "after-the-leader-died")
    finalize(follower, "gone-after-the-leader-died")
    assert follower.reconciled("csr-signer") >= 1


def test_services_created_through_both_replicas_at_once_get_distinct_values(
    replicas: list[Replica], etcd_server: EtcdServer
) -> None:
    # Three more connections to each replica: eight writers, four per replica.
    info = kubeconfig.load_kubeconfig(replicas[0].hub.kubeconfig)
    connect(replicas[0].hub.port, kubeconfig.client_ssl_context(info), replicas, per_replica=3)
    writers = [r.conn for r in replicas] + [c for r in replicas for c in r.extra]
    assert len(writers) == 8

    def create(indexed: tuple[int, http.client.HTTPSConnection | None]) -> list[Obj]:
        i, conn = indexed
        assert conn is not None
        made = []
        for j in range(5):
            body = {
                "metadata": {"name": f"svc-{i}-{j}"},
                "spec": {"type": "NodePort", "ports": [{"port": 80}]},
            }
            code, created = call(conn, "POST", "/api/v1/namespaces/default/services", body)
            assert code == 201, created
            made.append(created)
        return made

    with ThreadPoolExecutor(len(writers)) as pool:
        services = [s for made in pool.map(create, enumerate(writers)) for s in made]
    ips = [s["spec"]["clusterIP"] for s in services]
    ports = [s["spec"]["ports"][0]["nodePort"] for s in services]
    assert len(set(ips)) == len(ips) == 40
    assert len(set(ports)) == len(ports) == 40

    # Every writer asks for the same node port at the same moment: one gets it. Only if
    # no Service above holds it: kube hands out 30000-30085 last, so these are free.
    asked = range(30000, 30005)
    assert not set(ports) & set(asked)
    barrier = threading.Barrier(len(writers))

    def contest(indexed: tuple[int, http.client.HTTPSConnection | None]) -> list[int]:
        i, conn = indexed
        assert conn is not None
        codes = []
        for round_ in range(5):
            body = {
                "metadata": {"name": f"asks-{i}-{round_}"},
                "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": asked[round_]}]},
            }
            barrier.wait(timeout=60)
            code, answer = call(conn, "POST", "/api/v1/namespaces/default/services", body)
            assert code in (201, 422), answer
            if code == 422:
                assert "provided port is already allocated" in answer["message"]
            codes.append(code)
        return codes

    with ThreadPoolExecutor(len(writers)) as pool:
        rounds = list(zip(*pool.map(contest, enumerate(writers)), strict=True))
    assert [codes.count(201) for codes in rounds] == [1] * 5


def children(pid: int) -> set[int]:
    """The live child processes of ``pid``."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def test_hub_replicas_runs_n_processes_on_one_port_and_replaces_one_that_dies(
    etcd_server: EtcdServer, tmp_path: Path
) -> None:
    prefix = f"/ha-{uuid.uuid4().hex}"
    args = ["--storage", etcd_server.url, "--etcd-prefix", prefix, "--replicas", "2"]
    hub = HubProcess(tmp_path / "hub", extra_args=[*args, "--no-controllers"]).start(timeout=120)
    assert hub.proc is not None
    supervisor = hub.proc.pid
    try:
        wait_for("two replicas", lambda: len(children(supervisor)) == 2)
        first = children(supervisor)
        info = kubeconfig.load_kubeconfig(hub.kubeconfig)
        assert info.server == f"https://127.0.0.1:{hub.port}"  # the replicas' one port
        # The kernel gives connections to the port to both.
        replicas = [Replica(hub, pid=pid) for pid in first]
        connect(hub.port, kubeconfig.client_ssl_context(info), replicas)
        for replica in replicas:
            assert replica.conn is not None
            replica.conn.close()
        os.kill(min(first), 9)
        wait_for(
            "the dead replica replaced",
            lambda: len(children(supervisor)) == 2 and min(first) not in children(supervisor),
        )
        wait_for("the new replica serving", lambda: hub.log().count("pyocm hub listening") == 3)
    finally:
        code = hub.stop()
    assert code == 0, hub.log()[-4000:]
    assert not children(supervisor)


def test_hub_replicas_are_refused_on_sqlite(tmp_path: Path) -> None:
    for flag in (["--replicas", "2"], ["--reuse-port"]):
        done = pyocm("hub", "--data-dir", str(tmp_path / "hub"), *flag)
        assert done.returncode == 2
        assert f"error: {flag[0]} needs --storage etcd://HOST:PORT" in done.stderr
        assert not (tmp_path / "hub").exists()
