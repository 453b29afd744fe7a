"""Workload and service kinds through a real hub process and a real kubectl (the image's
``/usr/bin/kubectl``, which runs kubectl 1.30 against a server reporting 1.30): apply,
get (kube's table columns), scale, validation errors, the status split, generation,
server-side apply by two managers, garbage collection, and unique cluster IPs that a
deleted namespace gives back and a restarted hub still knows."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pyocm.testing import Client, HubProcess
from tests.support import eventually

pytestmark = pytest.mark.kubectl
KUBECTL = "/usr/bin/kubectl"
Obj = dict[str, Any]


def kubectl(
    hub: HubProcess, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [KUBECTL, f"--kubeconfig={hub.kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"},
    )
    if check:
        assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result


def get_json(hub: HubProcess, *args: str) -> Obj:
    found: Obj = json.loads(kubectl(hub, "get", *args, "-o", "json").stdout)
    return found


@pytest.fixture
def ns(hub: HubProcess, unique: str) -> str:
    kubectl(hub, "create", "namespace", unique)
    return unique


APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports: [{{containerPort: 80}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80}}]
---
apiVersion: batch/v1
kind: Job
metadata: {{name: pi, namespace: {ns}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: pi, image: perl, command: [perl, -e, "print 1"]}}]
"""


def header(table: str) -> list[str]:
    return table.splitlines()[0].split()


def test_apply_get_and_reapply(hub: HubProcess, ns: str) -> None:
    out = kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns)).stdout
    assert out.split("\n")[:3] == [
        "deployment.apps/web created",
        "service/web created",
        "job.batch/pi created",
    ]
    assert "unchanged" in kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns)).stdout

    assert header(kubectl(hub, "-n", ns, "get", "deploy").stdout) == [
        "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE",
    ]  # fmt: skip
    assert header(kubectl(hub, "-n", ns, "get", "svc").stdout) == [
        "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE",
    ]  # fmt: skip
    assert header(kubectl(hub, "-n", ns, "get", "job").stdout) == [
        "NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE",
    ]  # fmt: skip
    listing = kubectl(hub, "-n", ns, "get", "deploy,po,svc,job").stdout
    assert "deployment.apps/web   0/1" in listing and "job.batch/pi   Running   0/1" in listing
    assert "80/TCP" in listing
    everything = kubectl(hub, "-n", ns, "get", "all").stdout
    assert all(n in everything for n in ("deployment.apps/web", "service/web", "job.batch/pi"))

    deployment = get_json(hub, "-n", ns, "deploy", "web")
    assert deployment["spec"]["replicas"] == 1 and deployment["metadata"]["generation"] == 1
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": "25%",
        "maxUnavailable": "25%",
    }
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert (
        container["imagePullPolicy"] == "IfNotPresent"
        and container["ports"][0]["protocol"] == "TCP"
    )
    service = get_json(hub, "-n", ns, "svc", "web")["spec"]
    assert ipaddress.ip_address(service["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    assert (
        service["clusterIPs"] == [service["clusterIP"]] and service["ports"][0]["targetPort"] == 80
    )
    job = get_json(hub, "-n", ns, "job", "pi")
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi"


def test_scale_and_generation(hub: HubProcess, ns: str) -> None:
    kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns))
    assert "scaled" in kubectl(hub, "-n", ns, "scale", "deploy", "web", "--replicas=3").stdout
    scaled = get_json(hub, "-n", ns, "deploy", "web")
    assert (scaled["spec"]["replicas"], scaled["metadata"]["generation"]) == (3, 2)
    scale = json.loads(
        kubectl(hub, "get", "--raw", f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale").stdout
    )
    assert (scale["kind"], scale["apiVersion"], scale["spec"]) == (
        "Scale",
        "autoscaling/v1",
        {"replicas": 3},
    )
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}

    kubectl(hub, "-n", ns, "label", "deploy", "web", "tier=front")
    kubectl(hub, "-n", ns, "annotate", "deploy", "web", "note=hi")
    assert get_json(hub, "-n", ns, "deploy", "web")["metadata"]["generation"] == 2, (
        "metadata changes do not move the generation"
    )
    kubectl(hub, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:1.26")
    assert get_json(hub, "-n", ns, "deploy", "web")["metadata"]["generation"] == 3


def test_status_goes_through_its_subresource_only(hub: HubProcess, ns: str) -> None:
    kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns))
    patch = '{"status":{"replicas":3,"readyReplicas":2}}'
    out = kubectl(hub, "-n", ns, "patch", "deploy", "web", "--type=merge", "-p", patch).stdout
    assert "no change" in out
    assert get_json(hub, "-n", ns, "deploy", "web")["status"] == {}
    kubectl(
        hub, "-n", ns, "patch", "deploy", "web", "--subresource=status", "--type=merge", "-p", patch
    )
    written = get_json(hub, "-n", ns, "deploy", "web")
    assert written["status"] == {"replicas": 3, "readyReplicas": 2}
    assert written["metadata"]["generation"] == 1
    spec_through_status = '{"spec":{"replicas":7}}'
    kubectl(
        hub,
        "-n",
        ns,
        "patch",
        "deploy",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        spec_through_status,
    )
    assert get_json(hub, "-n", ns, "deploy", "web")["spec"]["replicas"] == 1
    assert "2/1" in kubectl(hub, "-n", ns, "get", "deploy", "web").stdout


INVALID = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: bad, namespace: {ns}}}
spec:
  template:
    metadata: {{labels: {{app: bad}}}}
    spec:
      containers: [{{name: web}}]
"""


def test_invalid_deployment_is_refused_in_kubes_words(hub: HubProcess, ns: str) -> None:
    result = kubectl(hub, "apply", "-f", "-", stdin=INVALID.format(ns=ns), check=False)
    assert result.returncode != 0
    assert result.stderr.splitlines() == [
        'The Deployment "bad" is invalid: ',
        "* spec.selector: Required value",
        '* spec.template.metadata.labels: Invalid value: {"app":"bad"}: `selector` does not match template `labels`',
        "* spec.template.spec.containers[0].image: Required value",
    ]
    kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns))
    moved = '{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}'
    result = kubectl(
        hub, "-n", ns, "patch", "deploy", "web", "--type=merge", "-p", moved, check=False
    )
    assert result.stderr.strip() == (
        'The Deployment "web" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"x"}}: field is immutable'
    )
    job_always = (
        APP.format(ns=ns).split("---")[2].replace("restartPolicy: Never", "restartPolicy: Always")
    )
    result = kubectl(
        hub, "apply", "-f", "-", stdin=job_always.replace("name: pi,", "name: pi2,"), check=False
    )
    assert (
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
        in result.stderr
    )


SSA_ALICE = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: shared, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: shared}}}}
  template:
    metadata: {{labels: {{app: shared}}}}
    spec:
      containers:
      - name: main
        image: nginx:1.25
        env: [{{name: A, value: "1"}}]
"""
SSA_BOB = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: shared, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: shared}}}}
  template:
    metadata: {{labels: {{app: shared}}}}
    spec:
      containers:
      - name: main
        env: [{{name: B, value: "2"}}]
      - name: sidecar
        image: busybox
"""


def test_server_side_apply_by_two_managers(hub: HubProcess, ns: str) -> None:
    apply = ("apply", "--server-side", "-f", "-")
    kubectl(hub, *apply, "--field-manager=alice", stdin=SSA_ALICE.format(ns=ns))
    kubectl(hub, *apply, "--field-manager=bob", stdin=SSA_BOB.format(ns=ns))
    merged = get_json(hub, "-n", ns, "deploy", "shared", "--show-managed-fields")
    containers = {c["name"]: c for c in merged["spec"]["template"]["spec"]["containers"]}
    assert (
        containers["main"]["image"] == "nginx:1.25" and containers["sidecar"]["image"] == "busybox"
    )
    assert {e["name"] for e in containers["main"]["env"]} == {"A", "B"}, "env merged by name"
    managers = {(e["manager"], e["operation"]) for e in merged["metadata"]["managedFields"]}
    assert managers == {("alice", "Apply"), ("bob", "Apply")}

    takeover = SSA_BOB.format(ns=ns).replace(
        "spec:\n  selector", "spec:\n  replicas: 5\n  selector", 1
    )
    refused = kubectl(hub, *apply, "--field-manager=bob", stdin=takeover, check=False)
    assert refused.returncode != 0
    assert (
        'Apply failed with 1 conflict: conflict with "alice" using apps/v1: .spec.replicas'
        in refused.stderr
    )
    kubectl(hub, *apply, "--field-manager=bob", "--force-conflicts", stdin=takeover)
    assert get_json(hub, "-n", ns, "deploy", "shared")["spec"]["replicas"] == 5


def test_dependents_are_collected_with_their_deployment(hub: HubProcess, ns: str) -> None:
    kubectl(hub, "apply", "-f", "-", stdin=APP.format(ns=ns))
    uid = get_json(hub, "-n", ns, "deploy", "web")["metadata"]["uid"]
    owner = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": uid,
        "controller": True,
    }
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": ns, "ownerReferences": [owner]},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
            },
        },
    }
    kubectl(hub, "apply", "-f", "-", stdin=json.dumps(replica_set))
    kubectl(hub, "-n", ns, "delete", "deploy", "web")
    deadline = time.monotonic() + 30
    while "web-1" in kubectl(hub, "-n", ns, "get", "rs", "-o", "name").stdout:
        assert time.monotonic() < deadline, "the ReplicaSet outlived its Deployment"
        time.sleep(0.2)


async def test_cluster_ips_are_unique_under_concurrent_creates(admin: Client, unique: str) -> None:
    code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": unique}})
    assert code == 201

    async def create(i: int) -> Obj:
        body = {
            "metadata": {"name": f"s{i}"},
            "spec": {"type": "NodePort", "ports": [{"port": 80}]},
        }
        code, made = await admin.post(f"/api/v1/namespaces/{unique}/services", body)
        assert code == 201, made
        return made["spec"]

    specs = await asyncio.gather(*(create(i) for i in range(20)))
    ips = {s["clusterIP"] for s in specs}
    node_ports = {s["ports"][0]["nodePort"] for s in specs}
    assert len(ips) == len(node_ports) == 20
    assert all(30000 <= p <= 32767 for p in node_ports)
    taken = specs[0]["clusterIP"]
    body = {"metadata": {"name": "dup"}, "spec": {"clusterIP": taken, "ports": [{"port": 80}]}}
    code, err = await admin.post(f"/api/v1/namespaces/{unique}/services", body)
    assert code == 422
    assert err["message"] == (
        f'Service "dup" is invalid: spec.clusterIPs: Invalid value: ["{taken}"]: '
        f"failed to allocate IP {taken}: provided IP is already allocated"
    )


def test_services_keep_what_they_were_given(hub: HubProcess, ns: str) -> None:
    kubectl(hub, "-n", ns, "create", "service", "nodeport", "front", "--tcp=80:8080")
    given = get_json(hub, "-n", ns, "svc", "front")["spec"]
    kubectl(hub, "-n", ns, "label", "svc", "front", "tier=front")
    # A replace from a file without the allocated values keeps them, as kube's does.
    edited = get_json(hub, "-n", ns, "svc", "front")
    for key in ("clusterIP", "clusterIPs"):
        del edited["spec"][key]
    del edited["spec"]["ports"][0]["nodePort"]
    kubectl(hub, "replace", "-f", "-", stdin=json.dumps(edited))
    kept = get_json(hub, "-n", ns, "svc", "front")["spec"]
    assert kept["clusterIPs"] == given["clusterIPs"]
    assert kept["ports"][0]["nodePort"] == given["ports"][0]["nodePort"]
    table = kubectl(hub, "-n", ns, "get", "svc", "front").stdout
    assert f"80:{given['ports'][0]['nodePort']}/TCP" in table and "NodePort" in table


async def create_service(admin: Client, namespace: str, name: str, spec: Obj) -> tuple[int, Obj]:
    body = {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}], **spec}}
    code, made = await admin.post(f"/api/v1/namespaces/{namespace}/services", body)
    return code, made


async def test_deleting_a_namespace_frees_its_services_ips(admin: Client, unique: str) -> None:
    for namespace in (unique, f"{unique}-next"):
        code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": namespace}})
        assert code == 201
    code, made = await create_service(admin, unique, "web", {"type": "NodePort"})
    assert code == 201, made
    ip, port = made["spec"]["clusterIP"], made["spec"]["ports"][0]["nodePort"]
    wanted = {"type": "NodePort", "clusterIP": ip, "ports": [{"port": 80, "nodePort": port}]}
    code, refused = await create_service(admin, f"{unique}-next", "web", wanted)
    assert code == 422 and "provided IP is already allocated" in refused["message"]
    code, _ = await admin.delete(f"/api/v1/namespaces/{unique}")
    assert code == 200

    async def gone() -> bool:
        code, _ = await admin.get(f"/api/v1/namespaces/{unique}")
        return code == 404

    await eventually(gone)
    code, again = await create_service(admin, f"{unique}-next", "web", wanted)
    assert code == 201, again
    assert again["spec"]["clusterIPs"] == [ip] and again["spec"]["ports"][0]["nodePort"] == port


async def test_a_restarted_hub_knows_which_ips_are_taken(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub").start()
    try:
        async with Client(hub.kubeconfig) as admin:
            code, made = await create_service(admin, "default", "web", {"type": "NodePort"})
            assert code == 201, made
    finally:
        assert hub.stop() == 0
    ip, port = made["spec"]["clusterIP"], made["spec"]["ports"][0]["nodePort"]
    hub = HubProcess(tmp_path / "hub", port=hub.port).start()
    try:
        async with Client(hub.kubeconfig) as admin:
            code, refused = await create_service(admin, "default", "other", {"clusterIP": ip})
            assert code == 422 and "provided IP is already allocated" in refused["message"]
            wanted = {"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}
            code, refused = await create_service(admin, "default", "other", wanted)
            assert code == 422 and "provided port is already allocated" in refused["message"]
            code, _ = await admin.delete("/api/v1/namespaces/default/services/web")
            assert code == 200
            code, again = await create_service(
                admin, "default", "other", {**wanted, "clusterIP": ip}
            )
            assert code == 201, again
    finally:
        assert hub.stop() == 0
