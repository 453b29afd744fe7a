"""Kubernetes JSONPath as printer columns use it."""

from __future__ import annotations

import pytest

from pyocm.kube.jsonpath import compile_path

CLUSTER = {
    "metadata": {"name": "c1", "labels": {"cluster.open-cluster-management.io/clusterset": "dev"}},
    "spec": {
        "hubAcceptsClient": True,
        "managedClusterClientConfigs": [{"url": "https://a"}, {"url": "https://b"}],
    },
    "status": {
        "conditions": [
            {"type": "ManagedClusterJoined", "status": "True", "observedGeneration": 2},
            {"type": "ManagedClusterConditionAvailable", "status": "Unknown"},
        ]
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".spec.hubAcceptsClient", [True]),
        ("{.spec.hubAcceptsClient}", [True]),
        (".spec.managedClusterClientConfigs[*].url", ["https://a", "https://b"]),
        (".spec.managedClusterClientConfigs[1].url", ["https://b"]),
        (".spec.managedClusterClientConfigs[-1].url", ["https://b"]),
        (".spec.managedClusterClientConfigs[5].url", []),
        ('.status.conditions[?(@.type=="ManagedClusterJoined")].status', ["True"]),
        (".status.conditions[?(@.type=='ManagedClusterConditionAvailable')].status", ["Unknown"]),
        ('.status.conditions[?(@.type != "ManagedClusterJoined")].type', ["ManagedClusterConditionAvailable"]),
        (".status.conditions[?(@.observedGeneration >= 2)].type", ["ManagedClusterJoined"]),
        (".status.conditions[?(@.observedGeneration)].type", ["ManagedClusterJoined"]),
        ('.status.conditions[?(@.type=="Missing")].status', []),
        (".metadata.labels['cluster.open-cluster-management.io/clusterset']", ["dev"]),
        (".metadata.*", ["c1", {"cluster.open-cluster-management.io/clusterset": "dev"}]),
        (".spec.nothing.deeper", []),
        (".metadata.name[0]", []),
    ],
)
def test_find(path: str, expected: list[object]) -> None:
    assert compile_path(path).find(CLUSTER) == expected


def test_first_is_what_a_column_shows() -> None:
    assert compile_path(".spec.managedClusterClientConfigs[*].url").first(CLUSTER) == "https://a"
    assert compile_path(".status.version").first(CLUSTER) is None


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("", "empty JSONPath"),
        ("..name", "recursive descent"),
        (".spec[", "unclosed ["),
        (".spec[1:2]", "is not supported"),
        (".status.conditions[?(@.type=~x)]", "a filter such as"),
        ("spec", "unexpected 's'"),
        (".", "a field name was expected"),
    ],
)
def test_bad_paths_are_refused_with_the_place(path: str, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        compile_path(path)
    assert words in str(caught.value)
