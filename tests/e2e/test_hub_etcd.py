"""``pyocm hub --storage etcd://...``: a hub whose objects live in etcd (the session's
etcd, tests/etcd.py, under a prefix of its own). kubectl and pyocm create, list and watch
through it; the hub process restarts on the same etcd and every object comes back with
its resourceVersion, which etcd, not the hub, assigned."""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from pyocm.testing import HubProcess
from tests.cli import pyocm
from tests.e2e.test_cli_watch import managed_cluster
from tests.etcd import EtcdServer, etcd_server

__all__ = ["etcd_server"]

NAMESPACE = "etcd-e2e"


def kubectl(hub: HubProcess, *args: str, manifest: dict[str, object] | None = None) -> str:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(hub.kubeconfig), *args],
        input=json.dumps(manifest) if manifest else None,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def get(hub: HubProcess, *args: str) -> Any:
    return json.loads(kubectl(hub, "get", *args, "-o", "json"))


def in_etcd(server: EtcdServer, key: str) -> list[dict[str, Any]]:
    """The key as etcd holds it, read past the hub (etcd's JSON gateway)."""
    body = json.dumps({"key": base64.b64encode(key.encode()).decode()}).encode()
    request = urllib.request.Request(f"http://{server.endpoint}/v3/kv/range", data=body)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return list(json.loads(answer.read()).get("kvs", []))


def configmap_versions(hub: HubProcess) -> dict[str, str]:
    items = get(hub, "configmaps", "-n", NAMESPACE)["items"]
    return {item["metadata"]["name"]: item["metadata"]["resourceVersion"] for item in items}


def watched(hub: HubProcess, since: str) -> list[tuple[str, str, str]]:
    """(type, name, resourceVersion) of every change to the namespace's ConfigMaps after
    ``since``, from a watch that ends after two seconds."""
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=1&resourceVersion={since}"
    lines = kubectl(hub, "get", "--raw", f"{path}&timeoutSeconds=2").splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return [
        (e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
        for e in events
    ]


def test_a_hub_on_etcd_keeps_objects_and_resource_versions_across_a_restart(
    etcd_server: EtcdServer, tmp_path: Path
) -> None:
    prefix = f"/e2e-{uuid.uuid4().hex}"
    args = ["--no-controllers", "--storage", etcd_server.url, "--etcd-prefix", prefix]
    hub = HubProcess(tmp_path / "hub", extra_args=args).start()
    try:
        kubectl(hub, "create", "namespace", NAMESPACE)
        kubectl(hub, "create", "configmap", "one", "-n", NAMESPACE, "--from-literal=a=1")
        first = get(hub, "configmap", "one", "-n", NAMESPACE)["metadata"]["resourceVersion"]
        kubectl(hub, "patch", "configmap", "one", "-n", NAMESPACE, "-p", '{"data":{"a":"2"}}')
        kubectl(hub, "create", "configmap", "two", "-n", NAMESPACE, "--from-literal=b=1")
        kubectl(hub, "apply", "-f", "-", manifest=managed_cluster("etcd-cluster"))
        versions = configmap_versions(hub)
        assert sorted(versions) == ["one", "two"]
        # A watch from the first version replays the later changes, in order.
        assert watched(hub, first) == [
            ("MODIFIED", "one", versions["one"]),
            ("ADDED", "two", versions["two"]),
        ]
        # The objects are in etcd, under the prefix; etcd's revision is their version.
        stored = in_etcd(etcd_server, f"{prefix}/registry/core/configmaps/{NAMESPACE}/one")
        assert [kv["mod_revision"] for kv in stored] == [versions["one"]]
        assert not (hub.data_dir / "state.db").exists()
        clusters = pyocm("get", "clusters", "--kubeconfig", str(hub.kubeconfig))
        assert clusters.returncode == 0, clusters.stderr
        assert [line.split()[0] for line in clusters.stdout.splitlines()[1:]] == ["etcd-cluster"]

        assert hub.stop() == 0
        hub.start()

        assert configmap_versions(hub) == versions
        one = get(hub, "configmap", "one", "-n", NAMESPACE)
        assert one["data"] == {"a": "2"}
        assert [c["metadata"]["name"] for c in get(hub, "managedclusters")["items"]] == [
            "etcd-cluster"
        ]
        # Writes go on from etcd's revision, and a watch sees them.
        listed = kubectl(hub, "get", "--raw", f"/api/v1/namespaces/{NAMESPACE}/configmaps")
        since = json.loads(listed)["metadata"]["resourceVersion"]
        kubectl(hub, "patch", "configmap", "two", "-n", NAMESPACE, "-p", '{"data":{"b":"2"}}')
        changed = watched(hub, since)
        assert [(kind, name) for kind, name, _ in changed] == [("MODIFIED", "two")]
        assert int(changed[0][2]) > max(int(version) for version in versions.values())
    finally:
        code = hub.stop()
    assert code == 0, hub.log()[-4000:]
