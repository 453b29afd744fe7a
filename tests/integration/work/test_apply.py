"""The apply layer against a real API server (a pyocm hub process standing in for the
managed cluster) through :class:`~pyocm.work.agent.spoke.KubeSpoke`: each update
strategy's create, no-op, update and drift, CRDs and their instances, both scopes, and
the server's own refusals passed through."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.work.agent.apply import (
    ApplyError,
    ServerSideApplyConflict,
    UpdateStrategy,
    apply_manifest,
    resolve,
)
from pyocm.work.agent.spoke import KubeSpoke
from tests.support import eventually

Obj = dict[str, Any]
HASH = "open-cluster-management.io/config-spec-hash"


@pytest_asyncio.fixture
async def spoke(api: Api) -> AsyncIterator[KubeSpoke]:
    yield KubeSpoke(api)


@pytest_asyncio.fixture
async def owner(api: Api, unique: str) -> OwnerReference:
    """A real object to own what is applied (a ConfigMap stands in for the
    AppliedManifestWork: the server only checks the reference's shape)."""
    made = await api.create(
        kinds.CONFIGMAP, {"metadata": {"name": f"{unique}-owner", "namespace": "default"}}
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": made["metadata"]["name"],
        "uid": made["metadata"]["uid"],
    }


def configmap(name: str, namespace: str = "default", **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


async def apply(
    spoke: KubeSpoke,
    manifest: Obj,
    owner: OwnerReference | None,
    strategy: UpdateStrategy | None = None,
) -> Any:
    kind = await resolve(spoke, manifest)
    return await apply_manifest(spoke, manifest, kind=kind, strategy=strategy, owner=owner)


async def test_update_creates_keeps_and_puts_back(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    manifest = configmap(unique, a="1")
    created = await apply(spoke, manifest, owner)
    assert created.changed and created.kind == kinds.CONFIGMAP
    assert created.obj["metadata"]["ownerReferences"] == [owner]
    again = await apply(spoke, manifest, owner)
    assert not again.changed
    assert again.obj["metadata"]["resourceVersion"] == created.obj["metadata"]["resourceVersion"]

    # Drift: someone edits the data and adds a label; the data goes back, the label stays.
    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    live["data"] = {"a": "changed"}
    live["metadata"]["labels"] = {"theirs": "yes"}
    await api.update(kinds.CONFIGMAP, live)
    restored = await apply(spoke, manifest, owner)
    assert restored.changed and restored.obj["data"] == {"a": "1"}
    assert restored.obj["metadata"]["labels"] == {"theirs": "yes"}

    # Deleted: created again, a new object.
    await api.delete(kinds.CONFIGMAP, unique, namespace="default")
    recreated = await apply(spoke, manifest, owner)
    assert recreated.changed
    assert recreated.obj["metadata"]["uid"] != created.obj["metadata"]["uid"]


async def test_update_orphaning_takes_the_owner_off(
    spoke: KubeSpoke, unique: str, owner: OwnerReference
) -> None:
    manifest = configmap(unique, a="1")
    await apply(spoke, manifest, owner)
    orphaned = await apply(spoke, manifest, {**owner, "uid": owner["uid"] + "-"})
    assert orphaned.changed
    assert not orphaned.obj["metadata"].get("ownerReferences")


async def test_cluster_scoped_objects(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    # A namespace in the manifest of a cluster-scoped kind is ignored, as the API ignores it.
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": unique, "namespace": "default", "labels": {"a": "1"}},
    }
    created = await apply(spoke, namespace, owner)
    assert created.kind == kinds.NAMESPACE and created.changed
    assert created.obj["metadata"]["labels"]["a"] == "1"
    assert not (await apply(spoke, namespace, owner)).changed

    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": unique},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    }
    await apply(spoke, role, owner)
    live = await api.get(kinds.CLUSTER_ROLE, unique)
    live["rules"][0]["verbs"] = ["get", "list"]
    await api.update(kinds.CLUSTER_ROLE, live)
    restored = await apply(spoke, role, owner)
    assert restored.changed and restored.obj["rules"][0]["verbs"] == ["get"]
    assert not (await apply(spoke, role, owner)).changed


def widget_crd(group: str, *, scope: str) -> Obj:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "minimum": 0},
                    "color": {"type": "string"},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


async def served(spoke: KubeSpoke, manifest: Obj) -> Kind:
    """The manifest's kind once the server serves it (an AssertionError until then)."""
    try:
        return await resolve(spoke, manifest)
    except ApplyError as err:
        raise AssertionError(str(err)) from err


def widget(group: str, name: str, namespace: str | None = "default", **spec: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": meta, "spec": spec}


@pytest.mark.parametrize("scope", ["Namespaced", "Cluster"])
async def test_a_crd_then_its_instances(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference, scope: str
) -> None:
    group = f"{unique}.{scope.lower()}.example.com"
    with pytest.raises(ApplyError, match='the server doesn\'t have a resource type "Widget"'):
        await resolve(spoke, widget(group, "w1"))
    crd = await apply(spoke, widget_crd(group, scope=scope), owner)
    assert crd.kind == kinds.CRD
    # The CRD's defaults (singular, listKind, conversion) count as in sync.
    assert not (await apply(spoke, widget_crd(group, scope=scope), owner)).changed

    namespace = "default" if scope == "Namespaced" else None
    instance = widget(group, "w1", namespace, size=1)
    kind = await eventually(lambda: served(spoke, instance))
    assert kind.namespaced == (scope == "Namespaced") and kind.plural == "widgets"
    created = await apply_manifest(spoke, instance, kind=kind, strategy=None, owner=owner)
    assert created.changed and created.obj["spec"] == {"size": 1}

    # The status another writer sets is kept; a changed spec is put back.
    live = created.obj
    live["status"] = {"ready": True}
    live = await api.update(kind, live, subresource="status")
    live["spec"]["size"] = 5
    await api.update(kind, live)
    restored = await apply_manifest(spoke, instance, kind=kind, strategy=None, owner=owner)
    assert restored.changed and restored.obj["spec"] == {"size": 1}
    assert restored.obj["status"] == {"ready": True}
    assert not (
        await apply_manifest(spoke, instance, kind=kind, strategy=None, owner=owner)
    ).changed


async def test_an_invalid_manifest_gets_the_servers_message(
    spoke: KubeSpoke, unique: str, owner: OwnerReference
) -> None:
    bad = configmap(f"{unique}_Bad")
    with pytest.raises(ApiError) as caught:
        await apply(spoke, bad, owner)
    assert caught.value.code == 422
    assert str(caught.value).startswith(
        f'ConfigMap "{unique}_Bad" is invalid: metadata.name: Invalid value'
    )


async def test_create_only(spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference) -> None:
    strategy: UpdateStrategy = {"type": "CreateOnly"}
    created = await apply(spoke, configmap(unique, a="1"), owner, strategy)
    assert created.changed and created.obj["metadata"]["ownerReferences"] == [owner]
    kept = await apply(spoke, configmap(unique, a="2"), owner, strategy)
    assert not kept.changed and kept.obj["data"] == {"a": "1"}

    # Changed on the cluster: left alone. Deleted: created again.
    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    live["data"] = {"a": "theirs"}
    await api.update(kinds.CONFIGMAP, live)
    assert (await apply(spoke, configmap(unique, a="1"), owner, strategy)).obj["data"] == {
        "a": "theirs"
    }
    await api.delete(kinds.CONFIGMAP, unique, namespace="default")
    again = await apply(spoke, configmap(unique, a="1"), owner, strategy)
    assert again.changed and again.obj["data"] == {"a": "1"}


async def test_create_only_owns_an_object_it_finds(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    await api.create(kinds.CONFIGMAP, configmap(unique, a="theirs"))
    found = await apply(spoke, configmap(unique, a="1"), owner, {"type": "CreateOnly"})
    assert found.changed and found.obj["metadata"]["ownerReferences"] == [owner]
    assert found.obj["data"] == {"a": "theirs"}


def ssa(**config: Any) -> UpdateStrategy:
    return {"type": "ServerSideApply", "serverSideApply": config}  # type: ignore[typeddict-item]


async def test_server_side_apply_conflict_and_force(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    created = await apply(spoke, configmap(unique, a="1"), owner, ssa())
    assert created.obj["metadata"]["ownerReferences"] == [owner]
    managers = {entry["manager"] for entry in created.obj["metadata"]["managedFields"]}
    assert "work-agent" in managers

    # Another manager takes the field over; the work agent's next apply conflicts.
    await api.apply(
        kinds.CONFIGMAP, configmap(unique, a="theirs"), field_manager="kubectl", force=True
    )
    with pytest.raises(ServerSideApplyConflict) as caught:
        await apply(spoke, configmap(unique, a="1"), owner, ssa())
    assert 'conflict with "kubectl"' in str(caught.value)
    assert "data.a" in str(caught.value)
    forced = await apply(spoke, configmap(unique, a="1"), owner, ssa(force=True))
    assert forced.obj["data"] == {"a": "1"}


async def test_server_side_apply_puts_back_its_fields_and_recreates(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    manifest = configmap(unique, a="1")
    strategy = ssa(fieldManager="work-agent-custom")
    await apply(spoke, manifest, owner, strategy)
    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    live["data"] = {"a": "changed", "b": "theirs"}
    await api.update(kinds.CONFIGMAP, live)
    # The writer who changed data.a owns it now: only force takes it back.
    with pytest.raises(ServerSideApplyConflict):
        await apply(spoke, manifest, owner, strategy)
    restored = await apply(
        spoke, manifest, owner, ssa(fieldManager="work-agent-custom", force=True)
    )
    assert restored.obj["data"] == {"a": "1", "b": "theirs"}  # only its own field
    await api.delete(kinds.CONFIGMAP, unique, namespace="default")
    assert (await apply(spoke, manifest, owner, strategy)).obj["data"] == {"a": "1"}


async def test_ignore_fields_on_spoke_present(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    strategy = ssa(ignoreFields=[{"condition": "OnSpokePresent", "jsonPaths": [".data.a"]}])
    created = await apply(spoke, configmap(unique, a="1", b="1"), owner, strategy)
    assert created.obj["data"] == {"a": "1", "b": "1"}  # created with the ignored field
    digest = created.obj["metadata"]["annotations"][HASH]

    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    live["data"]["a"] = "spoke"
    await api.update(kinds.CONFIGMAP, live)
    same = await apply(spoke, configmap(unique, a="1", b="1"), owner, strategy)
    assert not same.changed and same.obj["data"]["a"] == "spoke"

    changed = await apply(spoke, configmap(unique, a="2", b="2"), owner, strategy)
    assert changed.obj["data"] == {"a": "spoke", "b": "2"}
    assert changed.obj["metadata"]["annotations"][HASH] != digest


async def test_ignore_fields_on_spoke_change(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    strategy = ssa(
        ignoreFields=[{"condition": "OnSpokeChange", "jsonPaths": [".data.a"]}], force=True
    )
    await apply(spoke, configmap(unique, a="1"), owner, strategy)
    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    live["data"]["a"] = "spoke"
    await api.update(kinds.CONFIGMAP, live)
    kept = await apply(spoke, configmap(unique, a="1"), owner, strategy)
    assert kept.obj["data"]["a"] == "spoke" and not kept.changed
    changed = await apply(spoke, configmap(unique, a="2"), owner, strategy)
    assert changed.obj["data"]["a"] == "2"


async def test_read_only_never_writes(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference
) -> None:
    strategy: UpdateStrategy = {"type": "ReadOnly"}
    absent = await apply(spoke, configmap(unique, a="1"), owner, strategy)
    assert not absent.changed and "uid" not in absent.obj["metadata"]
    with pytest.raises(ApiError) as missing:
        await api.get(kinds.CONFIGMAP, unique, namespace="default")
    assert missing.value.code == 404

    made = await api.create(kinds.CONFIGMAP, configmap(unique, a="theirs"))
    present = await apply(spoke, configmap(unique, a="1"), owner, strategy)
    assert present.obj["metadata"]["uid"] == made["metadata"]["uid"]
    assert present.obj["data"] == {"a": "theirs"}
    live = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    assert live["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    assert not live["metadata"].get("ownerReferences")


async def test_secret_string_data_is_in_sync_once_applied(
    spoke: KubeSpoke, unique: str, owner: OwnerReference
) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": unique, "namespace": "default"},
        "stringData": {"password": "p"},
    }
    created = await apply(spoke, secret, owner)
    assert created.obj["data"] == {"password": "cA=="}
    assert not (await apply(spoke, copy.deepcopy(secret), owner)).changed
