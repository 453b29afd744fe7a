"""``pyocm addon enable``, ``pyocm addon disable`` and ``pyocm get addon`` as a person runs
them against a real hub (the API server alone: what they write, what they show, each
error). The conditions an add-on manager would report are written by the test."""

from __future__ import annotations

import json

import pytest

from pyocm.api import kinds as ocm
from pyocm.cli.addons import MCA
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm


@pytest.fixture
def k(hub: HubProcess) -> list[str]:
    return ["--kubeconfig", str(hub.kubeconfig)]


async def cluster(api: Api, name: str, *, namespace: bool = True) -> str:
    """A managed cluster; with its namespace on the hub, as accepting it makes."""
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {}})
    if namespace:
        await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})
    return name


async def test_enable_creates_an_addon_per_cluster_and_merges_on_repeat(
    api: Api, unique: str, k: list[str]
) -> None:
    one, two = await cluster(api, f"{unique}-a"), await cluster(api, f"{unique}-b")
    done = pyocm("addon", "enable", "--names", "hello,world", "--clusters", f"{one},{two}", *k)
    assert done.returncode == 0, done.stderr
    assert (
        f"Deploying hello add-on to namespaces open-cluster-management-agent-addon of managed"
        f" cluster: {one}." in done.stdout.splitlines()
    )
    for name in ("hello", "world"):
        for where in (one, two):
            found = await api.get(MCA, name, namespace=where)
            assert found["spec"]["installNamespace"] == "open-cluster-management-agent-addon"
    # The add-on's own manager annotates; enabling again keeps that, and moves it.
    await api.patch(MCA, "hello", {"metadata": {"annotations": {"kept": "yes"}}}, namespace=one)
    done = pyocm(
        "addon", "enable", "--names", "hello", "--clusters", one, "-n", "elsewhere",
        "--annotate", "team=blue", *k,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = await api.get(MCA, "hello", namespace=one)
    assert found["spec"]["installNamespace"] == "elsewhere"
    assert found["metadata"]["annotations"] == {"kept": "yes", "team": "blue"}


async def test_enable_writes_nothing_when_a_cluster_is_missing_or_not_accepted(
    api: Api, unique: str, k: list[str]
) -> None:
    there = await cluster(api, f"{unique}-a")
    waiting = await cluster(api, f"{unique}-w", namespace=False)
    done = pyocm("addon", "enable", "--names", "hello", "--clusters", f"{there},nope-{unique}", *k)
    assert done.returncode == 1
    assert f"managed cluster(s) not found: nope-{unique}" in done.stderr
    done = pyocm("addon", "enable", "--names", "hello", "--clusters", f"{there},{waiting}", *k)
    assert done.returncode == 1
    assert f"no namespace on the hub yet for cluster(s) {waiting}" in done.stderr
    with pytest.raises(ApiError) as missing:
        await api.get(MCA, "hello", namespace=there)
    assert missing.value.code == 404


def test_bad_arguments_are_refused_before_connecting(k: list[str]) -> None:
    cases = [
        (["addon", "enable", "--names", "Hello", "--clusters", "a"], '--names: "Hello"'),
        (["addon", "enable", "--names", "a", "--clusters", "a", "-n", "Bad"], '--namespace "Bad"'),
        (["addon", "enable", "--names", "a", "--clusters", "a", "--annotate", "x"], "KEY=VALUE"),
        (["addon", "disable", "--names", "a"], "either --clusters or --all-clusters"),
        (["addon", "disable", "--names", "a", "--clusters", "b", "--all-clusters"], "either"),
        (["get", "addon", "-o", "wide"], "--output must be one of"),
    ]
    for args, message in cases:
        done = pyocm(*args, *k)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)


async def test_get_addon_shows_conditions_per_cluster(api: Api, unique: str, k: list[str]) -> None:
    one, two = await cluster(api, f"{unique}-a"), await cluster(api, f"{unique}-b")
    name = f"shown-{unique}"
    assert (
        pyocm("addon", "enable", "--names", name, "--clusters", f"{one},{two}", *k).returncode == 0
    )
    condition = {
        "type": "Available",
        "status": "True",
        "reason": "ManagedClusterAddOnLeaseUpdated",
        "message": "addon is available.",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    await api.patch(
        MCA, name, {"status": {"conditions": [condition], "namespace": "agents"}},
        namespace=one, subresource="status",
    )  # fmt: skip
    done = pyocm("get", "addon", name, *k)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0] == ["NAME", "CLUSTER", "NAMESPACE", "AVAILABLE", "MANIFESTAPPLIED",
                       "REGISTRATIONAPPLIED"]  # fmt: skip
    assert [name, one, "agents", "True", "<none>", "<none>"] in rows
    assert [name, two, "open-cluster-management-agent-addon", "<none>", "<none>", "<none>"] in rows
    done = pyocm("get", "addon", name, "--cluster", two, "-o", "json", *k)
    items = json.loads(done.stdout)["items"]
    assert [(i["metadata"]["namespace"], i["kind"]) for i in items] == [
        (two, "ManagedClusterAddOn")
    ]


async def test_disable_deletes_and_names_clusters_where_it_was_not_enabled(
    api: Api, unique: str, k: list[str]
) -> None:
    one, two = await cluster(api, f"{unique}-a"), await cluster(api, f"{unique}-b")
    name = f"gone-{unique}"
    assert pyocm("addon", "enable", "--names", name, "--clusters", one, *k).returncode == 0
    done = pyocm("addon", "disable", "--names", name, "--clusters", f"{two},{one}", *k)
    assert done.returncode == 1
    assert f"Undeploying {name} add-on from managed cluster: {one}." in done.stdout
    assert f'add-on "{name}" is not enabled on cluster "{two}"' in done.stderr
    with pytest.raises(ApiError) as missing:
        await api.get(MCA, name, namespace=one)
    assert missing.value.code == 404
    # --all-clusters finds where it is enabled
    assert (
        pyocm("addon", "enable", "--names", name, "--clusters", f"{one},{two}", *k).returncode == 0
    )
    done = pyocm("addon", "disable", "--names", name, "--all-clusters", *k)
    assert done.returncode == 0, done.stderr
    assert pyocm("get", "addon", name, *k).stderr.strip() == "No resources found"
