"""Patch metadata of the workload kinds, read from Kubernetes' schemas: what kubectl's
strategic merge patches and server-side apply merge by."""

from __future__ import annotations

from typing import Any

from pyocm.kube import fieldsets, patchmeta, smp

Obj = dict[str, Any]


def deployment(containers: list[Obj], volumes: list[Obj] | None = None) -> Obj:
    pod_spec: Obj = {"containers": containers}
    if volumes is not None:
        pod_spec["volumes"] = volumes
    return {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": pod_spec}}}


def test_the_workload_kinds_are_read_from_the_schemas() -> None:
    for api_version, kind in patchmeta.FROM_SCHEMAS:
        assert smp.schema_for(api_version, kind) is not None, kind
    assert patchmeta.kind_schema("v1", "ConfigMap") is None, "served kinds keep their tables"
    pod_spec = smp.schema_for("apps/v1", "Deployment")
    assert pod_spec is not None
    spec = pod_spec.child("spec").child("template").child("spec")
    containers = spec.child("containers")
    assert (containers.merge, containers.merge_key) == (True, "name")
    item = containers.elements
    assert item is not None
    assert item.child("ports").merge_key == "containerPort"
    assert item.child("env").merge_key == "name"
    assert item.child("volumeMounts").merge_key == "mountPath"
    assert (spec.child("volumes").merge_key, spec.child("volumes").retain_keys) == ("name", True)
    service = smp.schema_for("v1", "Service")
    assert service is not None and service.child("spec").child("ports").merge_key == "port"


def test_a_strategic_patch_merges_containers_by_name() -> None:
    live = deployment(
        [
            {"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
            {"name": "side", "image": "busybox"},
        ]
    )
    patch = deployment([{"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}]}])
    schema = smp.schema_for("apps/v1", "Deployment")
    assert schema is not None
    merged = smp.strategic_merge(live, patch, schema=schema)
    assert merged["spec"]["template"]["spec"]["containers"] == [
        {
            "name": "web",
            "image": "nginx:2",
            "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
        },
        {"name": "side", "image": "busybox"},
    ]


def test_a_strategic_patch_can_delete_a_container_and_replace_a_volume_source() -> None:
    live = deployment(
        [{"name": "web", "image": "i"}, {"name": "side", "image": "j"}],
        volumes=[{"name": "data", "emptyDir": {}}],
    )
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "side", "$patch": "delete"}],
                    "volumes": [{"name": "data", "$retainKeys": ["name", "configMap"],
                                 "configMap": {"name": "cm"}}],
                }
            }
        }
    }  # fmt: skip
    schema = smp.schema_for("apps/v1", "Deployment")
    assert schema is not None
    pod_spec = smp.strategic_merge(live, patch, schema=schema)["spec"]["template"]["spec"]
    assert pod_spec["containers"] == [{"name": "web", "image": "i"}]
    assert pod_spec["volumes"] == [{"name": "data", "configMap": {"name": "cm"}}]


def test_server_side_apply_sees_containers_as_a_keyed_list() -> None:
    schema = smp.schema_for("apps/v1", "Deployment")
    structure = fieldsets.structure_for(schema, None)
    paths = fieldsets.leaves(deployment([{"name": "web", "image": "i"}]), structure)
    prefix = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"web"}')
    assert (*prefix, "f:image") in paths and (*prefix, ".") in paths
