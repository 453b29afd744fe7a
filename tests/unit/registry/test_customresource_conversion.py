"""The store keeps add-on objects in the storage version (v1alpha1) and serves each
request's version: what goes to storage, what comes back, whichever version wrote it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import pytest_asyncio

from pyocm.api import crds
from pyocm.apiserver.admission.chain import Chain
from pyocm.apiserver.apiextensions.customresource import resources_for
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.registry import watch
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.storage import memory
from pyocm.kube.selectors import parse_field_selector

Obj = dict[str, Any]
ADMIN = UserInfo(name="admin", groups=(MASTERS,))
GROUP = "addon.open-cluster-management.io"
ANNOTATION = "addon.open-cluster-management.io/v1alpha1-install-namespace"
ADC = {"group": GROUP, "resource": "addondeploymentconfigs"}


def infos(plural: str) -> dict[str, ResourceInfo]:
    crd = next(c for c in crds.render_all() if c["metadata"]["name"] == f"{plural}.{GROUP}")
    return {info.version: info for info in resources_for(crd)}


MCA = infos("managedclusteraddons")
CMA = infos("clustermanagementaddons")


def body(info: ResourceInfo, **fields: Any) -> Obj:
    """A request body as the endpoints hand it to the store (apiVersion and kind set)."""
    return {"apiVersion": info.group_version, "kind": info.kind, **fields}


def ctx(namespace: str = "") -> Context:
    return Context(user=ADMIN, namespace=namespace)


@pytest_asyncio.fixture
async def store() -> AsyncIterator[Store]:
    backend = memory.new_backend()
    await backend.start()
    yield Store(backend=backend, admission=Chain())
    await backend.close()


async def stored(store: Store, info: ResourceInfo, name: str, namespace: str = "") -> Obj:
    kv = await store.backend.get(info.key(namespace=namespace, name=name))
    assert kv is not None
    raw: Obj = orjson.loads(kv.value)
    return raw


async def test_v1beta1_create_is_stored_in_v1alpha1(store: Store) -> None:
    new = body(
        MCA["v1beta1"],
        metadata={"name": "a", "annotations": {ANNOTATION: "ns1", "keep": "me"}},
        spec={"configs": [{**ADC, "name": "c"}]},
    )
    created = await store.create(MCA["v1beta1"], new, ctx("cluster1"))
    assert created["apiVersion"] == f"{GROUP}/v1beta1"
    assert created["metadata"]["annotations"] == {ANNOTATION: "ns1", "keep": "me"}
    raw = await stored(store, MCA["v1beta1"], "a", "cluster1")
    assert raw["apiVersion"] == f"{GROUP}/v1alpha1"
    assert raw["spec"] == {"installNamespace": "ns1", "configs": [{**ADC, "name": "c"}]}
    assert raw["metadata"]["annotations"] == {"keep": "me"}


async def test_storage_defaults_show_through_conversion(store: Store) -> None:
    """kube-apiserver defaults a stored object in its storage version when it reads it:
    the v1alpha1 installNamespace default is the v1beta1 annotation."""
    new = body(MCA["v1beta1"], metadata={"name": "a"}, spec={})
    created = await store.create(MCA["v1beta1"], new, ctx("cluster1"))
    assert created["metadata"]["annotations"] == {ANNOTATION: "open-cluster-management-agent-addon"}


async def test_cma_in_either_version(store: Store) -> None:
    alpha = {
        **body(CMA["v1alpha1"]),
        "metadata": {"name": "hello"},
        "spec": {
            "supportedConfigs": [
                ADC,
                {**ADC, "resource": "addontemplates", "defaultConfig": {"name": "t"}},
            ]
        },
    }
    await store.create(CMA["v1alpha1"], alpha, ctx())
    beta = await store.get(CMA["v1beta1"], namespace="", name="hello")
    assert beta["spec"]["defaultConfigs"] == [
        {**ADC, "name": "__reserved_no_default__"},
        {**ADC, "resource": "addontemplates", "name": "t"},
    ]
    assert "supportedConfigs" not in beta["spec"]
    beta["spec"]["defaultConfigs"] = [{**ADC, "namespace": "n", "name": "d"}]
    await store.update(CMA["v1beta1"], name="hello", obj=beta, ctx=ctx())
    raw = await stored(store, CMA["v1alpha1"], "hello")
    assert raw["apiVersion"] == f"{GROUP}/v1alpha1"
    assert raw["spec"]["supportedConfigs"] == [
        {**ADC, "defaultConfig": {"namespace": "n", "name": "d"}}
    ]


async def test_patch_applies_to_the_requested_version(store: Store) -> None:
    await store.create(
        MCA["v1alpha1"],
        body(MCA["v1alpha1"], metadata={"name": "a"}, spec={"installNamespace": "x"}),
        ctx("c1"),
    )

    def mutate(current: Obj) -> Obj:
        assert current["apiVersion"] == f"{GROUP}/v1beta1"
        current["metadata"]["annotations"][ANNOTATION] = "y"
        return current

    patched = await store.guaranteed_update(MCA["v1beta1"], name="a", ctx=ctx("c1"), mutate=mutate)
    assert patched["metadata"]["annotations"] == {ANNOTATION: "y"}
    assert (await stored(store, MCA["v1alpha1"], "a", "c1"))["spec"]["installNamespace"] == "y"


async def test_an_object_stored_in_another_version_is_converted_on_read(store: Store) -> None:
    """Objects a hub stored before it converted are in v1beta1 shape: read as such."""
    info = CMA["v1alpha1"]
    legacy = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "ClusterManagementAddOn",
        "metadata": {"name": "old", "uid": "u", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"defaultConfigs": [{**ADC, "name": "d"}]},
        "status": {"defaultConfigReferences": [ADC]},
    }
    await store.backend.create(info.key(namespace="", name="old"), orjson.dumps(legacy))
    alpha = await store.get(info, namespace="", name="old")
    assert alpha["spec"]["supportedConfigs"] == [{**ADC, "defaultConfig": {"name": "d"}}]
    assert alpha["status"] == {"defaultconfigReferences": [ADC]}


async def test_list_and_field_selection_in_either_version(store: Store) -> None:
    for name in ("a", "b"):
        new = body(
            MCA["v1alpha1"], metadata={"name": name}, spec={"installNamespace": f"ns-{name}"}
        )
        await store.create(MCA["v1alpha1"], new, ctx("c1"))
    _, items = await store.list(
        MCA["v1beta1"], namespace="c1", fields=parse_field_selector("metadata.name=b")
    )
    assert [(i["apiVersion"], i["metadata"]["annotations"][ANNOTATION]) for i in items] == [
        (f"{GROUP}/v1beta1", "ns-b")
    ]


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
async def test_watch_events_in_the_watched_version(store: Store, version: str) -> None:
    request = watch.WatchRequest(
        info=MCA[version],
        namespace="c1",
        labels=None,
        fields=parse_field_selector("metadata.name=w"),
        resource_version=str(store.backend.current_revision()),
        send_initial_events=False,
    )
    events = watch.stream(store, request, after=store.backend.current_revision())
    other = "v1beta1" if version == "v1alpha1" else "v1alpha1"
    new = body(MCA[other], metadata={"name": "w", "annotations": {ANNOTATION: "ns"}}, spec={})
    if other == "v1alpha1":
        new = body(MCA[other], metadata={"name": "w"}, spec={"installNamespace": "ns"})
    await store.create(MCA[other], new, ctx("c1"))
    event = await anext(events)
    assert event.type == "ADDED"
    assert event.object["apiVersion"] == f"{GROUP}/{version}"
    if version == "v1beta1":
        assert event.object["metadata"]["annotations"] == {ANNOTATION: "ns"}
        assert "installNamespace" not in event.object["spec"]
    else:
        assert event.object["spec"]["installNamespace"] == "ns"
        assert "annotations" not in event.object["metadata"]
    await events.aclose()


async def test_an_object_stored_without_api_version_is_in_the_storage_version(
    store: Store,
) -> None:
    info = MCA["v1beta1"]
    bare = {"metadata": {"name": "bare", "namespace": "c1"}, "spec": {"installNamespace": "x"}}
    await store.backend.create(info.key(namespace="c1", name="bare"), orjson.dumps(bare))
    beta = await store.get(info, namespace="c1", name="bare")
    assert beta["apiVersion"] == f"{GROUP}/v1beta1"
    assert beta["metadata"]["annotations"] == {ANNOTATION: "x"}
