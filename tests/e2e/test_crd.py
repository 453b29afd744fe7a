"""A user's own CustomResourceDefinition through the whole lifecycle: two versions,
defaults, pruning, the status subresource, kubectl by short name, and deletion that
cleans up instances behind the customresourcecleanup finalizer."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pyocm.kube.kinds import CRD, Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]


def crd(group: str) -> Obj:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "default": 3, "minimum": 1},
                    "color": {"type": "string"},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    version = {
        "served": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wdg"],
            },
            "versions": [
                {**version, "name": "v1", "storage": True},
                {**version, "name": "v1beta1", "storage": False},
            ],
        },
    }


async def established(api: Api, name: str) -> Obj:
    for _ in range(200):
        got = await api.get(CRD, name)
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (got.get("status") or {}).get("conditions") or []
        ):
            return got
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name} not established")


def kubectl(
    hub: HubProcess, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    found = shutil.which("kubectl")
    assert found, "kubectl is not on PATH"
    versioned = Path(found).resolve().parent / "kubectl.1.30"
    binary = str(versioned) if versioned.exists() else found
    return subprocess.run(
        [binary, f"--kubeconfig={hub.kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.kubectl
async def test_user_crd_lifecycle(hub: HubProcess, api: Api, unique: str) -> None:
    group = f"{unique}.example.com"
    await api.create(CRD, crd(group))
    await established(api, f"widgets.{group}")
    v1 = Kind(group, "v1", "Widget", "widgets", True)
    beta = Kind(group, "v1beta1", "Widget", "widgets", True)

    made = await api.create(
        v1,
        {"metadata": {"name": "w1", "namespace": "default"}, "spec": {"color": "red", "extra": 1}},
    )
    assert made["spec"] == {"color": "red", "size": 3}, "defaults applied, unknown fields pruned"
    assert (await api.get(beta, "w1", namespace="default"))["apiVersion"] == f"{group}/v1beta1"
    made["status"] = {"ready": True}
    ignored = await api.update(v1, made)
    assert "status" not in ignored or not ignored["status"].get("ready"), (
        "status changes only through /status"
    )
    written = await api.update(v1, {**ignored, "status": {"ready": True}}, subresource="status")
    assert written["status"] == {"ready": True}

    manifest = json.dumps(
        {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "w2", "namespace": "default"},
            "spec": {"size": 5},
        }
    )
    applied = kubectl(hub, "apply", "-f", "-", stdin=manifest)
    assert applied.returncode == 0, applied.stderr
    listed = kubectl(hub, "get", "wdg", "-n", "default", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(item["metadata"]["name"] for item in json.loads(listed.stdout)["items"]) == [
        "w1",
        "w2",
    ]

    # Deletion: instances go first; one held by a finalizer keeps the CRD Terminating.
    held = await api.get(v1, "w2", namespace="default")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.update(v1, held)
    await api.delete(CRD, f"widgets.{group}")
    terminating = await api.get(CRD, f"widgets.{group}")
    assert "customresourcecleanup.apiextensions.k8s.io" in terminating["metadata"]["finalizers"]
    conditions = {c["type"]: c for c in terminating["status"]["conditions"]}
    assert conditions["Terminating"]["status"] == "True"
    with pytest.raises(ApiError) as refused:
        await api.create(v1, {"metadata": {"name": "w3", "namespace": "default"}})
    assert refused.value.code == 405
    assert (
        refused.value.message
        == "create not allowed while custom resource definition is terminating"
    )

    async def reason() -> str:
        got = await api.get(CRD, f"widgets.{group}")
        return str({c["type"]: c for c in got["status"]["conditions"]}["Terminating"]["reason"])

    for _ in range(100):
        if await reason() == "InstanceDeletionInProgress":
            break
        await asyncio.sleep(0.05)
    assert await reason() == "InstanceDeletionInProgress"

    async def w1_gone() -> bool:
        # The condition is set before the instances are deleted: wait for the delete itself.
        try:
            await api.get(v1, "w1", namespace="default")
        except ApiError as err:
            return err.code == 404
        return False

    await eventually(w1_gone, timeout=10)
    await api.patch(v1, "w2", {"metadata": {"finalizers": None}}, namespace="default")
    for _ in range(100):
        try:
            await api.get(CRD, f"widgets.{group}")
        except ApiError as err:
            assert err.code == 404
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the CRD was not deleted once its instances were gone")
