"""The add-on kinds in both served versions through a real hub: whichever version writes
(create, update, status, merge and JSON patch, server-side apply), every version reads
(get, list, field selection, watch) the object converted as upstream's conversion
webhook converts it; seed 003's example ClusterManagementAddOn reads as v1beta1 with
``defaultConfigs``."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.reference import shared

Obj = dict[str, Any]
GROUP = "addon.open-cluster-management.io"
ANNOTATION = "addon.open-cluster-management.io/v1alpha1-install-namespace"
CMA_BETA = ocm.CLUSTER_MANAGEMENT_ADDON
CMA_ALPHA = Kind(GROUP, "v1alpha1", "ClusterManagementAddOn", "clustermanagementaddons", False)
MCA_BETA = ocm.MANAGED_CLUSTER_ADDON
MCA_ALPHA = Kind(GROUP, "v1alpha1", "ManagedClusterAddOn", "managedclusteraddons", True)
ADC = {"group": GROUP, "resource": "addondeploymentconfigs"}
TEMPLATES = {"group": GROUP, "resource": "addontemplates"}


def kubectl(hub: HubProcess, *args: str, stdin: str = "") -> Obj:
    """Run kubectl against the hub and decode its JSON output."""
    found = shutil.which("kubectl")
    assert found, "kubectl is not on PATH"
    done = subprocess.run(
        [found, f"--kubeconfig={hub.kubeconfig}", *args, "-o", "json"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        # A discovery cache of its own, so kubectl sees this hub's resources.
        env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    decoded: Obj = json.loads(done.stdout)
    return decoded


def resource(kind: Kind) -> str:
    """kubectl's fully qualified resource, pinning the version."""
    return f"{kind.plural}.{kind.version}.{kind.group}"


def seed_cma(name: str) -> Obj:
    path = shared("seeds", "addon-template-examples", "cluster-management-addon.yaml")
    loaded: Obj = yaml.safe_load(path.read_text(encoding="utf-8"))
    loaded["metadata"]["name"] = name
    return loaded


async def namespace(api: Api, name: str) -> str:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})
    return name


@pytest.mark.kubectl
async def test_seed_cma_reads_as_v1beta1_and_patches_in_either_version(
    hub: HubProcess, api: Api, unique: str
) -> None:
    seed = seed_cma(unique)
    kubectl(hub, "create", "-f", "-", stdin=yaml.safe_dump(seed))

    beta = kubectl(hub, "get", f"{resource(CMA_BETA)}/{unique}")
    assert beta["apiVersion"] == f"{GROUP}/v1beta1"
    assert beta["spec"]["defaultConfigs"] == [
        {**TEMPLATES, "name": "hello-template"},
        {**ADC, "namespace": "cluster1", "name": "hello-template"},
    ]
    assert "supportedConfigs" not in beta["spec"]
    preferred = kubectl(hub, "get", "cma", unique)
    assert preferred["apiVersion"] == f"{GROUP}/v1beta1"
    assert preferred["spec"]["defaultConfigs"] == beta["spec"]["defaultConfigs"]
    alpha = kubectl(hub, "get", f"{resource(CMA_ALPHA)}/{unique}")
    assert alpha["spec"]["supportedConfigs"] == seed["spec"]["supportedConfigs"]

    # A merge patch in v1beta1 replaces defaultConfigs; v1alpha1 sees supportedConfigs.
    merged = {"spec": {"defaultConfigs": [{**TEMPLATES, "name": "hello-template-v2"}]}}
    answer = kubectl(
        hub, "patch", resource(CMA_BETA), unique, "--type=merge", "-p", json.dumps(merged)
    )
    assert answer["spec"]["defaultConfigs"] == merged["spec"]["defaultConfigs"]
    alpha = await api.get(CMA_ALPHA, unique)
    assert alpha["spec"]["supportedConfigs"] == [
        {**TEMPLATES, "defaultConfig": {"name": "hello-template-v2"}}
    ]

    # A JSON patch in v1alpha1 adds a supported config without a default.
    added = [{"op": "add", "path": "/spec/supportedConfigs/-", "value": ADC}]
    kubectl(hub, "patch", resource(CMA_ALPHA), unique, "--type=json", "-p", json.dumps(added))
    beta = await api.get(CMA_BETA, unique)
    assert beta["spec"]["defaultConfigs"] == [
        {**TEMPLATES, "name": "hello-template-v2"},
        {**ADC, "name": "__reserved_no_default__"},
    ]


async def test_mca_written_in_each_version_reads_in_the_other(api: Api, unique: str) -> None:
    ns = await namespace(api, unique)
    created = await api.create(
        MCA_BETA,
        {
            "metadata": {"name": "beta", "namespace": ns, "annotations": {ANNOTATION: "ns-b"}},
            "spec": {"configs": [{**ADC, "namespace": ns, "name": "c"}]},
        },
    )
    desired = {"namespace": ns, "name": "c", "specHash": "h"}
    created["status"] = {
        "registrations": [
            {"type": "kubeClient", "kubeClient": {"subject": {"user": "u"}, "driver": "token"}},
            {
                "type": "customSigner",
                "customSigner": {
                    "signerName": "example.com/signer",
                    "subject": {"user": "v", "organizationUnits": ["ou"]},
                },
            },
        ],
        "configReferences": [{**ADC, "desiredConfig": desired}],
    }
    await api.update(MCA_BETA, created, subresource="status")

    alpha = await api.get(MCA_ALPHA, "beta", namespace=ns)
    assert alpha["spec"]["installNamespace"] == "ns-b"
    assert ANNOTATION not in (alpha["metadata"].get("annotations") or {})
    assert alpha["status"]["kubeClientDriver"] == "token"
    assert alpha["status"]["registrations"] == [
        {"signerName": "kubernetes.io/kube-apiserver-client", "subject": {"user": "u"}},
        {"signerName": "example.com/signer", "subject": {"user": "v", "organizationUnit": ["ou"]}},
    ]
    (ref,) = alpha["status"]["configReferences"]
    assert (ref["namespace"], ref["name"], ref["desiredConfig"]) == (ns, "c", desired)

    # A v1alpha1 update of the same object: v1beta1 sees the annotation move.
    alpha["spec"]["installNamespace"] = "ns-c"
    await api.update(MCA_ALPHA, alpha)
    beta = await api.get(MCA_BETA, "beta", namespace=ns)
    assert beta["metadata"]["annotations"][ANNOTATION] == "ns-c"
    assert "installNamespace" not in beta["spec"]
    assert beta["status"]["registrations"][0]["kubeClient"]["driver"] == "token"

    await api.create(
        MCA_ALPHA,
        {"metadata": {"name": "alpha", "namespace": ns}, "spec": {"installNamespace": "ns-a"}},
    )
    listed = await api.list(MCA_BETA, namespace=ns)
    assert [
        (i["apiVersion"], i["metadata"]["name"], i["metadata"]["annotations"][ANNOTATION])
        for i in listed["items"]
    ] == [(f"{GROUP}/v1beta1", "alpha", "ns-a"), (f"{GROUP}/v1beta1", "beta", "ns-c")]
    picked = await api.list(MCA_ALPHA, namespace=ns, fields="metadata.name=beta")
    assert [(i["apiVersion"], i["spec"]["installNamespace"]) for i in picked["items"]] == [
        (f"{GROUP}/v1alpha1", "ns-c")
    ]


async def test_watch_in_v1beta1_sees_v1alpha1_writes_converted(api: Api, unique: str) -> None:
    ns = await namespace(api, unique)
    start = (await api.list(MCA_BETA, namespace=ns))["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []

    async def watch() -> None:
        async for kind, obj in api.watch(
            MCA_BETA, namespace=ns, fields="metadata.name=w", resource_version=start
        ):
            if kind == "BOOKMARK":
                continue
            assert obj["apiVersion"] == f"{GROUP}/v1beta1"
            assert "installNamespace" not in obj["spec"]
            seen.append((kind, obj["metadata"]["annotations"][ANNOTATION]))
            if kind == "DELETED":
                return

    watching = asyncio.create_task(watch())
    await api.create(
        MCA_ALPHA,
        {"metadata": {"name": "w", "namespace": ns}, "spec": {"installNamespace": "one"}},
    )
    await api.create(MCA_ALPHA, {"metadata": {"name": "other", "namespace": ns}, "spec": {}})
    replace = [{"op": "replace", "path": "/spec/installNamespace", "value": "two"}]
    await api.patch(MCA_ALPHA, "w", replace, namespace=ns, type="json")
    await api.delete(MCA_ALPHA, "w", namespace=ns)
    await asyncio.wait_for(watching, timeout=20)
    assert seen == [("ADDED", "one"), ("MODIFIED", "two"), ("DELETED", "two")]


@pytest.mark.kubectl
async def test_server_side_apply_in_each_version(hub: HubProcess, api: Api, unique: str) -> None:
    ns = await namespace(api, unique)
    beta_intent = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "b", "namespace": ns, "annotations": {ANNOTATION: "ns-b"}},
        "spec": {"configs": [{**ADC, "namespace": ns, "name": "c"}]},
    }
    applied = kubectl(
        hub,
        "apply",
        "--server-side",
        "--field-manager=beta",
        "-f",
        "-",
        stdin=json.dumps(beta_intent),
    )
    assert applied["apiVersion"] == f"{GROUP}/v1beta1"
    alpha = await api.get(MCA_ALPHA, "b", namespace=ns)
    assert alpha["spec"] == {
        "installNamespace": "ns-b",
        "configs": [{**ADC, "namespace": ns, "name": "c"}],
    }

    # The same manager applies again without the configs: they go, in storage too.
    del beta_intent["spec"]["configs"]
    kubectl(
        hub,
        "apply",
        "--server-side",
        "--field-manager=beta",
        "-f",
        "-",
        stdin=json.dumps(beta_intent),
    )
    alpha = await api.get(MCA_ALPHA, "b", namespace=ns)
    assert alpha["spec"] == {"installNamespace": "ns-b"}

    alpha_intent = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "a", "namespace": ns},
        "spec": {"installNamespace": "ns-a"},
    }
    kubectl(
        hub,
        "apply",
        "--server-side",
        "--field-manager=alpha",
        "-f",
        "-",
        stdin=json.dumps(alpha_intent),
    )
    beta = await api.apply(
        MCA_BETA,
        {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "ManagedClusterAddOn",
            "metadata": {"name": "a", "namespace": ns},
            "spec": {"configs": [{**ADC, "name": "global"}]},
        },
        field_manager="client",
    )
    assert beta["metadata"]["annotations"] == {ANNOTATION: "ns-a"}
    assert beta["spec"] == {"configs": [{**ADC, "name": "global"}]}
    alpha = await api.get(MCA_ALPHA, "a", namespace=ns)
    assert alpha["spec"] == {"installNamespace": "ns-a", "configs": [{**ADC, "name": "global"}]}
