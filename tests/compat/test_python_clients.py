"""The lightkube client and the official kubernetes client, unmodified, against a hub."""

from __future__ import annotations

import asyncio
import base64
import threading

from lightkube import AsyncClient, KubeConfig
from lightkube.generic_resource import create_global_resource
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap

from pyocm.pki import csr, keys
from pyocm.testing import HubProcess

ManagedCluster = create_global_resource(
    group="cluster.open-cluster-management.io", version="v1", kind="ManagedCluster", plural="managedclusters"
)


async def test_lightkube_crud_and_watch(hub: HubProcess, unique: str) -> None:
    client = AsyncClient(KubeConfig.from_file(str(hub.kubeconfig)))
    try:
        created = await client.create(ConfigMap(metadata=ObjectMeta(name=unique, namespace="default"), data={"a": "1"}))
        assert created.metadata.uid
        got = await client.get(ConfigMap, unique, namespace="default")
        assert got.data == {"a": "1"}
        mc = await client.create(ManagedCluster(metadata=ObjectMeta(name=unique), spec={"hubAcceptsClient": False}))
        assert mc["spec"]["leaseDurationSeconds"] == 60
        await client.create(ConfigMap(metadata=ObjectMeta(name=f"{unique}-2", namespace="default")))

        async def first_event() -> tuple[str, str]:
            async for event, obj in client.watch(ConfigMap, namespace="default", resource_version=got.metadata.resourceVersion):
                return event, obj.metadata.name
            raise AssertionError("watch ended without events")

        assert await asyncio.wait_for(first_event(), 20) == ("ADDED", f"{unique}-2")
        await client.delete(ConfigMap, unique, namespace="default")
        await client.delete(ManagedCluster, unique)
    finally:
        await client.close()


def test_official_client_crud_watch_and_csr_approval(hub: HubProcess, unique: str) -> None:
    from kubernetes import client as k8s
    from kubernetes import config, watch

    api_client = config.new_client_from_config(str(hub.kubeconfig))
    core = k8s.CoreV1Api(api_client)
    custom = k8s.CustomObjectsApi(api_client)
    certs = k8s.CertificatesV1Api(api_client)
    try:
        core.create_namespaced_config_map("default", {"metadata": {"name": unique}, "data": {"a": "1"}})
        core.patch_namespaced_config_map(unique, "default", {"data": {"b": "2"}})
        assert core.read_namespaced_config_map(unique, "default").data == {"a": "1", "b": "2"}
        obj = custom.create_cluster_custom_object(
            "cluster.open-cluster-management.io", "v1", "managedclusters",
            {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
             "metadata": {"name": unique}, "spec": {"hubAcceptsClient": False}},
        )
        assert obj["spec"]["leaseDurationSeconds"] == 60
        custom.patch_cluster_custom_object(
            "cluster.open-cluster-management.io", "v1", "managedclusters", unique, {"spec": {"hubAcceptsClient": True}}
        )
        rv = core.list_namespaced_config_map("default").metadata.resource_version
        timer = threading.Timer(0.5, lambda: core.create_namespaced_config_map("default", {"metadata": {"name": f"{unique}-w"}}))
        timer.start()
        names = []
        for event in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10):
            names.append(event["object"].metadata.name)
            if event["object"].metadata.name == f"{unique}-w":
                break
        assert f"{unique}-w" in names
        pem = csr.build_csr(keys.generate_private_key(), common_name=f"py-{unique}")
        certs.create_certificate_signing_request({
            "metadata": {"name": unique},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["client auth"]},
        })
        body = certs.read_certificate_signing_request(unique)
        body.status.conditions = [k8s.V1CertificateSigningRequestCondition(type="Approved", status="True", reason="PyTest", message="ok")]
        approved = certs.replace_certificate_signing_request_approval(unique, body)
        assert approved.status.conditions[0].type == "Approved"
    finally:
        api_client.close()
