"""The clusteradm-shaped helpers: selectors from flags, and the tree of sets."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.clustersets.admin import ClusterSetError, cluster_selector, tree

Obj = dict[str, Any]


def cluster_set(name: str, message: str | None = None) -> Obj:
    found: Obj = {"metadata": {"name": name}}
    if message is not None:
        found["status"] = {
            "conditions": [
                {"type": "ClusterSetEmpty", "status": "False", "reason": "x", "message": message}
            ]
        }
    return found


def binding(name: str, namespace: str) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterSet": name}}


def test_the_tree_clusteradm_draws() -> None:
    sets = [
        cluster_set("global", "1 ManagedClusters selected"),
        cluster_set("default", "No ManagedCluster selected"),
        cluster_set("example-clusterset", "1 ManagedClusters selected"),
    ]
    assert tree(sets, [binding("example-clusterset", "default")]) == [
        "<ManagedClusterSet>",
        "├── <default>",
        "│   ├── <BoundNamespace>",
        "│   └── <Status> No ManagedCluster selected",
        "├── <example-clusterset>",
        "│   ├── <BoundNamespace> default",
        "│   └── <Status> 1 ManagedClusters selected",
        "└── <global>",
        "    ├── <BoundNamespace>",
        "    └── <Status> 1 ManagedClusters selected",
    ]


def test_many_namespaces_wrap_in_a_narrow_terminal() -> None:
    namespaces = [f"team-{n}" for n in "abcdef"]
    lines = tree([cluster_set("s")], [binding("s", ns) for ns in namespaces], width=40)
    assert all(len(line) <= 40 for line in lines)
    assert lines[2] == "    ├── <BoundNamespace> team-a, team-b,"
    assert lines[3].startswith("    │") and lines[3].strip("│ ").startswith("team-c,")
    shown = " ".join(line.strip("│├└─ ") for line in lines[2:-1])
    for ns in namespaces:
        assert ns in shown
    assert lines[-1] == "    └── <Status>", "a set the hub has not looked at yet"


def test_selectors_from_flags() -> None:
    assert cluster_selector("ExclusiveClusterSetLabel", {}) == {
        "selectorType": "ExclusiveClusterSetLabel"
    }
    assert cluster_selector("LabelSelector", {"env": "prod"}) == {
        "selectorType": "LabelSelector",
        "labelSelector": {"matchLabels": {"env": "prod"}},
    }
    key = "info.open-cluster-management.io/region"
    assert cluster_selector("ExclusiveLabel", {key: "apac"}) == {
        "selectorType": "ExclusiveLabel",
        "exclusiveLabel": {"key": key, "value": "apac"},
    }


@pytest.mark.parametrize(
    ("selector_type", "labels", "words"),
    [
        ("Nope", {}, "unknown selector type 'Nope'"),
        ("ExclusiveClusterSetLabel", {"a": "b"}, "--label applies to LabelSelector"),
        ("LabelSelector", {}, "at least one --label"),
        ("ExclusiveLabel", {}, "exactly one --label"),
        ("ExclusiveLabel", {"a": "b", "c": "d"}, "exactly one --label"),
    ],
)
def test_selector_mistakes(selector_type: str, labels: dict[str, str], words: str) -> None:
    with pytest.raises(ClusterSetError) as caught:
        cluster_selector(selector_type, labels)
    assert words in str(caught.value)
