"""What the simulator's memory cluster does that a real one would not: it allows every
request (no RBAC), and says so."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.sim.memoryspoke import MemorySpoke, simulated_workloads

SA = "system:serviceaccount:default:worker"


def role(name: str) -> dict[str, object]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}],
    }


async def test_dry_run_create_is_allowed_and_stores_nothing() -> None:
    spoke = MemorySpoke()
    answer = await spoke.dry_run_create_as(kinds.ROLE, role("r"), user=SA)
    assert answer["metadata"]["name"] == "r"
    assert await spoke.list(kinds.ROLE) == []


async def test_dry_run_create_of_an_existing_object_is_409() -> None:
    spoke = MemorySpoke()
    await spoke.create(kinds.ROLE, role("r"))
    with pytest.raises(ApiError) as exists:
        await spoke.dry_run_create_as(kinds.ROLE, role("r"), user=SA)
    assert exists.value.code == 409


async def test_access_reviews_are_allowed_and_say_why() -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": SA, "resourceAttributes": {"verb": "delete", "resource": "pods"}},
    }
    answer = await MemorySpoke().create(kinds.SUBJECT_ACCESS_REVIEW, review)
    assert answer["status"]["allowed"] is True
    assert "simulated cluster has no RBAC" in answer["status"]["reason"]


async def test_a_served_crd_makes_its_kind_resolvable() -> None:
    spoke = MemorySpoke()
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    await spoke.create(kinds.CRD, crd)
    widget = await spoke.kind_for(api_version="example.com/v1", kind="Widget")
    assert (widget.plural, widget.namespaced) == ("widgets", True)


async def test_workloads_get_the_simulated_status_at_once() -> None:
    spoke = MemorySpoke(status_for=simulated_workloads(nodes=3))
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    made = await spoke.create(kinds.DEPLOYMENT, deployment)
    assert made["status"]["readyReplicas"] == 2
    available = {c["type"]: c for c in made["status"]["conditions"]}["Available"]
    assert available["status"] == "True"
    assert "simulated" in available["message"]


def owned(name: str, *owners: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "default",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": o["metadata"]["name"],
                    "uid": o["metadata"]["uid"],
                }
                for o in owners
            ],
        },
    }


async def test_a_dependent_goes_with_its_last_owner_and_only_then() -> None:
    spoke = MemorySpoke()
    first = await spoke.create(kinds.CONFIGMAP, owned("first"))
    second = await spoke.create(kinds.CONFIGMAP, owned("second"))
    await spoke.create(kinds.CONFIGMAP, owned("shared", first, second))
    await spoke.create(
        kinds.CONFIGMAP,
        owned("child", await spoke.get(kinds.CONFIGMAP, "shared", namespace="default")),
    )
    await spoke.delete(kinds.CONFIGMAP, "first", namespace="default")
    shared = await spoke.get(kinds.CONFIGMAP, "shared", namespace="default")
    assert [o["name"] for o in shared["metadata"]["ownerReferences"]] == ["second"]
    await spoke.delete(kinds.CONFIGMAP, "second", namespace="default")
    assert [o["metadata"]["name"] for o in await spoke.list(kinds.CONFIGMAP)] == []


async def test_orphaning_keeps_dependents_without_the_owner() -> None:
    spoke = MemorySpoke()
    owner = await spoke.create(kinds.CONFIGMAP, owned("owner"))
    await spoke.create(kinds.CONFIGMAP, owned("kept", owner))
    await spoke.delete(kinds.CONFIGMAP, "owner", namespace="default", propagation="Orphan")
    kept = await spoke.get(kinds.CONFIGMAP, "kept", namespace="default")
    assert kept["metadata"]["ownerReferences"] == []


async def test_lists_are_by_kind_and_namespace() -> None:
    spoke = MemorySpoke()
    for namespace in ("a", "b"):
        await spoke.create(kinds.CONFIGMAP, {"metadata": {"name": "x", "namespace": namespace}})
        await spoke.create(kinds.SECRET, {"metadata": {"name": "x", "namespace": namespace}})
    assert [o["metadata"]["namespace"] for o in await spoke.list(kinds.CONFIGMAP)] == ["a", "b"]
    assert len(await spoke.list(kinds.SECRET, namespace="b")) == 1
    assert len(spoke) == 4
