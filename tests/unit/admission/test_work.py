"""The work webhook's rules as the hub applies them: each rule with upstream's message,
code and webhook name (as kube-apiserver relays a webhook's denial), the size as upstream
counts it, and the executor check against the hub's RBAC."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pyocm.apiserver.admission import ocm
from pyocm.apiserver.admission.chain import Operation, Plugin, Request
from pyocm.apiserver.admission.work import work_plugins
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.apiserver.config import ServerConfig
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.hooks import webhooks, work
from pyocm.hooks.request import DEFAULT_MANIFEST_LIMIT
from pyocm.kube.status import ApiError

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"
BOB = UserInfo(name="bob", groups=("system:authenticated",))
ADMIN = UserInfo(name="admin", groups=(MASTERS,))
PREFIX = f'admission webhook "{work.WORK_WEBHOOK}" denied the request: '
SET_PREFIX = f'admission webhook "{work.REPLICASET_WEBHOOK}" denied the request: '


def configmap(name: str, namespace: str = "default", **extra: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        **extra,
    }


def secret_of_size(size: int) -> Obj:
    """Upstream's ``newManifest(size)`` in ``common/validator_test.go``."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"namespace": "test", "name": "test"},
        "data": "a" * size,
    }


def a_work(*manifests: Obj, executor: Obj | None = None) -> Obj:
    spec: Obj = {"workload": {"manifests": list(manifests)}}
    if executor is not None:
        spec["executor"] = executor
    return {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": "w", "namespace": "cluster1"},
        "spec": spec,
    }


def executor(namespace: str, name: str) -> Obj:
    return {
        "subject": {
            "type": "ServiceAccount",
            "serviceAccount": {"namespace": namespace, "name": name},
        }
    }


def resource(plural: str) -> ResourceInfo:
    return cast(ResourceInfo, SimpleNamespace(group=work.GROUP, version="v1", plural=plural))


def request(
    obj: Obj | None,
    old: Obj | None = None,
    *,
    user: UserInfo = BOB,
    plural: str = "manifestworks",
    subresource: str = "",
    operation: Operation | None = None,
) -> Request:
    if operation is None:
        operation = Operation.CREATE if old is None else Operation.UPDATE
    ctx = Context(user=user, namespace="cluster1", subresource=subresource)
    return Request(operation, resource(plural), ctx, "cluster1", "w", obj, old)


def state(index: RbacIndex | None = None, **config: Any) -> ServerState:
    settings = ServerConfig(data_dir=Path("/nonexistent"), **config)
    return cast(ServerState, SimpleNamespace(rbac=index or RbacIndex(), config=settings))


def plugin(index: RbacIndex | None = None, *, nil_executor: bool = False) -> Plugin:
    gates = {"NilExecutorValidating": nil_executor}
    return ocm.HookPlugin(state(index, feature_gates=gates), webhooks.MANIFEST_WORK_VALIDATOR)


async def refusal(step: Plugin, req: Request) -> ApiError:
    assert step.handles(req)
    with pytest.raises(ApiError) as caught:
        await step.validate(req)
    assert caught.value.code == 400
    assert caught.value.reason == "BadRequest"
    return caught.value


async def admitted(step: Plugin, req: Request) -> None:
    assert step.handles(req)
    await step.validate(req)


def grant_execute_as(index: RbacIndex, who: str, *names: str, namespace: str = "") -> None:
    """``execute-as`` on ManifestWorks for ``names``: in ``namespace``, or everywhere."""
    role = f"execute-as-{who}-{namespace or 'all'}"
    rule = {
        "apiGroups": [work.GROUP],
        "resources": ["manifestworks"],
        "verbs": ["execute-as"],
        "resourceNames": list(names),
    }
    index.upsert("ClusterRole", {"metadata": {"name": role}, "rules": [rule]})
    binding = {
        "metadata": {"name": role, **({"namespace": namespace} if namespace else {})},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": RBAC, "kind": "User", "name": who}],
    }
    index.upsert("RoleBinding" if namespace else "ClusterRoleBinding", binding)


# --- the manifests -------------------------------------------------------------------


async def test_a_work_needs_manifests() -> None:
    specs: list[Obj] = [{}, {"workload": {}}, {"workload": {"manifests": []}}]
    for spec in specs:
        obj = {**a_work(), "spec": spec}
        err = await refusal(plugin(), request(obj))
        assert err.message == PREFIX + "manifests should not be empty"


async def test_every_manifest_needs_a_name_and_no_generate_name() -> None:
    nameless = configmap("")
    err = await refusal(plugin(), request(a_work(configmap("a"), nameless)))
    assert err.message == PREFIX + "name must be set in manifest"
    del nameless["metadata"]["name"]
    err = await refusal(plugin(), request(a_work(nameless)))
    assert err.message == PREFIX + "name must be set in manifest"
    generated = configmap("b")
    generated["metadata"]["generateName"] = "b-"
    err = await refusal(plugin(), request(a_work(generated)))
    assert err.message == PREFIX + "generateName must not be set in manifest"


async def test_a_manifest_without_kind_is_refused_as_unstructured_decoding_refuses_it() -> None:
    kindless = {"apiVersion": "v1", "metadata": {"name": "a", "namespace": "default"}}
    err = await refusal(plugin(), request(a_work(kindless)))
    assert err.message == PREFIX + (
        "Object 'Kind' is missing in "
        '\'{"apiVersion":"v1","metadata":{"name":"a","namespace":"default"}}\''
    )


async def test_duplicate_manifests_are_refused_with_upstreams_message() -> None:
    err = await refusal(
        plugin(), request(a_work(configmap("test1"), configmap("test2"), configmap("test1")))
    )
    assert err.message == PREFIX + (
        "duplicate manifest for resource default/test1 with resource type v1.ConfigMap"
    )
    deployment = {**configmap("test1"), "apiVersion": "apps/v1", "kind": "Deployment"}
    err = await refusal(plugin(), request(a_work(deployment, deployment)))
    assert err.message.endswith("with resource type apps/v1.Deployment")


async def test_same_name_in_another_namespace_or_kind_is_no_duplicate() -> None:
    secret = {**configmap("test"), "kind": "Secret"}
    await admitted(
        plugin(), request(a_work(configmap("test", "ns1"), configmap("test", "ns2"), secret))
    )


def test_the_size_is_counted_as_upstream_counts_it() -> None:
    # Upstream's unit test expects 512192 for these two: its manifests were built with
    # Unstructured.MarshalJSON, whose encoder ends each with a newline. The webhook
    # receives each manifest as a slice of the compact AdmissionReview JSON, without.
    manifests = [secret_of_size(300 * 1024), secret_of_size(200 * 1024)]
    assert sum(work.manifest_size(m) for m in manifests) == 512192 - 2
    assert work.manifests_problem(manifests, limit=DEFAULT_MANIFEST_LIMIT) == (
        "the size of manifests is 512190 bytes which exceeds the 512000 limit"
    )
    # One byte of JSON is one byte; a length of 128 takes two varint bytes.
    assert work.manifest_size({}) == 1 + 2 + 1
    assert work.manifest_size("x" * 126) == 1 + 128 + 2


async def test_the_limit_is_the_total_and_comes_before_other_checks() -> None:
    big = [secret_of_size(100 * 1024) for _ in range(5)]
    for i, manifest in enumerate(big):
        manifest["metadata"]["name"] = f"s{i}"
    await admitted(plugin(), request(a_work(*big[:4])))
    # Upstream's e2e test: five of 100 KiB are over 500 KiB with their metadata.
    nameless = configmap("")
    err = await refusal(plugin(), request(a_work(*big, nameless)))
    assert err.message.startswith(PREFIX + "the size of manifests is ")
    assert err.message.endswith(" bytes which exceeds the 512000 limit")
    small = ocm.HookPlugin(state(manifest_limit=100), webhooks.MANIFEST_WORK_VALIDATOR)
    err = await refusal(small, request(a_work(configmap("a", data={"k": "v" * 100}))))
    assert "exceeds the 100 limit" in err.message


def test_go_json_matches_gos_encoding() -> None:
    value = {"b": [1, 1.0, 0.5, 1e-7, 1.5e21, 1e20, -0.0, True, None], "a": "<&>\u2028é\n"}
    assert work.go_json(value) == (
        '{"a":"\\u003c\\u0026\\u003e\\u2028é\\n",'
        '"b":[1,1,0.5,1e-7,1.5e+21,100000000000000000000,-0,true,null]}'
    )
    # Sizes are in bytes of UTF-8, as Go counts them.
    assert work.manifest_size("é") == 1 + 4 + 1


async def test_updates_are_checked_and_status_and_deletes_are_not() -> None:
    good = a_work(configmap("a"))
    await admitted(plugin(), request(good, good))
    err = await refusal(plugin(), request(a_work(configmap("a"), configmap("")), good))
    assert err.message == PREFIX + "name must be set in manifest"
    step = plugin()
    assert not step.handles(request(a_work(), good, subresource="status"))
    assert not step.handles(request(None, good, operation=Operation.DELETE))
    assert not step.handles(request(a_work(), plural="appliedmanifestworks"))


# --- the executor --------------------------------------------------------------------


async def test_an_executor_needs_execute_as_for_its_service_account() -> None:
    index = RbacIndex()
    obj = a_work(configmap("a"), executor=executor("ns1", "executor1"))
    err = await refusal(plugin(index), request(obj))
    assert err.message == PREFIX + (
        "user bob cannot manipulate the Manifestwork with executor ns1/executor1 "
        "in namespace cluster1"
    )
    grant_execute_as(index, "bob", "system:serviceaccount:ns1:executor2", namespace="cluster1")
    await refusal(plugin(index), request(obj))
    grant_execute_as(index, "bob", "system:serviceaccount:ns1:executor1", namespace="other")
    await refusal(plugin(index), request(obj))
    grant_execute_as(index, "bob", "system:serviceaccount:ns1:executor1", namespace="cluster1")
    await admitted(plugin(index), request(obj))
    await admitted(plugin(), request(obj, user=ADMIN))


async def test_a_cluster_wide_grant_serves_every_namespace() -> None:
    index = RbacIndex()
    grant_execute_as(index, "bob", "system:serviceaccount:ns1:executor1")
    await admitted(
        plugin(index), request(a_work(configmap("a"), executor=executor("ns1", "executor1")))
    )


async def test_only_a_new_or_changed_executor_is_checked_on_update() -> None:
    old = a_work(configmap("a"), executor=executor("ns1", "executor1"))
    same = a_work(configmap("a"), configmap("b"), executor=executor("ns1", "executor1"))
    await admitted(plugin(), request(same, old))
    changed = a_work(configmap("a"), executor=executor("ns1", "executor2"))
    err = await refusal(plugin(), request(changed, old))
    assert err.message.endswith("with executor ns1/executor2 in namespace cluster1")
    added = a_work(configmap("a"), executor=executor("ns1", "executor1"))
    await refusal(plugin(), request(added, a_work(configmap("a"))))
    # Removing the executor needs nothing (the gate NilExecutorValidating is off).
    await admitted(plugin(), request(a_work(configmap("a")), old))


async def test_an_executor_without_its_service_account_is_refused() -> None:
    obj = a_work(configmap("a"), executor={"subject": {"type": "ServiceAccount"}})
    err = await refusal(plugin(), request(obj))
    assert err.message == PREFIX + "executor service account can not be nil"


async def test_with_nil_executor_validating_a_work_without_executor_needs_the_agents_account() -> (
    None
):
    index = RbacIndex()
    obj = a_work(configmap("a"))
    await admitted(plugin(index), request(obj))
    err = await refusal(plugin(index, nil_executor=True), request(obj))
    assert err.message == PREFIX + (
        "user bob cannot manipulate the Manifestwork with executor /klusterlet-work-sa "
        "in namespace cluster1"
    )
    grant_execute_as(index, "bob", "system:serviceaccount::klusterlet-work-sa")
    await admitted(plugin(index, nil_executor=True), request(obj))


# --- ManifestWorkReplicaSets and the gates --------------------------------------------


def replica_set(*manifests: Obj) -> Obj:
    return {
        "metadata": {"name": "w", "namespace": "cluster1"},
        "spec": {
            "placementRefs": [{"name": "p"}],
            "manifestWorkTemplate": {"workload": {"manifests": list(manifests)}},
        },
    }


async def test_replica_set_templates_get_the_manifest_rules() -> None:
    step = ocm.HookPlugin(state(), webhooks.MANIFEST_WORK_REPLICA_SET_VALIDATOR)
    err = await refusal(step, request(replica_set(), plural="manifestworkreplicasets"))
    assert err.message == SET_PREFIX + "Workload manifests should not be empty"
    err = await refusal(
        step, request(replica_set(configmap("")), replica_set(), plural="manifestworkreplicasets")
    )
    assert err.message == SET_PREFIX + "name must be set in manifest"
    await admitted(step, request(replica_set(configmap("a")), plural="manifestworkreplicasets"))
    assert not step.handles(request(replica_set(), plural="manifestworks"))


def test_the_gates_and_the_limit_come_from_the_server_config() -> None:
    plain = work_plugins(state())
    assert [p.name for p in plain] == [work.WORK_WEBHOOK]
    gated = work_plugins(state(feature_gates={"ManifestWorkReplicaSet": True}, manifest_limit=10))
    assert [p.name for p in gated] == [
        work.WORK_WEBHOOK,
        work.REPLICASET_WEBHOOK,
    ]


async def test_the_configured_limit_applies() -> None:
    (step,) = work_plugins(state(manifest_limit=50))
    err = await refusal(step, request(a_work(configmap("a", data={"k": "v" * 50}))))
    assert err.message.endswith("which exceeds the 50 limit")


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="manifest_limit"):
        ServerConfig(data_dir=Path("/nonexistent"), manifest_limit=0)
