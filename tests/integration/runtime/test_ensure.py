"""The shared ensure helper against a real hub: create when missing, update only the
owned fields that differ, and no write at all when the object is already as desired."""

from __future__ import annotations

from pyocm.kube import kinds
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import delete_if_present, ensure


def cm(namespace: str, name: str, **data: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


async def test_ensure_creates_updates_what_differs_and_writes_nothing_when_equal(
    api: Api, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    desired = cm(unique, "owned", a="1")
    desired["metadata"]["labels"] = {"mine": "yes"}  # type: ignore[index]
    made = await ensure(api, kinds.CONFIGMAP, desired)
    assert made["data"] == {"a": "1"}

    # Another writer's label is kept; equal owned fields mean no write.
    await api.patch(
        kinds.CONFIGMAP, "owned", {"metadata": {"labels": {"theirs": "x"}}}, namespace=unique
    )
    before = await api.get(kinds.CONFIGMAP, "owned", namespace=unique)
    same = await ensure(api, kinds.CONFIGMAP, desired)
    assert same["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    after = await api.get(kinds.CONFIGMAP, "owned", namespace=unique)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

    changed = await ensure(api, kinds.CONFIGMAP, cm(unique, "owned", a="2"))
    assert changed["data"] == {"a": "2"}
    assert changed["metadata"]["labels"] == {"mine": "yes", "theirs": "x"}
    assert changed["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]

    # create_only (ManifestWork's CreateOnly): an existing object is left as it is.
    kept = await ensure(api, kinds.CONFIGMAP, cm(unique, "owned", a="3"), create_only=True)
    assert kept["data"] == {"a": "2"}
    assert await delete_if_present(api, kinds.CONFIGMAP, "owned", namespace=unique)
    assert not await delete_if_present(api, kinds.CONFIGMAP, "owned", namespace=unique)


async def test_ensure_with_an_up_to_date_cache_makes_no_request(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    stored = await ensure(api, kinds.CONFIGMAP, cm(unique, "cached", a="1"))
    cache = Store()
    cache.upsert(stored)

    class NoRequests(Api):
        def __init__(self) -> None:  # no connection: any request fails the test
            pass

    assert await ensure(NoRequests(), kinds.CONFIGMAP, cm(unique, "cached", a="1"), cache=cache)
    # Stale cache: the update conflicts, ensure reads afresh and settles it.
    await api.patch(kinds.CONFIGMAP, "cached", {"data": {"a": "9"}}, namespace=unique)
    fixed = await ensure(api, kinds.CONFIGMAP, cm(unique, "cached", a="2"), cache=cache)
    assert fixed["data"] == {"a": "2"}


async def test_ensure_recreates_a_binding_whose_role_ref_changed(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})

    def binding(role: str) -> dict[str, object]:
        return {
            "metadata": {"name": "b", "namespace": unique},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}],
        }

    first = await ensure(api, kinds.ROLE_BINDING, binding("view"))
    second = await ensure(api, kinds.ROLE_BINDING, binding("edit"))
    assert second["roleRef"]["name"] == "edit"
    assert second["metadata"]["uid"] != first["metadata"]["uid"]


async def test_ensure_adds_owner_references_by_uid_and_keeps_others(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    owner = await api.create(kinds.CONFIGMAP, cm(unique, "owner"))
    other = await api.create(kinds.CONFIGMAP, cm(unique, "other"))

    def ref(obj: dict[str, object]) -> dict[str, object]:
        meta = obj["metadata"]
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": meta["uid"]}  # type: ignore[index]

    first = cm(unique, "owned")
    first["metadata"]["ownerReferences"] = [ref(other)]  # type: ignore[index]
    await ensure(api, kinds.CONFIGMAP, first)
    second = cm(unique, "owned")
    second["metadata"]["ownerReferences"] = [ref(owner)]  # type: ignore[index]
    stored = await ensure(api, kinds.CONFIGMAP, second)
    assert [r["name"] for r in stored["metadata"]["ownerReferences"]] == ["other", "owner"]
