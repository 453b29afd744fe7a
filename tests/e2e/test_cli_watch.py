"""``pyocm get clusters|clustersets|addon|works|placements -w`` as kubectl's ``get -w``:
the list, then a row per change until Ctrl-C, which ends it with exit 0; through the real
CLI against a hub without controllers, so that only the test's own writes change anything
(statuses included: the test writes them as the controllers and agents would)."""

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


ADDON_GROUP = "addon.open-cluster-management.io"
WORK_GROUP = "work.open-cluster-management.io"


def namespace(hub: HubProcess, name: str) -> None:
    kubectl(hub, "create", "namespace", name)


def status(hub: HubProcess, resource: str, name: str, ns: str, body: dict[str, object]) -> None:
    """Write ``body`` as the object's status, as its controller or agent would."""
    kubectl(hub, "patch", resource, name, "-n", ns, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": body}))  # fmt: skip


def condition(type_: str, value: str) -> dict[str, str]:
    return {
        "type": type_,
        "status": value,
        "reason": "Test",
        "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


def addon(name: str, cluster: str) -> dict[str, object]:
    return {
        "apiVersion": f"{ADDON_GROUP}/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {"installNamespace": "open-cluster-management-agent-addon"},
    }


def test_get_addon_watch_prints_a_row_per_change(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    one, other, unwatched = f"wc-{unique}", f"wo-{unique}", f"wx-{unique}"
    for cluster in (one, other, unwatched):
        namespace(hub, cluster)
    kubectl(hub, "apply", "-f", "-", manifest=addon("listed", one))
    table = Running("get", "addon", "-w", "--cluster", one, *k, split=True)
    names = Running("get", "addon", "-w", "-o", "name", "--clusters", f"{one},{other}", *k,
                    split=True)  # fmt: skip
    try:
        table.wait_for(rf"^\s*listed\s+{one}\s")  # the list
        names.wait_for(rf"/listed -n {one}$")
        kubectl(hub, "apply", "-f", "-", manifest=addon("later", unwatched))
        kubectl(hub, "apply", "-f", "-", manifest=addon("later", one))
        table.wait_for(rf"^\s*later\s+{one}\s.*<none>")  # ADDED
        kubectl(hub, "apply", "-f", "-", manifest=addon("later", other))
        status(hub, "managedclusteraddons", "later", one,
               {"conditions": [condition("Available", "True")]})  # fmt: skip
        table.wait_for(rf"^\s*later\s+{one}\s+\S+\s+True\s")  # MODIFIED
        kubectl(hub, "delete", "managedclusteraddon", "later", "-n", one)
        table.wait_for(rf"^\s*later\s+{one}\s", count=3)  # DELETED
        names.wait_for(rf"/later -n {other}$")
        names.wait_for(rf"/later -n {one}$", count=3)
    finally:
        codes = table.stop(signal.SIGINT), names.stop(signal.SIGINT)
    assert codes == (0, 0), "\n".join(table.lines + names.lines)
    assert table.out[0].split() == [
        "NAME", "CLUSTER", "NAMESPACE", "AVAILABLE", "MANIFESTAPPLIED", "REGISTRATIONAPPLIED"
    ]  # fmt: skip
    # Only the watched cluster's add-ons, each change once.
    assert [line.split()[:4] for line in table.out[1:]] == [
        ["listed", one, "open-cluster-management-agent-addon", "<none>"],
        ["later", one, "open-cluster-management-agent-addon", "<none>"],
        ["later", one, "open-cluster-management-agent-addon", "True"],
        ["later", one, "open-cluster-management-agent-addon", "True"],
    ]
    resource = f"managedclusteraddon.{ADDON_GROUP}"
    # One line per change, as the command's -o name prints (its cluster with -n).
    assert names.out == [
        f"{resource}/listed -n {one}",
        f"{resource}/later -n {one}",
        f"{resource}/later -n {other}",
        f"{resource}/later -n {one}",
        f"{resource}/later -n {one}",
    ]


def work(name: str, cluster: str) -> dict[str, object]:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
    }
    return {
        "apiVersion": f"{WORK_GROUP}/v1",
        "kind": "ManifestWork",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {"workload": {"manifests": [config]}},
    }


def test_get_works_watch_shows_every_condition_column(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    cluster = f"ww-{unique}"
    kubectl(hub, "apply", "-f", "-", manifest=managed_cluster(cluster))
    namespace(hub, cluster)
    missing = pyocm("get", "works", "nope", "-w", "--cluster", cluster, *k)
    assert missing.returncode == 1, missing.stderr
    assert f"no work named nope in cluster {cluster}" in missing.stderr
    kubectl(hub, "apply", "-f", "-", manifest=work("w1", cluster))
    watch = Running("get", "works", "-w", "--cluster", cluster, *k, split=True)
    docs = Running("get", "works", "-w", "-o", "json", "--cluster", cluster, *k, split=True)
    try:
        watch.wait_for(rf"^\s*w1\s+{cluster}\s+1\s")
        docs.wait_for(r"^}$")  # the listed work
        kubectl(hub, "apply", "-f", "-", manifest=work("w2", cluster))
        watch.wait_for(rf"^\s*w2\s+{cluster}\s+1\s")
        status(hub, "manifestworks", "w2", cluster, {"conditions": [
            condition("Applied", "True"), condition("Degraded", "False")]})  # fmt: skip
        watch.wait_for(rf"^\s*w2\s+{cluster}\s+1\s+True\s+\s+\s+False\s")
        docs.wait_for(r"^}$", count=3)
    finally:
        codes = watch.stop(signal.SIGINT), docs.stop(signal.SIGINT)
    assert codes == (0, 0), "\n".join(watch.lines + docs.lines)
    header = watch.out[0]
    assert header.split() == [
        "NAME", "CLUSTER", "MANIFESTS", "APPLIED", "AVAILABLE", "PROGRESSING", "DEGRADED", "AGE"
    ]  # fmt: skip
    assert len(watch.out) == 4, watch.out
    # The Degraded row lines up under its header.
    assert watch.out[3][header.index("DEGRADED") :].startswith("False"), watch.out
    # -o json: one object per change, each a whole ManifestWork.
    decoder = json.JSONDecoder()
    text, objects = "\n".join(docs.out), []
    while text.strip():
        obj, end = decoder.raw_decode(text.strip())
        objects.append(obj)
        text = text.strip()[end:]
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("ManifestWork", "w1"), ("ManifestWork", "w2"), ("ManifestWork", "w2")
    ]  # fmt: skip
    assert [len(o.get("status", {}).get("conditions", [])) for o in objects] == [0, 0, 2]


def placement(name: str, ns: str) -> dict[str, object]:
    return {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "Placement",
        "metadata": {"name": name, "namespace": ns},
        "spec": {},
    }


def test_get_placements_watch_reads_decisions_at_each_change(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    ns = f"wp-{unique}"
    namespace(hub, ns)
    kubectl(hub, "apply", "-f", "-", manifest=placement("p", ns))
    watch = Running("get", "placements", "-w", "-n", ns, *k, split=True)
    names = Running("get", "placements", "-w", "-o", "name", "-n", ns, *k, split=True)
    try:
        watch.wait_for(rf"^\s*p\s+{ns}\s+0\s+<none>")  # no status yet
        names.wait_for(rf"^placement\.{GROUP}/p$")
        # What the placement controller does: decisions first, then the status.
        decision = {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "PlacementDecision",
            "metadata": {"name": "p-decision-1", "namespace": ns,
                         "labels": {f"{GROUP}/placement": "p"}},
        }  # fmt: skip
        kubectl(hub, "apply", "-f", "-", manifest=decision)
        status(hub, "placementdecisions", "p-decision-1", ns,
               {"decisions": [{"clusterName": "c1", "reason": ""}, {"clusterName": "c2", "reason": ""}]})  # fmt: skip
        status(hub, "placements", "p", ns, {"numberOfSelectedClusters": 2,
               "conditions": [condition("PlacementSatisfied", "True")]})  # fmt: skip
        watch.wait_for(rf"^\s*p\s+{ns}\s+True\s+2\s+c1,c2\s*$")
        kubectl(hub, "delete", "placement", "p", "-n", ns)
        watch.wait_for(rf"^\s*p\s+{ns}\s+True\s+2\s+c1,c2\s*$", count=2)  # DELETED: last row
        names.wait_for(rf"^placement\.{GROUP}/p$", count=3)
    finally:
        codes = watch.stop(signal.SIGINT), names.stop(signal.SIGINT)
    assert codes == (0, 0), "\n".join(watch.lines + names.lines)
    assert watch.out[0].split() == ["NAME", "NAMESPACE", "SUCCEEDED", "SELECTED", "CLUSTERS"]
    assert len(watch.out) == 4, watch.out
