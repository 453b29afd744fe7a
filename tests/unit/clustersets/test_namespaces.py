"""Which cluster-set changes the managed-namespaces controller must look at."""

from __future__ import annotations

from typing import Any

from pyocm.clustersets.namespaces import set_may_change
from pyocm.runtime.informer import Change


def cluster_set(namespaces: list[str] | None = None, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
    if namespaces is not None:
        spec["managedNamespaces"] = [{"name": n} for n in namespaces]
    return {"metadata": {"name": "s"}, "spec": spec, "status": status}


def test_status_rewrites_are_ignored() -> None:
    before, after = cluster_set(["ns"], members=1), cluster_set(["ns"], members=2)
    assert not set_may_change(Change(before, after))


def test_namespace_and_selector_changes_count_when_the_set_has_namespaces() -> None:
    assert set_may_change(Change(cluster_set(["ns"]), cluster_set(["ns", "other"])))
    assert set_may_change(Change(cluster_set(["ns"]), cluster_set([])))
    moved = cluster_set(["ns"])
    moved["spec"]["clusterSelector"] = {"selectorType": "LabelSelector", "labelSelector": {}}
    assert set_may_change(Change(cluster_set(["ns"]), moved))
    deleting = cluster_set(["ns"])
    deleting["metadata"]["deletionTimestamp"] = "2026-11-24T00:00:00Z"
    assert set_may_change(Change(cluster_set(["ns"]), deleting))
    assert set_may_change(Change(None, cluster_set(["ns"])))


def test_sets_without_namespaces_never_concern_them() -> None:
    assert not set_may_change(Change(None, cluster_set()))
    assert not set_may_change(Change(cluster_set([]), cluster_set(None, members=3)))
