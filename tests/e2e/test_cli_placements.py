"""``pyocm create placement``, ``pyocm get placements`` and ``pyocm delete placement`` as
a person runs them against a real hub: what they write, what they show, each error.

No placement controller runs here: the PlacementDecisions and the status it would write
are written by the test, as the controller writes them (decisions labelled with the
placement's name and owned by it; status through ``placements/status``)."""

from __future__ import annotations

import json

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm

LABEL = "cluster.open-cluster-management.io/placement"


@pytest.fixture
def k(hub: HubProcess) -> list[str]:
    return ["--kubeconfig", str(hub.kubeconfig)]


@pytest.fixture
async def workspace(api: Api, unique: str) -> str:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    return unique


async def bind(api: Api, cluster_set: str, namespace: str) -> None:
    await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": cluster_set}})
    await api.create(
        ocm.MANAGED_CLUSTER_SET_BINDING,
        {
            "metadata": {"name": cluster_set, "namespace": namespace},
            "spec": {"clusterSet": cluster_set},
        },
    )


async def decide(api: Api, namespace: str, placement: str, pages: list[list[str]]) -> None:
    """What the placement controller writes: decision pages, then the placement's status."""
    owner = await api.get(ocm.PLACEMENT, placement, namespace=namespace)
    for index, clusters in enumerate(pages):
        decision = await api.create(
            ocm.PLACEMENT_DECISION,
            {
                "metadata": {
                    "name": f"{placement}-decision-{index + 1}",
                    "namespace": namespace,
                    "labels": {LABEL: placement},
                    "ownerReferences": [
                        {
                            "apiVersion": ocm.PLACEMENT.api_version,
                            "kind": "Placement",
                            "name": placement,
                            "uid": owner["metadata"]["uid"],
                            "blockOwnerDeletion": True,
                            "controller": True,
                        }
                    ],
                }
            },
        )
        decision["status"] = {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]}
        await api.update(ocm.PLACEMENT_DECISION, decision, subresource="status")
    total = sum(len(p) for p in pages)
    owner["status"] = {
        "numberOfSelectedClusters": total,
        "conditions": [
            {
                "type": "PlacementSatisfied",
                "status": "True",
                "reason": "AllDecisionsScheduled",
                "message": "All cluster decisions scheduled",
                "lastTransitionTime": "2025-01-02T03:04:05Z",
            }
        ],
    }
    await api.update(ocm.PLACEMENT, owner, subresource="status")


async def test_create_get_and_delete(api: Api, k: list[str], workspace: str, unique: str) -> None:
    prod, dev = f"prod-{unique}", f"dev-{unique}"
    await bind(api, prod, workspace)
    created = pyocm(
        "create", "placement", "web", "-n", workspace, "--clusterset", f"{prod},{dev}",
        "--label", "purpose=test", "--label", "tier=gold", "--number", "3", *k,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f'placement "web" created in namespace "{workspace}"'
    # The set bound to the namespace is quiet; the other is a warning, not a refusal.
    assert created.stderr.strip() == (
        f'warning: cluster set "{dev}" is not bound to namespace "{workspace}": the placement '
        f"selects none of its clusters until it is (pyocm clusterset bind {dev} --namespace {workspace})"
    )
    stored = await api.get(ocm.PLACEMENT, "web", namespace=workspace)
    assert stored["spec"]["clusterSets"] == [prod, dev]
    assert stored["spec"]["numberOfClusters"] == 3
    assert stored["spec"]["predicates"] == [
        {
            "requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"purpose": "test", "tier": "gold"}}
            }
        }
    ]

    again = pyocm("create", "placement", "web", "-n", workspace, "--clusterset", prod, *k)
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f'error: placement "web" already exists in namespace "{workspace}" '
        "(use --overwrite to replace its spec)"
    )
    assert (await api.get(ocm.PLACEMENT, "web", namespace=workspace))["spec"] == stored["spec"]

    assert (
        pyocm("create", "placement", "idle", "-n", workspace, "--clusterset", prod, *k).returncode
        == 0
    )
    shown = pyocm("get", "placements", "-n", workspace, *k)
    assert shown.returncode == 0, shown.stderr
    assert [line.split() for line in shown.stdout.strip().splitlines()] == [
        ["NAME", "NAMESPACE", "SUCCEEDED", "SELECTED", "CLUSTERS"],
        ["idle", workspace, "0", "<none>"],
        ["web", workspace, "0", "<none>"],
    ]

    # Ten pages: page 10 sorts after page 9, not after page 1.
    await decide(api, workspace, "web", [[f"c{i}"] for i in range(1, 11)])
    shown = pyocm("get", "placements", "web", "-n", workspace, *k)
    assert shown.returncode == 0, shown.stderr
    assert [line.split() for line in shown.stdout.strip().splitlines()][1] == [
        "web", workspace, "True", "10", ",".join(f"c{i}" for i in range(1, 11)),
    ]  # fmt: skip

    everywhere = pyocm("get", "placements", "-o", "name", *k)
    assert everywhere.returncode == 0, everywhere.stderr
    assert "placement.cluster.open-cluster-management.io/web" in everywhere.stdout.splitlines()
    as_json = json.loads(
        pyocm("get", "placements", "web", "-n", workspace, "-o", "json", *k).stdout
    )
    assert [p["metadata"]["name"] for p in as_json["items"]] == ["web"]
    assert as_json["items"][0]["kind"] == "Placement"
    as_yaml = yaml.safe_load(pyocm("get", "placements", "-n", workspace, "-o", "yaml", *k).stdout)
    assert as_yaml["items"][1]["status"]["numberOfSelectedClusters"] == 10

    # --overwrite, as clusteradm's: the spec replaced whole; the placement and its status kept.
    overwritten = pyocm(
        "create", "placement", "web", "-n", workspace, "--clusterset", prod, "--number", "1",
        "--overwrite", *k,
    )  # fmt: skip
    assert overwritten.returncode == 0, overwritten.stderr
    assert overwritten.stdout.strip() == f'placement "web" updated in namespace "{workspace}"'
    replaced = await api.get(ocm.PLACEMENT, "web", namespace=workspace)
    assert replaced["metadata"]["uid"] == stored["metadata"]["uid"]
    assert replaced["spec"]["clusterSets"] == [prod]
    assert replaced["spec"]["numberOfClusters"] == 1
    assert "predicates" not in replaced["spec"]
    assert replaced["status"]["numberOfSelectedClusters"] == 10

    deleted = pyocm("delete", "placement", "web", "-n", workspace, *k)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == f'placement "web" deleted from namespace "{workspace}"'
    with pytest.raises(ApiError) as gone:
        await api.get(ocm.PLACEMENT, "web", namespace=workspace)
    assert gone.value.code == 404
    missing = pyocm("delete", "placement", "web", "-n", workspace, *k)
    assert missing.returncode == 1
    assert missing.stderr.strip() == f'error: placement "web" not found in namespace "{workspace}"'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--clusterset", ","], "error: --clusterset needs at least one cluster set name"),
        (
            ["--clusterset", "a", "--label", "purpose"],
            'error: --label "purpose": expected KEY=VALUE',
        ),
        (["--clusterset", "Bad_Set"], 'error: --clusterset: "Bad_Set" is not a cluster set name: '),
        (["--clusterset", "a", "--number", "-1"], "Invalid value for '--number' / '--count'"),
    ],
)
def test_bad_flags_are_refused_before_anything_is_sent(
    k: list[str], workspace: str, args: list[str], message: str
) -> None:
    refused = pyocm("create", "placement", "p", "-n", workspace, *args, *k)
    assert refused.returncode == 2
    assert message in refused.stderr


def test_missing_namespace_and_placement(k: list[str], unique: str) -> None:
    created = pyocm("create", "placement", "p", "-n", unique, "--clusterset", "a", *k)
    assert created.returncode == 1
    assert created.stderr.strip() == f'error: namespace "{unique}" not found'
    listed = pyocm("get", "placements", "-n", unique, *k)
    assert listed.returncode == 1
    assert listed.stderr.strip() == f'error: namespace "{unique}" not found'
    named = pyocm("get", "placements", f"none-{unique}", *k)
    assert named.returncode == 1
    assert named.stderr.strip() == f'error: no placement named "none-{unique}" in any namespace'
    bad = pyocm("get", "placements", "-o", "wide", *k)
    assert bad.returncode == 2
    assert "error: --output must be one of table, yaml, json, name" in bad.stderr
