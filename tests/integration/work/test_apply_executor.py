"""A work's executor against real RBAC on a real API server: the SubjectAccessReviews
the apply layer sends, the delete permission an owned resource needs, and RBAC's
escalation guard seen through an impersonated dry run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.work.agent.apply import ExecutorDenied, apply_manifest, resolve
from pyocm.work.agent.apply.executor import Executor
from pyocm.work.agent.spoke import KubeSpoke

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"


@pytest_asyncio.fixture
async def spoke(api: Api) -> AsyncIterator[KubeSpoke]:
    yield KubeSpoke(api)


@pytest_asyncio.fixture
async def owner(api: Api, unique: str) -> OwnerReference:
    made = await api.create(
        kinds.CONFIGMAP, {"metadata": {"name": f"{unique}-owner", "namespace": "default"}}
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": made["metadata"]["name"],
        "uid": made["metadata"]["uid"],
    }


@pytest_asyncio.fixture
async def executor(api: Api, unique: str) -> Executor:
    """A service account of its own, with no permission yet."""
    await api.create(kinds.SERVICE_ACCOUNT, {"metadata": {"name": unique, "namespace": "default"}})
    return {
        "subject": {
            "type": "ServiceAccount",
            "serviceAccount": {"namespace": "default", "name": unique},
        }
    }


async def grant(api: Api, name: str, account: str, rules: list[Obj]) -> None:
    """A Role ``name`` in default with ``rules``, bound to the service account."""
    await api.create(
        kinds.ROLE, {"metadata": {"name": name, "namespace": "default"}, "rules": rules}
    )
    await api.create(
        kinds.ROLE_BINDING,
        {
            "metadata": {"name": name, "namespace": "default"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "default"}],
        },
    )


def configmap(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"a": "1"},
    }


async def apply(spoke: KubeSpoke, manifest: Obj, owner: OwnerReference, executor: Executor) -> Any:
    kind = await resolve(spoke, manifest)
    return await apply_manifest(
        spoke, manifest, kind=kind, strategy=None, owner=owner, executor=executor
    )


async def test_an_executor_without_permission_applies_nothing(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference, executor: Executor
) -> None:
    with pytest.raises(ExecutorDenied) as denied:
        await apply(spoke, configmap(f"{unique}-cm"), owner, executor)
    assert str(denied.value) == (
        f"not allowed to apply the resource  configmaps, default {unique}-cm, will try again in 1m0s"
    )
    with pytest.raises(ApiError) as missing:
        await api.get(kinds.CONFIGMAP, f"{unique}-cm", namespace="default")
    assert missing.value.code == 404


async def test_an_owned_resource_needs_delete_too(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference, executor: Executor
) -> None:
    verbs = ["create", "update", "patch", "get"]
    await grant(
        api, unique, unique, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]
    )
    with pytest.raises(ExecutorDenied):
        await apply(spoke, configmap(f"{unique}-cm"), owner, executor)
    # Orphaned (the work will not delete it): delete is not asked for.
    orphan: OwnerReference = {**owner, "uid": owner["uid"] + "-"}
    applied = await apply(spoke, configmap(f"{unique}-cm"), orphan, executor)
    assert applied.changed and applied.obj["data"] == {"a": "1"}

    await grant(
        api,
        f"{unique}-delete",
        unique,
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["delete"]}],
    )
    owned = await apply(spoke, configmap(f"{unique}-cm"), owner, executor)
    assert owned.obj["metadata"]["ownerReferences"] == [owner]


async def test_rbac_escalation_is_refused(
    spoke: KubeSpoke, api: Api, unique: str, owner: OwnerReference, executor: Executor
) -> None:
    verbs = ["create", "update", "patch", "get", "delete"]
    await grant(
        api, unique, unique, [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": verbs}]
    )
    role = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "Role",
        "metadata": {"name": f"{unique}-reader", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    }
    with pytest.raises(ExecutorDenied) as denied:
        await apply(spoke, role, owner, executor)
    assert str(denied.value) == (
        f"not allowed to apply the resource {RBAC} roles, default {unique}-reader, "
        "error: permission escalation, will try again in 1m0s"
    )
    with pytest.raises(ApiError) as missing:  # the dry run stored nothing
        await api.get(kinds.ROLE, f"{unique}-reader", namespace="default")
    assert missing.value.code == 404

    # Holding what the role grants, the executor may write it.
    await grant(
        api,
        f"{unique}-secrets",
        unique,
        [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    )
    applied = await apply(spoke, role, owner, executor)
    assert applied.changed and applied.obj["rules"] == role["rules"]
    # Once it exists, the dry run's "already exists" is enough.
    assert not (await apply(spoke, role, owner, executor)).changed
