"""Placement admission is upstream's CRD schema, and nothing more.

Upstream runs no webhook for Placements (``pkg/registration/webhook`` and
``pkg/work/webhook`` handle ManagedClusters, ManagedClusterSetBindings and
ManifestWorks only, and the cluster manager registers no webhook for
``placements``), and the Placement CRD (``cluster/v1beta1`` in
open-cluster-management.io/api) carries no CEL rule. So what kube-apiserver refuses is
what the CRD's OpenAPI schema refuses: enums, patterns, bounds, required fields,
``maxItems`` -- which pyocm's CRD validation already enforces from the same CRD, with
kube's 422 ``Invalid`` messages. These tests pin every such rule the issue names.

Everything else the scheduler meets at run time, not admission: upstream stores the
Placement and reports ``PlacementMisconfigured`` (reason ``Misconfigured``) when it
schedules. That covers a label or claim selector with an unknown operator, ``In`` or
``NotIn`` without values, ``Exists`` with values; a toleration with an empty key whose
operator is not ``Exists`` ("If the key is empty, operator must be Exists.") or an
``Exists`` toleration with a value ("If the operator is Exists, the value should be
empty."); a prioritizer mode other than Additive/Exact ("incorrect prioritizer policy
mode: ..."); a built-in prioritizer name upstream does not know ("incorrect builtin
prioritizer: ..."); an ``AddOn`` score coordinate without ``addOn``; an integer
``clustersPerDecisionGroup`` of zero or below (the schema's pattern applies to strings
only; the scheduler takes every cluster then). The last group of tests shows the schema
lets each of those in, so no admission rule refuses what upstream stores.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
import yaml

from pyocm.apiserver.apiextensions import defaulting, validation
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from tests.reference import shared

KIND = "Placement"
API_VERSION = "cluster.open-cluster-management.io/v1beta1"


@functools.cache
def schema() -> CompiledSchema:
    (path,) = shared("reference", "ocm-crds").glob("*v1beta1*_placements.crd.yaml")
    crd = yaml.safe_load(path.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    return CompiledSchema.from_openapi(version["schema"]["openAPIV3Schema"])


def placement(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "placement1", "namespace": "ns1"},
        "spec": copy.deepcopy(spec),
    }


def problems(obj: dict[str, Any]) -> list[str]:
    """The schema's errors after its defaults, in the order kube-apiserver applies them."""
    defaulting.apply_defaults(obj, schema())
    return [
        e.message() for e in validation.validate(obj, schema(), kind=KIND, api_version=API_VERSION)
    ]


def selector(**label_selector: Any) -> list[dict[str, Any]]:
    return [{"requiredClusterSelector": {"labelSelector": label_selector}}]


#: The label and claim example of open-cluster-management.io's Placement concept page.
DOCUMENTED = {
    "numberOfClusters": 3,
    "clusterSets": ["prod"],
    "predicates": [
        {
            "requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"purpose": "test"}},
                "claimSelector": {
                    "matchExpressions": [
                        {
                            "key": "platform.open-cluster-management.io",
                            "operator": "In",
                            "values": ["aws"],
                        }
                    ]
                },
            }
        }
    ],
}


def test_the_documented_example_is_valid() -> None:
    assert problems(placement(**DOCUMENTED)) == []


def test_a_placement_needs_a_spec() -> None:
    obj = placement()
    del obj["spec"]
    assert problems(obj) == ["spec: Required value"]


# --- what the schema refuses, as kube-apiserver words it -----------------------------------


def test_a_selector_expression_needs_its_key_and_operator() -> None:
    assert problems(placement(predicates=selector(matchExpressions=[{"values": ["a"]}]))) == [
        "spec.predicates[0].requiredClusterSelector.labelSelector.matchExpressions[0].key: Required value",
        "spec.predicates[0].requiredClusterSelector.labelSelector.matchExpressions[0].operator: Required value",
    ]


def test_a_toleration_effect_is_one_of_the_three() -> None:
    assert problems(placement(tolerations=[{"key": "gpu", "effect": "NoSchedule"}])) == [
        'spec.tolerations[0].effect: Unsupported value: "NoSchedule": '
        'supported values: "NoSelect", "PreferNoSelect", "NoSelectIfNew"'
    ]


def test_a_toleration_key_given_must_be_a_qualified_name() -> None:
    (message,) = problems(placement(tolerations=[{"key": "", "operator": "Exists"}]))
    assert message.startswith(
        'spec.tolerations[0].key: Invalid value: "": spec.tolerations[0].key in body should match '
    )


def test_a_score_coordinate_type_is_builtin_or_addon() -> None:
    spec = {"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "Custom"}}]}}
    assert problems(placement(**spec)) == [
        'spec.prioritizerPolicy.configurations[0].scoreCoordinate.type: Unsupported value: "Custom": '
        'supported values: "BuiltIn", "AddOn"'
    ]


def test_a_prioritizer_needs_its_score_coordinate() -> None:
    spec = {"prioritizerPolicy": {"configurations": [{"weight": 2}]}}
    assert problems(placement(**spec)) == [
        "spec.prioritizerPolicy.configurations[0].scoreCoordinate: Required value"
    ]


def test_an_addon_score_names_its_resource_and_score() -> None:
    coordinate = {"type": "AddOn", "addOn": {}}
    spec = {"prioritizerPolicy": {"configurations": [{"scoreCoordinate": coordinate}]}}
    path = "spec.prioritizerPolicy.configurations[0].scoreCoordinate.addOn"
    assert problems(placement(**spec)) == [
        f"{path}.resourceName: Required value",
        f"{path}.scoreName: Required value",
    ]


@pytest.mark.parametrize(
    ("weight", "bound"),
    [(11, "less than or equal to 10"), (-11, "greater than or equal to -10")],
)
def test_a_weight_is_within_ten_either_way(weight: int, bound: str) -> None:
    config = {"scoreCoordinate": {"builtIn": "Steady"}, "weight": weight}
    path = "spec.prioritizerPolicy.configurations[0].weight"
    assert problems(placement(prioritizerPolicy={"configurations": [config]})) == [
        f"{path}: Invalid value: {weight}: {path} in body should be {bound}"
    ]


def test_a_spread_constraint_is_checked_field_by_field() -> None:
    constraint = {
        "topologyKey": "a b",
        "topologyKeyType": "Annotation",
        "maxSkew": 0,
        "whenUnsatisfiable": "Wait",
    }
    path = "spec.spreadPolicy.spreadConstraints[0]"
    found = problems(placement(spreadPolicy={"spreadConstraints": [constraint]}))
    assert (
        found[0]
        == f"{path}.maxSkew: Invalid value: 0: {path}.maxSkew in body should be greater than or equal to 1"
    )
    assert found[1].startswith(
        f'{path}.topologyKey: Invalid value: "a b": {path}.topologyKey in body should match '
    )
    assert found[2:] == [
        f'{path}.topologyKeyType: Unsupported value: "Annotation": supported values: "Label", "Claim"',
        f'{path}.whenUnsatisfiable: Unsupported value: "Wait": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ]


def test_a_spread_constraint_needs_key_and_type_and_at_most_eight() -> None:
    assert problems(placement(spreadPolicy={"spreadConstraints": [{}]})) == [
        "spec.spreadPolicy.spreadConstraints[0].topologyKey: Required value",
        "spec.spreadPolicy.spreadConstraints[0].topologyKeyType: Required value",
    ]
    nine = [{"topologyKey": "zone", "topologyKeyType": "Label"}] * 9
    assert problems(placement(spreadPolicy={"spreadConstraints": nine})) == [
        "spec.spreadPolicy.spreadConstraints: Too many: 9: must have at most 8 items"
    ]


@pytest.mark.parametrize("value", ["0%", "101%", "ten", "5 %", "05"])
def test_clusters_per_group_as_a_string_is_a_count_or_a_percentage(value: str) -> None:
    path = "spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup"
    assert problems(
        placement(decisionStrategy={"groupStrategy": {"clustersPerDecisionGroup": value}})
    ) == [
        f'{path}: Invalid value: "{value}": {path} in body should match '
        "'^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$'"
    ]


def test_a_decision_group_needs_a_valid_name_and_selector() -> None:
    groups = [{"groupName": "-canary", "groupClusterSelector": {}}, {}]
    path = "spec.decisionStrategy.groupStrategy.decisionGroups"
    assert problems(placement(decisionStrategy={"groupStrategy": {"decisionGroups": groups}})) == [
        f'{path}[0].groupName: Invalid value: "-canary": {path}[0].groupName in body should match '
        "'^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$'",
        f"{path}[1].groupClusterSelector: Required value",
        f"{path}[1].groupName: Required value",
    ]


def test_sort_by_and_score_rate_limit() -> None:
    assert problems(placement(sortBy="Name", scoreRateLimit="1d")) == [
        """spec.scoreRateLimit: Invalid value: "1d": spec.scoreRateLimit in body should match '^[0-9]+[hms]$'""",
        'spec.sortBy: Unsupported value: "Name": supported values: "ClusterName", "Score"',
    ]


# --- what upstream stores and leaves to the scheduler (PlacementMisconfigured) --------------


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {"predicates": selector(matchExpressions=[{"key": "a", "operator": "Near"}])},
            id="operator",
        ),
        pytest.param(
            {"predicates": selector(matchExpressions=[{"key": "a", "operator": "In"}])},
            id="in-without-values",
        ),
        pytest.param(
            {
                "predicates": selector(
                    matchExpressions=[{"key": "a", "operator": "Exists", "values": ["x"]}]
                )
            },
            id="exists-with-values",
        ),
        pytest.param(
            {"tolerations": [{"operator": "Equal", "value": "x"}]}, id="no-key-not-exists"
        ),
        pytest.param(
            {"tolerations": [{"key": "gpu", "operator": "Exists", "value": "x"}]},
            id="exists-with-value",
        ),
        pytest.param(
            {"tolerations": [{"key": "gpu", "operator": "Near"}]}, id="toleration-operator"
        ),
        pytest.param({"prioritizerPolicy": {"mode": "Strict"}}, id="mode"),
        pytest.param(
            {
                "prioritizerPolicy": {
                    "configurations": [{"scoreCoordinate": {"builtIn": "Fastest"}}]
                }
            },
            id="builtin-name",
        ),
        pytest.param(
            {"prioritizerPolicy": {"configurations": [{"scoreCoordinate": {"type": "AddOn"}}]}},
            id="addon-missing",
        ),
        pytest.param(
            {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": 0}}},
            id="group-size-0",
        ),
        pytest.param(
            {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": -2}}},
            id="group-size-neg",
        ),
    ],
)
def test_what_only_the_scheduler_reports_is_admitted(spec: dict[str, Any]) -> None:
    assert problems(placement(**spec)) == []
