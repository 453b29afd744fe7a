"""What the simulator's memory cluster does that a real one would not: it allows every
request (no RBAC), and says so."""

from __future__ import annotations

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
