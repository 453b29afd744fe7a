"""Works compared and patched as sdk-go's WorkApplier does."""

from __future__ import annotations

from typing import Any

from pyocm.api import models
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.kube.patches import merge_patch
from pyocm.work.hub.applier import spec_equal, update_patch, works_equal

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d", "namespace": "default"},
    "spec": {"template": {"metadata": {"labels": {"a": "b"}}}, "replicas": 1},
}


def work(spec: dict[str, Any], **labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "w",
            "namespace": "c1",
            "uid": "u",
            "resourceVersion": "7",
            "labels": labels,
        },
        "spec": spec,
    }


def test_specs_equal_as_go_decodes_them() -> None:
    spec = {"workload": {"manifests": [DEPLOYMENT]}}
    stamped = {
        **DEPLOYMENT,
        "metadata": {**DEPLOYMENT["metadata"], "creationTimestamp": None},
        "spec": {
            "template": {"metadata": {"labels": {"a": "b"}, "creationTimestamp": None}},
            "replicas": 1.0,
        },
    }
    assert spec_equal(spec, {"workload": {"manifests": [stamped]}, "manifestConfigs": []})
    assert spec_equal(spec, {"workload": {"manifests": [DEPLOYMENT]}, "executor": None})
    changed = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 2}}
    assert not spec_equal(spec, {"workload": {"manifests": [changed]}})
    # Inside a manifest an empty list is content, not a typed field's zero value.
    empty = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "volumes": []}}
    assert not spec_equal(spec, {"workload": {"manifests": [empty]}})
    assert not spec_equal(spec, {**spec, "deleteOption": {"propagationPolicy": "Orphan"}})


def test_labels_annotations_and_owners_count() -> None:
    spec = {"workload": {"manifests": [DEPLOYMENT]}}
    assert works_equal(work(spec, a="1"), work(spec, a="1"))
    assert not works_equal(work(spec, a="1"), work(spec, a="2"))
    annotated = work(spec, a="1")
    annotated["metadata"]["annotations"] = {"x": "y"}
    assert not works_equal(work(spec, a="1"), annotated)


def test_the_patch_removes_what_the_new_work_leaves_out() -> None:
    old = work(
        {"workload": {"manifests": [DEPLOYMENT]}, "deleteOption": {"propagationPolicy": "Orphan"}},
        a="1",
        b="2",
    )
    old["metadata"]["annotations"] = {"x": "y"}
    new = work({"workload": {"manifests": [DEPLOYMENT]}}, a="1")
    patch = update_patch(new, models.view(ManifestWork, old))
    assert patch["metadata"]["uid"] == "u" and patch["metadata"]["resourceVersion"] == "7"
    patched = merge_patch(old, patch)
    assert patched["spec"] == new["spec"]
    assert patched["metadata"]["labels"] == {"a": "1"}
    assert "annotations" not in patched["metadata"]
