"""A Deployment through the apply layer on a real API server: upstream applies it by the
generic path (library-go has no typed applier for it), so a changed field is put back,
and the fields the server defaults leave the object as it is (the write changes nothing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.work.agent.apply import apply_manifest, resolve
from pyocm.work.agent.spoke import KubeSpoke

Obj = dict[str, Any]


@pytest_asyncio.fixture
async def spoke(api: Api) -> AsyncIterator[KubeSpoke]:
    yield KubeSpoke(api)


def deployment(name: str, replicas: int) -> Obj:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


async def test_a_deployment_is_applied_and_put_back(
    spoke: KubeSpoke, api: Api, unique: str
) -> None:
    manifest = deployment(unique, 2)
    kind = await resolve(spoke, manifest)
    assert kind == kinds.DEPLOYMENT
    created = await apply_manifest(spoke, manifest, kind=kind, strategy=None, owner=None)
    assert created.changed and created.obj["spec"]["replicas"] == 2

    again = await apply_manifest(spoke, manifest, kind=kind, strategy=None, owner=None)
    # Server defaults make the generic comparison differ, so upstream writes again; the
    # object itself does not change.
    assert again.changed
    assert again.obj["metadata"]["resourceVersion"] == created.obj["metadata"]["resourceVersion"]

    live = await api.get(kinds.DEPLOYMENT, unique, namespace="default")
    live["spec"]["replicas"] = 5
    await api.update(kinds.DEPLOYMENT, live)
    restored = await apply_manifest(spoke, manifest, kind=kind, strategy=None, owner=None)
    assert restored.changed and restored.obj["spec"]["replicas"] == 2


def service(name: str, port: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"app": name}, "ports": [{"port": port}]},
    }


async def test_a_service_keeps_its_cluster_ip_through_updates(
    spoke: KubeSpoke, unique: str
) -> None:
    kind = await resolve(spoke, service(unique, 80))
    created = await apply_manifest(spoke, service(unique, 80), kind=kind, strategy=None, owner=None)
    cluster_ip = created.obj["spec"]["clusterIP"]
    assert cluster_ip
    assert created.obj["metadata"]["annotations"]["operator.openshift.io/spec-hash"]
    # Defaulted fields (cluster IP, type, protocol) do not count as drift.
    same = await apply_manifest(spoke, service(unique, 80), kind=kind, strategy=None, owner=None)
    assert not same.changed
    # library-go writes the manifest's spec whole; the server keeps the allocated IP.
    moved = await apply_manifest(spoke, service(unique, 81), kind=kind, strategy=None, owner=None)
    assert moved.changed and moved.obj["spec"]["ports"][0]["port"] == 81
    assert moved.obj["spec"]["clusterIP"] == cluster_ip
