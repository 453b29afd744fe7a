"""Objects people actually write validate against the generated schemas, and bad ones do not.

Uses plain JSON Schema validation (jsonschema ignores the ``x-kubernetes-*`` markers), which
is enough to show the structural rules: types, enums, patterns and required fields.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import catalog
from tests.reference import shared

EXAMPLES = shared("seeds", "addon-template-examples")


def _errors(obj: dict[str, Any]) -> list[str]:
    group, version = obj["apiVersion"].split("/")
    resource = catalog.find(group=group, version=version, kind=obj["kind"])
    validator = jsonschema.Draft7Validator(resource.openapi_schema())
    return sorted(
        ".".join(str(p) for p in error.absolute_path) + ": " + error.validator
        for error in validator.iter_errors(obj)
    )


@pytest.mark.parametrize(
    "name",
    [
        "addon-template.yaml",
        "cluster-management-addon.yaml",
        "managed-cluster-addon.yaml",
        "addon-deployment-config.yaml",
    ],
)
def test_upstream_examples_validate(name: str) -> None:
    obj = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    assert _errors(obj) == []


def _cluster_set(selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": "apac"},
        "spec": {"clusterSelector": selector},
    }


@pytest.mark.parametrize(
    ("selector", "errors"),
    [
        pytest.param(
            {
                "selectorType": "ExclusiveLabel",
                "exclusiveLabel": {
                    "key": "info.open-cluster-management.io/region",
                    "value": "apac",
                },
            },
            [],
            id="exclusive-label",
        ),
        pytest.param({"selectorType": "ExclusiveClusterSetLabel"}, [], id="default-type"),
        pytest.param(
            {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"a": "b"}}},
            [],
            id="label-selector",
        ),
        pytest.param(
            {"selectorType": "ExclusiveLabel", "exclusiveLabel": {"key": "k"}},
            ["spec.clusterSelector.exclusiveLabel: required"],
            id="value-missing",
        ),
        pytest.param(
            {"selectorType": "ExclusiveLabel", "exclusiveLabel": {"key": "k", "value": 1}},
            ["spec.clusterSelector.exclusiveLabel.value: type"],
            id="value-not-string",
        ),
        pytest.param(
            {"selectorType": "Everything"},
            ["spec.clusterSelector.selectorType: enum"],
            id="unknown-type",
        ),
    ],
)
def test_cluster_set_selectors(selector: dict[str, Any], errors: list[str]) -> None:
    assert _errors(_cluster_set(selector)) == errors


@pytest.mark.parametrize(
    ("taint", "errors"),
    [
        pytest.param(
            {"key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect"},
            [],
            id="ok",
        ),
        pytest.param(
            {"key": "-bad", "effect": "NoSelect"}, ["spec.taints.0.key: pattern"], id="bad-key"
        ),
        pytest.param(
            {"key": "k", "effect": "NoExecute"}, ["spec.taints.0.effect: enum"], id="bad-effect"
        ),
        pytest.param({"key": "k"}, ["spec.taints.0: required"], id="no-effect"),
    ],
)
def test_managed_cluster_taints(taint: dict[str, Any], errors: list[str]) -> None:
    cluster = {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "c1"},
        "spec": {"hubAcceptsClient": True, "taints": [taint]},
    }
    assert _errors(cluster) == errors
