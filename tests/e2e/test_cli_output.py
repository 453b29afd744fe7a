"""``pyocm get clusters|clustersets`` with kubectl's output conventions, ``pyocm delete
clusterset`` of a set that still has clusters, the local hub ``pyocm up`` runs found without
a kubeconfig, and ``pyocm sim``'s closing line; each through the real CLI."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from pyocm.pki.kubeconfig import build_kubeconfig, load_kubeconfig, write_kubeconfig
from pyocm.testing import HubProcess
from tests.cli import Running, pyocm

SET_LABEL = "cluster.open-cluster-management.io/clusterset"
GROUP = "cluster.open-cluster-management.io"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers (set status, the default set)."""
    return ocm_hub


def kubectl_apply(hub: HubProcess, manifest: dict[str, object]) -> None:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(hub.kubeconfig), "apply", "-f", "-"],
        input=json.dumps(manifest),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def cluster(hub: HubProcess, name: str, *, clusterset: str) -> None:
    kubectl_apply(
        hub,
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {SET_LABEL: clusterset}},
            "spec": {
                "hubAcceptsClient": True,
                "managedClusterClientConfigs": [{"url": f"https://{name}.example:6443"}],
            },
        },
    )


def test_get_clusters_prints_kubectls_formats(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    name = f"out-{unique}"
    cluster(hub, name, clusterset=f"set-{unique}")

    names = pyocm("get", "clusters", "-o", "name", *k)
    assert names.returncode == 0, names.stderr
    assert f"managedcluster.{GROUP}/{name}" in names.stdout.splitlines()

    listed = json.loads(pyocm("get", "clusters", "-o", "json", *k).stdout)
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    item = next(i for i in listed["items"] if i["metadata"]["name"] == name)
    assert (item["apiVersion"], item["kind"]) == (f"{GROUP}/v1", "ManagedCluster")
    as_yaml = yaml.safe_load(pyocm("get", "clusters", "--output", "yaml", *k).stdout)
    assert as_yaml["kind"] == "List"
    assert name in [i["metadata"]["name"] for i in as_yaml["items"]]

    wide = pyocm("get", "clusters", "-o", "wide", *k).stdout.splitlines()
    assert wide[0].split()[-4:] == ["CLUSTERSET", "CPU", "MEMORY", "URL"]
    row = next(line.split() for line in wide if line.split()[0] == name)
    assert row[-2:] == [f"set-{unique}", f"https://{name}.example:6443"]

    bare = pyocm("get", "clusters", "--no-headers", *k).stdout.splitlines()
    assert all("NAME" not in line for line in bare)
    assert name in [line.split()[0] for line in bare]
    headed = pyocm("get", "clusters", *k).stdout.splitlines()
    assert headed[0].split()[:2] == ["NAME", "ACCEPTED"]

    wrong = pyocm("get", "clusters", "-o", "xml", *k)
    assert wrong.returncode == 2 and "--output must be one of" in wrong.stderr


def test_get_clustersets_prints_kubectls_formats(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    name = f"fmt-{unique}"
    assert pyocm("create", "clusterset", name, *k).returncode == 0
    assert pyocm("clusterset", "bind", name, "--namespace", "default", *k).returncode == 0

    names = pyocm("get", "clustersets", "-o", "name", *k)
    assert names.returncode == 0, names.stderr
    assert f"managedclusterset.{GROUP}/{name}" in names.stdout.splitlines()

    listed = json.loads(pyocm("get", "clustersets", "-o", "json", *k).stdout)
    assert listed["kind"] == "List"
    item = next(i for i in listed["items"] if i["metadata"]["name"] == name)
    assert (item["apiVersion"], item["kind"]) == (f"{GROUP}/v1beta2", "ManagedClusterSet")
    assert yaml.safe_load(pyocm("get", "clustersets", "-o", "yaml", *k).stdout)["kind"] == "List"

    table = pyocm("get", "clustersets", "-o", "table", *k).stdout.splitlines()
    assert table[0].split() == ["NAME", "BOUND", "NAMESPACES", "STATUS", "MANAGED", "NAMESPACES"]
    assert next(line for line in table if line.split()[0] == name).split()[1] == "default"
    wide = pyocm("get", "clustersets", "-o", "wide", "--no-headers", *k).stdout.splitlines()
    row = next(line.split() for line in wide if line.split()[0] == name)
    assert "ExclusiveClusterSetLabel" in row
    assert all("NAME" not in line for line in wide)

    tree = pyocm("get", "clustersets", *k).stdout  # clusteradm's default stays the default
    assert tree.splitlines()[0] == "<ManagedClusterSet>"


def test_deleting_a_set_with_clusters_in_it_is_refused_unless_forced(
    hub: HubProcess, unique: str
) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    name, members = f"full-{unique}", [f"m1-{unique}", f"m2-{unique}"]
    assert pyocm("create", "clusterset", name, *k).returncode == 0
    for member in members:
        cluster(hub, member, clusterset=name)

    refused = pyocm("delete", "clusterset", name, *k)
    assert refused.returncode == 1
    assert f"clusterset {name} still has 2 clusters: {', '.join(members)}" in refused.stderr
    assert "--force" in refused.stderr and f"--clusters {','.join(members)}" in refused.stderr
    assert (
        f"managedclusterset.{GROUP}/{name}" in pyocm("get", "clustersets", "-o", "name", *k).stdout
    )

    forced = pyocm("delete", "clusterset", name, "--force", *k)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == f"clusterset {name} deleted"
    assert f"2 clusters keep the label {SET_LABEL}={name}" in forced.stderr
    assert f"/{name}\n" not in pyocm("get", "clustersets", "-o", "name", *k).stdout

    empty = f"empty-{unique}"
    assert pyocm("create", "clusterset", empty, *k).returncode == 0
    quiet = pyocm("delete", "clusterset", empty, *k)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_the_running_up_hub_is_found_without_a_kubeconfig(tmp_path: Path, hub: HubProcess) -> None:
    env = {
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "PYOCM_DATA_DIR": "",
        "KUBECONFIG": "",
        "KUBERNETES_SERVICE_HOST": "",
    }
    up = Running("up", "--clusters", "1", "--listen", "127.0.0.1:0", env=env)
    try:
        url = up.wait_for(r"hub listening on ", timeout=120).split()[-1]
        up.wait_for("Press Ctrl-C", timeout=120)
        # A kubeconfig that 'pyocm hub' left behind, newer than up's and naming the same
        # address (both default to 127.0.0.1:6443) but another hub's CA: it must lose.
        other = load_kubeconfig(hub.kubeconfig)
        stale = build_kubeconfig(
            server=url, ca_pem=other.ca_pem, cert_pem=other.cert_pem, key_pem=other.key_pem
        )
        write_kubeconfig(tmp_path / "xdg" / "pyocm" / "hub" / "admin.kubeconfig", stale)

        found = pyocm("get", "clusters", env=env)
        assert found.returncode == 0, found.stderr
        assert [line.split()[0] for line in found.stdout.splitlines()] == ["NAME", "cluster1"]
    finally:
        assert up.stop(signal.SIGINT, timeout=60) == 0

    gone = pyocm("get", "clusters", env=env)
    assert gone.returncode == 1
    up_kubeconfig = tmp_path / "xdg" / "pyocm" / "up" / "hub" / "admin.kubeconfig"
    assert f"{up_kubeconfig} (its hub does not answer)" in gone.stderr
    assert "'pyocm hub' or 'pyocm up'" in gone.stderr


def test_sim_announces_its_fleet_available_once(hub: HubProcess, unique: str) -> None:
    process = Running(
        "sim", "--clusters", "2", "--auto-accept", "--prefix", f"{unique}-",
        "--kubeconfig", str(hub.kubeconfig),
    )  # fmt: skip
    try:
        process.wait_for(r"all 2 clusters are available; start to available: n=2", timeout=90)
    finally:
        code = process.stop(signal.SIGINT)
    assert code == 0, "\n".join(process.lines[-20:])
    assert sum("start to available: n=2" in line for line in process.lines) == 1, process.lines
    assert process.lines[-1] == "pyocm sim stopped"
