"""The deploy works of an add-on as addon-framework's work builder makes them: names,
labels, owner, config hash annotation, splitting, manifest configs, orphaning, hooks."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.agent import (
    AgentAddonOptions,
    HealthProberType,
    ProbeField,
    WorkHealthProber,
)
from pyocm.addon.deploy import probes, workbuilder, works

Obj = dict[str, Any]


def mca(refs: list[Obj] | None = None) -> Any:
    status = {"configReferences": refs} if refs is not None else {}
    return {
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "hello", "namespace": "c1", "uid": "u-1"},
        "status": status,
    }


def configmap(name: str, *, data: str = "", **annotations: str) -> Obj:
    meta: Obj = {"name": name, "namespace": "agent"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"d": data}}


def deployment(name: str, replicas: int | None = None) -> Obj:
    spec: Obj = {} if replicas is None else {"replicas": replicas}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "agent"},
        "spec": spec,
    }


def daemonset(name: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "agent"},
    }


def job(name: str) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "agent",
            "annotations": {"addon.open-cluster-management.io/addon-pre-delete": ""},
        },
    }


def build(objects: list[Obj], **options: Any) -> workbuilder.Built:
    options.setdefault("manifest_configs", [])
    options.setdefault("existing", [])
    built = works.build_deploy_works(mca(options.pop("refs", None)), objects, **options)
    assert built is not None
    return built


def manifest_names(work: Any) -> list[str]:
    return [m["metadata"]["name"] for m in work["spec"]["workload"]["manifests"]]


def test_a_deploy_work_is_named_labelled_and_owned_by_the_addon() -> None:
    built = build([configmap("a")])
    assert built.delete == []
    [work] = built.apply
    assert work["apiVersion"] == "work.open-cluster-management.io/v1"
    assert work["metadata"] == {
        "name": "addon-hello-deploy-0",
        "namespace": "c1",
        "labels": {"open-cluster-management.io/addon-name": "hello"},
        "ownerReferences": [
            {
                "apiVersion": "addon.open-cluster-management.io/v1beta1",
                "kind": "ManagedClusterAddOn",
                "name": "hello",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert work["spec"] == {"workload": {"manifests": [configmap("a")]}}


def test_config_spec_hashes_are_annotated_as_upstream_writes_them() -> None:
    refs = [
        {
            "group": "addon.open-cluster-management.io",
            "resource": "addondeploymentconfigs",
            "desiredConfig": {"namespace": "ns", "name": "cfg", "specHash": "abc"},
        },
        {"resource": "configmaps", "desiredConfig": {"name": "plain", "specHash": "def"}},
        {"resource": "secrets"},
    ]
    [work] = build([configmap("a")], refs=refs).apply
    assert work["metadata"]["annotations"] == {
        "open-cluster-management.io/config-spec-hash": '{"addondeploymentconfigs.addon.'
        'open-cluster-management.io/ns/cfg":"abc","configmaps//plain":"def"}'
    }


def test_references_without_a_desired_config_give_an_empty_map() -> None:
    [work] = build([configmap("a")], refs=[{"resource": "secrets"}]).apply
    assert work["metadata"]["annotations"] == {"open-cluster-management.io/config-spec-hash": "{}"}


def test_manifest_size_is_the_protobuf_size_of_the_go_json() -> None:
    # '{"a":"b"}' is 9 bytes; RawExtension adds tag and length, Manifest again.
    assert workbuilder.size({"a": "b"}) == 13
    assert workbuilder.size({"a": "x" * 200}) == 208 + 3 + 3


def test_past_the_limit_objects_are_split_largest_first_across_works() -> None:
    objects = [configmap(f"m{i}", data="x" * (100 + i)) for i in range(5)]
    limit = int(workbuilder.size(objects[4]) * 2.5 / workbuilder.THRESHOLD) + 1
    built = build(objects, manifests_limit=limit)
    assert [w["metadata"]["name"] for w in built.apply] == [
        "addon-hello-deploy-0",
        "addon-hello-deploy-1",
        "addon-hello-deploy-2",
    ]
    assert [manifest_names(w) for w in built.apply] == [["m4", "m3"], ["m2", "m1"], ["m0"]]


def test_objects_stay_in_their_work_new_ones_go_where_there_is_room() -> None:
    objects = [configmap(f"m{i}", data="x" * 100) for i in range(4)]
    limit = int(workbuilder.size(objects[0]) * 3.5 / workbuilder.THRESHOLD)
    first = build(objects, manifests_limit=limit).apply
    assert [manifest_names(w) for w in first] == [["m0", "m1", "m2"], ["m3"]]
    # m0 goes, m4 comes: m4 fits in the work with most room, the others do not move.
    wanted = [*objects[1:], configmap("m4", data="x" * 100)]
    second = build(wanted, manifests_limit=limit, existing=first).apply
    assert [manifest_names(w) for w in second] == [["m1", "m2"], ["m3", "m4"]]
    assert [w["metadata"]["name"] for w in second] == [
        "addon-hello-deploy-0",
        "addon-hello-deploy-1",
    ]


def test_a_work_left_empty_is_deleted() -> None:
    objects = [configmap(f"m{i}", data="x" * 100) for i in range(2)]
    limit = int(workbuilder.size(objects[0]) * 1.5 / workbuilder.THRESHOLD)
    first = build(objects, manifests_limit=limit).apply
    assert len(first) == 2
    second = build(objects[:1], manifests_limit=limit, existing=first)
    assert [w["metadata"]["name"] for w in second.apply] == ["addon-hello-deploy-0"]
    assert [w["metadata"]["name"] for w in second.delete] == ["addon-hello-deploy-1"]


def test_an_object_without_kind_cannot_be_built() -> None:
    with pytest.raises(workbuilder.BuildError, match="got empty kind/version from object"):
        build([{"apiVersion": "v1", "metadata": {"name": "x"}}])


def test_nothing_to_deploy_builds_nothing() -> None:
    assert works.build_deploy_works(mca(), [], manifest_configs=[], existing=[]) is None
    assert works.build_deploy_works(mca(), [job("j")], manifest_configs=[], existing=[]) is None


def test_orphaned_objects_get_a_selectively_orphan_delete_option() -> None:
    orphan = "addon.open-cluster-management.io/deletion-orphan"
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "i", "namespace": "agent", "annotations": {orphan: ""}},
    }
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "agent", "annotations": {orphan: ""}},
    }
    objects = [configmap("kept", **{orphan: "yes"}), configmap("gone"), ingress, policy]
    [work] = build(objects).apply
    assert work["spec"]["deleteOption"] == {
        "propagationPolicy": "SelectivelyOrphan",
        "selectivelyOrphans": {
            "orphaningRules": [
                {"group": "", "resource": "configmaps", "name": "kept", "namespace": "agent"},
                {
                    "group": "networking.k8s.io",
                    "resource": "ingresses",
                    "name": "i",
                    "namespace": "agent",
                },
                {
                    "group": "networking.k8s.io",
                    "resource": "networkpolicies",
                    "name": "p",
                    "namespace": "agent",
                },
            ]
        },
    }
    [plain] = build([configmap("gone")]).apply
    assert "deleteOption" not in plain["spec"]


def test_hooks_go_to_the_pre_delete_work_only() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "agent",
            "labels": {"addon.open-cluster-management.io/addon-pre-delete": ""},
        },
    }
    objects = [configmap("a"), job("cleanup"), pod]
    [work] = build(objects).apply
    assert manifest_names(work) == ["a"]
    hook = works.build_hook_work(mca(), objects)
    assert hook is not None
    assert hook["metadata"]["name"] == "addon-hello-pre-delete"
    assert hook["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert manifest_names(hook) == ["cleanup", "p"]
    assert hook["spec"]["manifestConfigs"] == [
        {
            "resourceIdentifier": {
                "group": "batch",
                "resource": "jobs",
                "name": "cleanup",
                "namespace": "agent",
            },
            "feedbackRules": [{"type": "WellKnownStatus"}],
        },
        {
            "resourceIdentifier": {
                "group": "",
                "resource": "pods",
                "name": "p",
                "namespace": "agent",
            },
            "feedbackRules": [{"type": "WellKnownStatus"}],
        },
    ]
    assert works.build_hook_work(mca(), [configmap("a")]) is None


def identity(resource: str, name: str) -> Obj:
    return {"group": "apps", "resource": resource, "name": name, "namespace": "agent"}


WELL_KNOWN = [{"type": "WellKnownStatus"}]


def test_workload_availability_asks_feedback_of_deployments_and_daemonsets() -> None:
    options = AgentAddonOptions(name="hello", health=HealthProberType.WORKLOAD_AVAILABILITY)
    objects = [deployment("d", replicas=0), daemonset("ds"), configmap("c")]
    assert probes.manifest_configs(options, objects) == [
        {"resourceIdentifier": identity("deployments", "d"), "feedbackRules": WELL_KNOWN},
        {"resourceIdentifier": identity("daemonsets", "ds"), "feedbackRules": WELL_KNOWN},
    ]
    deployments = AgentAddonOptions(name="hello", health=HealthProberType.DEPLOYMENT_AVAILABILITY)
    assert probes.manifest_configs(deployments, objects) == [
        {"resourceIdentifier": identity("deployments", "d"), "feedbackRules": WELL_KNOWN}
    ]
    lease = AgentAddonOptions(name="hello", health=HealthProberType.LEASE)
    assert probes.manifest_configs(lease, objects) == []


def test_the_addons_manifest_configs_are_merged_over_the_probers() -> None:
    path = {"type": "JSONPaths", "jsonPaths": [{"name": "ready", "path": ".status.ready"}]}
    mine: list[Any] = [
        {
            "resourceIdentifier": identity("deployments", "d"),
            "feedbackRules": [
                {"type": "WellKnownStatus"},
                path,
                {"type": "JSONPaths", "jsonPaths": [{"name": "ready", "path": ".other"}]},
            ],
            "updateStrategy": {"type": "ServerSideApply"},
        },
        {"resourceIdentifier": identity("deployments", "other"), "feedbackRules": [path]},
    ]
    options = AgentAddonOptions(
        name="hello", health=HealthProberType.WORKLOAD_AVAILABILITY, manifest_configs=mine
    )
    configs = probes.manifest_configs(options, [deployment("d")])
    assert configs == [
        {
            "resourceIdentifier": identity("deployments", "d"),
            "feedbackRules": [{"type": "WellKnownStatus"}, path],
            "updateStrategy": {"type": "ServerSideApply"},
        },
        {"resourceIdentifier": identity("deployments", "other"), "feedbackRules": [path]},
    ]
    # and every deploy work carries them
    [work] = build([deployment("d")], manifest_configs=configs).apply
    assert work["spec"]["manifestConfigs"] == configs


def test_a_work_prober_asks_for_its_probe_fields() -> None:
    field = ProbeField(
        {"group": "apps", "resource": "deployments", "name": "*", "namespace": "*"}, WELL_KNOWN
    )
    options = AgentAddonOptions(
        name="hello", health=HealthProberType.WORK, work_prober=WorkHealthProber([field])
    )
    assert probes.manifest_configs(options, [deployment("d")]) == [
        {"resourceIdentifier": dict(field.resource), "feedbackRules": WELL_KNOWN}
    ]
    fields, checker = probes.probe_fields(options, [deployment("d")])
    assert fields == [field] and checker is None


def test_deployments_scaled_to_zero_are_not_probed() -> None:
    options = AgentAddonOptions(name="hello", health=HealthProberType.DEPLOYMENT_AVAILABILITY)
    fields, checker = probes.probe_fields(options, [deployment("zero", 0), deployment("unset")])
    assert [f.resource["name"] for f in fields] == ["unset"]
    assert checker is not None
