"""Seed 001's clusteradm walkthrough with ``pyocm`` and with kubectl, against a running hub:
create a set, add a cluster, bind it, list the sets; and the errors each step can meet."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm

SET_LABEL = "cluster.open-cluster-management.io/clusterset"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def until(check: Callable[[], str | None], *, timeout: float = 30) -> str:
    """Run ``check`` until it answers text (commands are synchronous; controllers are not)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found is not None:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not reached in {timeout}s")


def tree_block(output: str, name: str) -> list[str]:
    """The two lines under ``<name>`` in ``pyocm get clustersets``."""
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith(f" <{name}>"))
    return [line.strip("│├└─ ") for line in lines[at + 1 : at + 3]]


def test_the_walkthrough_with_pyocm(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    name, cluster, namespace = f"example-{unique}", f"managed-{unique}", f"ws-{unique}"
    created = pyocm("create", "clusterset", name, *k)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f"clusterset {name} created"
    # As kubectl create: a set that exists already fails the command.
    again = pyocm("create", "clusterset", name, *k)
    assert (again.returncode, again.stdout) == (1, "")
    assert again.stderr.strip() == f"error: clusterset {name} already exists"

    def status_is(text: str) -> Callable[[], str | None]:
        def check() -> str | None:
            shown = pyocm("get", "clustersets", *k)
            assert shown.returncode == 0, shown.stderr
            block = tree_block(shown.stdout, name)
            return shown.stdout if f"<Status> {text}" in block else None

        return check

    shown = until(status_is("No ManagedCluster selected"))
    assert shown.splitlines()[0] == "<ManagedClusterSet>"
    assert tree_block(shown, name)[0] == "<BoundNamespace>"
    assert " <default>" in shown and " <global>" in shown

    kubectl(hub.kubeconfig, "create", "namespace", namespace).check_returncode()
    applied = kubectl(
        hub.kubeconfig,
        "apply",
        "-f",
        "-",
        stdin=f"""
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: {cluster}
spec:
  hubAcceptsClient: true
""",
    )
    assert applied.returncode == 0, applied.stderr
    moved = pyocm("clusterset", "set", name, "--clusters", cluster, *k)
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.strip() == f"{cluster} is now in clusterset {name} ({SET_LABEL}={name})"
    until(status_is("1 ManagedClusters selected"))

    bound = pyocm("clusterset", "bind", name, "--namespace", namespace, *k)
    assert bound.returncode == 0, bound.stderr
    assert bound.stdout.strip() == f"clusterset {name} bound to namespace {namespace}"
    shown = until(status_is("1 ManagedClusters selected"))
    assert tree_block(shown, name)[0] == f"<BoundNamespace> {namespace}"

    # kubectl sees the same objects, and what it changes pyocm shows.
    got = kubectl(hub.kubeconfig, "get", "managedclusterset", name, "-o", "json")
    assert json.loads(got.stdout)["spec"]["clusterSelector"] == {
        "selectorType": "ExclusiveClusterSetLabel"
    }
    binding = kubectl(
        hub.kubeconfig, "get", "managedclustersetbinding", name, "-n", namespace, "-o", "json"
    )
    assert json.loads(binding.stdout)["spec"] == {"clusterSet": name}
    relabel = kubectl(
        hub.kubeconfig, "label", "--overwrite", "managedcluster", cluster, f"{SET_LABEL}=default"
    )
    assert relabel.returncode == 0, relabel.stderr
    until(status_is("No ManagedCluster selected"))

    unbound = pyocm("clusterset", "unbind", name, "--namespace", namespace, *k)
    assert unbound.returncode == 0 and "unbound" in unbound.stdout
    deleted = pyocm("delete", "clusterset", name, *k)
    assert deleted.returncode == 0 and deleted.stdout.strip() == f"clusterset {name} deleted"
    assert f"<{name}>" not in pyocm("get", "clustersets", *k).stdout


def test_the_walkthrough_with_kubectl(hub: HubProcess, unique: str) -> None:
    name, cluster, namespace = f"kset-{unique}", f"kc-{unique}", f"kws-{unique}"
    manifest = f"""
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata:
  name: {name}
spec:
  clusterSelector:
    selectorType: ExclusiveClusterSetLabel
---
apiVersion: v1
kind: Namespace
metadata:
  name: {namespace}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata:
  name: {name}
  namespace: {namespace}
spec:
  clusterSet: {name}
---
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: {cluster}
  labels:
    {SET_LABEL}: {name}
spec:
  hubAcceptsClient: true
"""
    applied = kubectl(hub.kubeconfig, "apply", "-f", "-", stdin=manifest)
    assert applied.returncode == 0, applied.stderr

    def selected() -> str | None:
        got = kubectl(hub.kubeconfig, "get", "managedclusterset", name, "-o", "json")
        conditions = json.loads(got.stdout).get("status", {}).get("conditions", [])
        messages = [c["message"] for c in conditions if c["type"] == "ClusterSetEmpty"]
        return messages[0] if messages == ["1 ManagedClusters selected"] else None

    until(selected)
    listed = kubectl(hub.kubeconfig, "get", "managedclustersets")
    assert listed.returncode == 0 and name in listed.stdout
    shown = pyocm("get", "clustersets", "--kubeconfig", str(hub.kubeconfig)).stdout
    assert tree_block(shown, name) == [
        f"<BoundNamespace> {namespace}",
        "<Status> 1 ManagedClusters selected",
    ]


def test_mistakes_get_clear_errors(hub: HubProcess, unique: str) -> None:
    k = ["--kubeconfig", str(hub.kubeconfig)]
    bad_type = pyocm("create", "clusterset", f"a-{unique}", "--selector-type", "Nope", *k)
    assert bad_type.returncode == 2 and "unknown selector type 'Nope'" in bad_type.stderr
    no_label = pyocm("create", "clusterset", f"a-{unique}", "--selector-type", "LabelSelector", *k)
    assert no_label.returncode == 2 and "at least one --label" in no_label.stderr
    bad_label = pyocm(
        "create", "clusterset", f"a-{unique}", "--selector-type", "LabelSelector",
        "--label", "env", *k,
    )  # fmt: skip
    assert bad_label.returncode == 2 and "expected KEY=VALUE" in bad_label.stderr
    outside = pyocm(
        "create", "clusterset", f"a-{unique}", "--selector-type", "ExclusiveLabel",
        "--label", "region=apac", *k,
    )  # fmt: skip
    assert outside.returncode == 1
    assert "must start with cluster.open-cluster-management.io/" in outside.stderr

    selected = f"prod-{unique}"
    made = pyocm(
        "create", "clusterset", selected, "--selector-type", "LabelSelector",
        "--label", f"env={unique}", *k,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    other = pyocm("create", "clusterset", selected, *k)
    assert other.returncode == 1
    assert "already exists with another selector: LabelSelector env=" in other.stderr
    by_selector = pyocm("clusterset", "set", selected, "--clusters", "x", *k)
    assert by_selector.returncode == 1 and "label the clusters to match it" in by_selector.stderr
    missing_set = pyocm("clusterset", "set", f"none-{unique}", "--clusters", "x", *k)
    assert (
        missing_set.returncode == 1 and f"no clusterset named none-{unique}" in missing_set.stderr
    )
    missing_cluster = pyocm("clusterset", "set", "default", "--clusters", f"none-{unique}", *k)
    assert missing_cluster.returncode == 1
    assert f"no managed cluster named none-{unique}" in missing_cluster.stderr
    unbound = pyocm("clusterset", "unbind", selected, "--namespace", "default", *k)
    assert unbound.returncode == 1 and "is not bound to default" in unbound.stderr
    gone = pyocm("delete", "clusterset", f"none-{unique}", *k)
    assert gone.returncode == 1 and f"no clusterset named none-{unique}" in gone.stderr


async def test_exclusive_label_sets_and_permissions(hub: HubProcess, api: Api, unique: str) -> None:
    region = "cluster.open-cluster-management.io/region"
    name, cluster = f"apac-{unique}", f"c-{unique}"
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": cluster}})
    k = ["--kubeconfig", str(hub.kubeconfig)]
    made = pyocm(
        "create", "clusterset", name, "--selector-type", "ExclusiveLabel",
        "--label", f"{region}=apac-{unique}", *k,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    moved = pyocm("clusterset", "set", name, "--clusters", cluster, *k)
    assert moved.returncode == 0, moved.stderr
    labels = (await api.get(ocm.MANAGED_CLUSTER, cluster))["metadata"]["labels"]
    assert labels[region] == f"apac-{unique}"
    again = pyocm("clusterset", "set", name, "--clusters", cluster, *k)
    assert again.stdout.strip() == f"{cluster} is already in clusterset {name}"

    # A user who may update clusters but holds no join or label grant is told what is missing.
    user = f"ops-{unique}"
    rule = {
        "apiGroups": ["cluster.open-cluster-management.io"],
        "resources": ["managedclusters", "managedclustersets"],
        "verbs": ["get", "patch"],
    }
    await api.create(kinds.CLUSTER_ROLE, {"metadata": {"name": user}, "rules": [rule]})
    rbac = "rbac.authorization.k8s.io"
    await api.create(
        kinds.CLUSTER_ROLE_BINDING,
        {
            "metadata": {"name": user},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": user},
            "subjects": [{"apiGroup": rbac, "kind": "User", "name": user}],
        },
    )
    as_user = ["--kubeconfig", str(hub.identity(user).kubeconfig)]
    assert pyocm("create", "clusterset", f"team-{unique}", *k).returncode == 0
    refused = pyocm("clusterset", "set", f"team-{unique}", "--clusters", cluster, *as_user)
    assert refused.returncode == 1
    assert f'user "{user}" cannot add/remove a ManagedCluster to/from ManagedClusterSet' in (
        refused.stderr
    )
    assert "(Forbidden)" in refused.stderr
