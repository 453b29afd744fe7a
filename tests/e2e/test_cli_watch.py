"""``pyocm get clusters|clustersets -w`` as kubectl's ``get -w``: the list, then a row per
change until Ctrl-C, which ends it with exit 0; through the real CLI against a hub without
controllers, so that only the test's own writes change anything."""

from __future__ import annotations

import json
import re
import signal
import subprocess

from pyocm.testing import HubProcess
from tests.cli import Running, pyocm

GROUP = "cluster.open-cluster-management.io"


def kubectl(hub: HubProcess, *args: str, manifest: dict[str, object] | None = None) -> None:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(hub.kubeconfig), *args],
        input=json.dumps(manifest) if manifest else None,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def managed_cluster(name: str) -> dict[str, object]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name},
        "spec": {"hubAcceptsClient": True},
    }


def rows_of(watch: Running, name: str) -> list[str]:
    return [line for line in watch.out if line.split()[:1] == [name]]


def test_get_clusters_watch_prints_a_row_per_change(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    before, after = f"wb-{unique}", f"wa-{unique}"
    kubectl(hub, "apply", "-f", "-", manifest=managed_cluster(before))
    watch = Running("get", "clusters", "-w", *k, split=True)
    try:
        watch.wait_for(rf"^\s*{before}\s+true\s")  # the list
        kubectl(hub, "apply", "-f", "-", manifest=managed_cluster(after))
        watch.wait_for(rf"^\s*{after}\s+true\s")  # ADDED
        kubectl(hub, "patch", "managedcluster", after, "--type=merge",
                "-p", '{"spec":{"hubAcceptsClient":false}}')  # fmt: skip
        watch.wait_for(rf"^\s*{after}\s+false\s")  # MODIFIED
        kubectl(hub, "delete", "managedcluster", after)
        watch.wait_for(rf"^\s*{after}\s", count=3)  # DELETED
    finally:
        code = watch.stop(signal.SIGINT)
    assert code == 0, "\n".join(watch.lines)
    assert not any("Traceback" in line for line in watch.err), watch.err
    assert watch.out[0].split()[:2] == ["NAME", "ACCEPTED"], watch.out
    assert len([line for line in watch.out if line.split()[:1] == ["NAME"]]) == 1
    assert len(rows_of(watch, before)) == 1, watch.out  # listed once, never changed
    # ADDED, MODIFIED, then DELETED: kubectl shows the deleted object's last row.
    assert [line.split()[1] for line in rows_of(watch, after)] == ["true", "false", "false"]
    # Watched rows line up under the header, as kubectl's do.
    header = watch.out[0]
    assert all(line.index(after) == header.index("NAME") for line in rows_of(watch, after))
    accepted = header.index("ACCEPTED")
    assert all(line[accepted:].startswith(("true", "false")) for line in rows_of(watch, after))


def test_get_clusters_watch_by_name_and_clustersets_watch(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    name, clusterset = f"wn-{unique}", f"ws-{unique}"
    names = Running("get", "clusters", "-w", "-o", "name", *k, split=True)
    sets = Running("get", "clustersets", "-w", *k, split=True)
    try:
        # Both have listed (and so watch) once each prints what exists or says it is empty.
        sets.wait_for(r"NAME|No resources found")
        names.wait_for(rf"^managedcluster\.{GROUP}/|No resources found")
        kubectl(hub, "apply", "-f", "-", manifest=managed_cluster(name))
        names.wait_for(rf"^managedcluster\.{GROUP}/{name}$")
        created = pyocm("create", "clusterset", clusterset, *k)
        assert created.returncode == 0, created.stderr
        # A table row (the tree cannot grow a line per change).
        sets.wait_for(rf"^\s*{clusterset}\s*$")
    finally:
        codes = names.stop(signal.SIGINT), sets.stop(signal.SIGINT)
    assert codes == (0, 0), "\n".join(names.lines + sets.lines)
    assert not [line for line in names.out if not re.match(rf"managedcluster\.{GROUP}/", line)]
