"""Placement admission through a real hub and kubectl: what upstream's kube-apiserver
answers, which is the Placement CRD's schema (upstream has no Placement webhook; see
tests/unit/admission/test_placement.py). OCM's documented examples are taken unchanged;
each refused case gets kube's 422 Invalid with its field path; what upstream leaves to
the scheduler (PlacementMisconfigured) is stored."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess

pytestmark = pytest.mark.kubectl

#: Two examples of https://open-cluster-management.io/docs/concepts/content-placement/placement/
#: as printed there (label and claim selection; prioritizers in Exact mode).
DOCUMENTED = """\
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement1
  namespace: ns1
spec:
  numberOfClusters: 3
  clusterSets:
    - prod
  predicates:
    - requiredClusterSelector:
        labelSelector:
          matchLabels:
            purpose: test
        claimSelector:
          matchExpressions:
            - key: platform.open-cluster-management.io
              operator: In
              values:
                - aws
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: placement2
  namespace: ns1
spec:
  numberOfClusters: 2
  prioritizerPolicy:
    mode: Exact
    configurations:
      - scoreCoordinate:
          builtIn: Steady
        weight: 3
      - scoreCoordinate:
          type: AddOn
          addOn:
            resourceName: default
            scoreName: cpuratio
"""


def kubectl(kubeconfig: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def a_placement(namespace: str, name: str, **spec: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }
    )


@pytest.fixture
async def workspace(api: Api, unique: str) -> str:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    return unique


async def test_the_documented_examples_are_taken_unchanged(
    hub: HubProcess, api: Api, workspace: str
) -> None:
    text = DOCUMENTED.replace("namespace: ns1", f"namespace: {workspace}")
    applied = kubectl(hub.kubeconfig, "apply", "-f", "-", stdin=text)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines() == [
        "placement.cluster.open-cluster-management.io/placement1 created",
        "placement.cluster.open-cluster-management.io/placement2 created",
    ]
    for sent in yaml.safe_load_all(text):
        stored = await api.get(ocm.PLACEMENT, sent["metadata"]["name"], namespace=workspace)
        for key, value in sent["spec"].items():
            if key != "prioritizerPolicy":
                assert stored["spec"][key] == value
    # The schema's defaults fill what the example leaves out, as kube-apiserver's do.
    second = await api.get(ocm.PLACEMENT, "placement2", namespace=workspace)
    assert second["spec"]["prioritizerPolicy"]["configurations"] == [
        {"scoreCoordinate": {"builtIn": "Steady", "type": "BuiltIn"}, "weight": 3},
        {
            "scoreCoordinate": {
                "type": "AddOn",
                "addOn": {"resourceName": "default", "scoreName": "cpuratio"},
            },
            "weight": 1,
        },
    ]


REFUSED = [
    pytest.param(
        {"tolerations": [{"key": "gpu", "effect": "NoSchedule"}]},
        'The Placement "p" is invalid: spec.tolerations[0].effect: Unsupported value: "NoSchedule": '
        'supported values: "NoSelect", "PreferNoSelect", "NoSelectIfNew"',
        id="toleration-effect",
    ),
    pytest.param(
        {
            "prioritizerPolicy": {
                "configurations": [{"scoreCoordinate": {"builtIn": "Steady"}, "weight": 11}]
            }
        },
        'The Placement "p" is invalid: spec.prioritizerPolicy.configurations[0].weight: Invalid value: 11: '
        "spec.prioritizerPolicy.configurations[0].weight in body should be less than or equal to 10",
        id="weight",
    ),
    pytest.param(
        {
            "prioritizerPolicy": {
                "configurations": [
                    {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "r"}}}
                ]
            }
        },
        'The Placement "p" is invalid: '
        "spec.prioritizerPolicy.configurations[0].scoreCoordinate.addOn.scoreName: Required value",
        id="addon-score-name",
    ),
    pytest.param(
        {
            "spreadPolicy": {
                "spreadConstraints": [
                    {"topologyKey": "zone", "topologyKeyType": "Label", "maxSkew": 0}
                ]
            }
        },
        'The Placement "p" is invalid: spec.spreadPolicy.spreadConstraints[0].maxSkew: Invalid value: 0: '
        "spec.spreadPolicy.spreadConstraints[0].maxSkew in body should be greater than or equal to 1",
        id="max-skew",
    ),
    pytest.param(
        {
            "spreadPolicy": {
                "spreadConstraints": [{"topologyKey": "zone", "topologyKeyType": "Annotation"}]
            }
        },
        'The Placement "p" is invalid: spec.spreadPolicy.spreadConstraints[0].topologyKeyType: '
        'Unsupported value: "Annotation": supported values: "Label", "Claim"',
        id="topology-key-type",
    ),
    pytest.param(
        {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "101%"}}},
        'The Placement "p" is invalid: spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup: '
        'Invalid value: "101%": spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup in body '
        "should match '^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$'",
        id="clusters-per-group",
    ),
    pytest.param(
        {
            "decisionStrategy": {
                "groupStrategy": {
                    "decisionGroups": [{"groupName": "-canary", "groupClusterSelector": {}}]
                }
            }
        },
        'The Placement "p" is invalid: spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName: '
        'Invalid value: "-canary": spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName in body '
        "should match '^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$'",
        id="group-name",
    ),
]


@pytest.mark.parametrize(("spec", "message"), REFUSED)
def test_what_the_schema_refuses(
    hub: HubProcess, workspace: str, spec: dict[str, Any], message: str
) -> None:
    created = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_placement(workspace, "p", **spec)
    )
    assert created.returncode != 0
    assert created.stderr.strip() == message


async def test_what_upstream_leaves_to_the_scheduler_is_stored(
    hub: HubProcess, api: Api, workspace: str
) -> None:
    """Upstream stores these and reports PlacementMisconfigured when it schedules them."""
    spec = {
        "predicates": [
            {
                "requiredClusterSelector": {
                    "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}
                }
            }
        ],
        "tolerations": [{"operator": "Equal", "value": "x"}],
        "prioritizerPolicy": {
            "mode": "Strict",
            "configurations": [{"scoreCoordinate": {"builtIn": "Fastest"}}],
        },
    }
    created = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_placement(workspace, "loose", **spec)
    )
    assert created.returncode == 0, created.stderr
    stored = await api.get(ocm.PLACEMENT, "loose", namespace=workspace)
    assert stored["spec"]["prioritizerPolicy"]["mode"] == "Strict"
