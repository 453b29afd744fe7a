"""One contract for every :class:`~pyocm.work.agent.spoke.SpokeClient`: the real one over
pyocm's API server, and the fleet simulator's memory. What the work agent relies on is
checked against both, so the simulator's clusters run the agent on the same terms."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.restmapper import NoKindMatchError
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.testing import HubProcess
from pyocm.work.agent.spoke import KubeSpoke, SpokeClient
from tests.support import eventually


@pytest.fixture(params=["kube", "memory"])
async def spoke(request: pytest.FixtureRequest, hub: HubProcess) -> AsyncIterator[SpokeClient]:
    if request.param == "memory":
        yield MemorySpoke()
        return
    async with Api.from_kubeconfig(hub.kubeconfig) as api:
        yield KubeSpoke(api)


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


async def test_objects_get_identity_and_versions(spoke: SpokeClient, unique: str) -> None:
    made = await spoke.create(kinds.CONFIGMAP, configmap(unique, a="1"))
    assert made["metadata"]["uid"]
    assert made["metadata"]["resourceVersion"]
    got = await spoke.get(kinds.CONFIGMAP, unique, namespace="default")
    assert got["data"] == {"a": "1"}
    assert got["metadata"]["uid"] == made["metadata"]["uid"]
    with pytest.raises(ApiError) as again:
        await spoke.create(kinds.CONFIGMAP, configmap(unique))
    assert again.value.code == 409


async def test_stale_update_conflicts(spoke: SpokeClient, unique: str) -> None:
    made = await spoke.create(kinds.CONFIGMAP, configmap(unique, a="1"))
    newer = await spoke.update(kinds.CONFIGMAP, {**made, "data": {"a": "2"}})
    assert newer["metadata"]["resourceVersion"] != made["metadata"]["resourceVersion"]
    with pytest.raises(ApiError) as stale:
        await spoke.update(kinds.CONFIGMAP, {**made, "data": {"a": "3"}})
    assert stale.value.code == 409
    assert (await spoke.get(kinds.CONFIGMAP, unique, namespace="default"))["data"] == {"a": "2"}


async def test_missing_objects_are_404(spoke: SpokeClient, unique: str) -> None:
    for call in (
        spoke.get(kinds.CONFIGMAP, unique, namespace="default"),
        spoke.delete(kinds.CONFIGMAP, unique, namespace="default"),
    ):
        with pytest.raises(ApiError) as missing:
            await call
        assert missing.value.code == 404


async def test_delete_with_a_stale_uid_keeps_the_namesake(spoke: SpokeClient, unique: str) -> None:
    first = await spoke.create(kinds.CONFIGMAP, configmap(unique))
    await spoke.delete(kinds.CONFIGMAP, unique, namespace="default")
    second = await spoke.create(kinds.CONFIGMAP, configmap(unique))
    with pytest.raises(ApiError) as refused:
        await spoke.delete(
            kinds.CONFIGMAP, unique, namespace="default", uid=first["metadata"]["uid"]
        )
    assert refused.value.code == 409
    kept = await spoke.get(kinds.CONFIGMAP, unique, namespace="default")
    assert kept["metadata"]["uid"] == second["metadata"]["uid"]


async def test_finalizers_hold_a_deleted_object(spoke: SpokeClient, unique: str) -> None:
    held = configmap(unique)
    held["metadata"]["finalizers"] = ["example.com/hold"]  # type: ignore[index]
    await spoke.create(kinds.CONFIGMAP, held)
    await spoke.delete(kinds.CONFIGMAP, unique, namespace="default")
    terminating = await spoke.get(kinds.CONFIGMAP, unique, namespace="default")
    assert terminating["metadata"]["deletionTimestamp"]
    terminating["metadata"]["finalizers"] = []
    await spoke.update(kinds.CONFIGMAP, terminating)
    with pytest.raises(ApiError) as gone:
        await spoke.get(kinds.CONFIGMAP, unique, namespace="default")
    assert gone.value.code == 404


async def test_apply_creates_then_changes_fields(spoke: SpokeClient, unique: str) -> None:
    made = await spoke.apply(
        kinds.CONFIGMAP, configmap(unique, a="1"), field_manager="work-agent", force=False
    )
    assert made["data"] == {"a": "1"}
    changed = await spoke.apply(
        kinds.CONFIGMAP, configmap(unique, a="2"), field_manager="work-agent", force=False
    )
    assert changed["data"] == {"a": "2"}
    assert changed["metadata"]["uid"] == made["metadata"]["uid"]


async def test_kinds_resolve_and_unknown_ones_do_not(spoke: SpokeClient) -> None:
    found = await spoke.kind_for(api_version="v1", kind="ConfigMap")
    assert (found.plural, found.namespaced) == ("configmaps", True)
    cluster_scoped = await spoke.kind_for(
        api_version="rbac.authorization.k8s.io/v1", kind="ClusterRole"
    )
    assert cluster_scoped.namespaced is False
    with pytest.raises(NoKindMatchError):
        await spoke.kind_for(api_version="example.com/v1", kind="Nothing")


async def test_owned_objects_go_with_their_owner(spoke: SpokeClient, unique: str) -> None:
    owner = await spoke.create(kinds.CONFIGMAP, configmap(f"{unique}-owner"))
    dependent = configmap(f"{unique}-dependent")
    dependent["metadata"]["ownerReferences"] = [  # type: ignore[index]
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
        }
    ]
    await spoke.create(kinds.CONFIGMAP, dependent)
    await spoke.delete(kinds.CONFIGMAP, f"{unique}-owner", namespace="default")

    async def collected() -> bool:
        try:
            await spoke.get(kinds.CONFIGMAP, f"{unique}-dependent", namespace="default")
        except ApiError as err:
            return err.code == 404
        return False

    assert await eventually(collected, timeout=20)
