"""dryRun on every write verb, deletecollection, and the three propagation policies,
through a real server."""

from __future__ import annotations

from typing import Any

import yaml

from pyocm.testing import Client
from tests.support import eventually

Obj = dict[str, Any]
DRY = {"dryRun": "All"}


async def namespace(admin: Client, name: str) -> str:
    code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert code == 201
    return f"/api/v1/namespaces/{name}/configmaps"


async def test_dry_run_changes_nothing_on_any_verb(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    code, shown = await admin.post(
        path, {"metadata": {"name": "a"}, "data": {"v": "1"}}, params=DRY
    )
    assert code == 201 and shown["metadata"]["name"] == "a"
    code, _ = await admin.get(f"{path}/a")
    assert code == 404, "a dry-run create stores nothing"

    code, real = await admin.post(path, {"metadata": {"name": "a"}, "data": {"v": "1"}})
    assert code == 201
    updated = {**real, "data": {"v": "2"}}
    code, shown = await admin.put(f"{path}/a", updated, params=DRY)
    assert code == 200 and shown["data"] == {"v": "2"}
    code, shown = await admin.patch(f"{path}/a", {"data": {"v": "3"}}, params=DRY)
    assert code == 200 and shown["data"] == {"v": "3"}
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a"},
        "data": {"v": "4"},
    }
    code, shown = await admin.request(
        "PATCH",
        f"{path}/a",
        raw=yaml.safe_dump(config).encode(),
        content_type="application/apply-patch+yaml",
        params={"fieldManager": "m", "force": "true", **DRY},
    )
    assert code == 200 and shown["data"] == {"v": "4"}
    code, _ = await admin.delete(f"{path}/a", params=DRY)
    assert code == 200
    code, _ = await admin.delete(path, params={**DRY, "labelSelector": ""})
    assert code == 200
    code, still = await admin.get(f"{path}/a")
    assert code == 200 and still["data"] == {"v": "1"}
    assert still["metadata"]["resourceVersion"] == real["metadata"]["resourceVersion"]


async def test_delete_collection_honours_selectors(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db")):
        code, _ = await admin.post(path, {"metadata": {"name": name, "labels": {"tier": tier}}})
        assert code == 201
    code, deleted = await admin.delete(path, params={"labelSelector": "tier=web"})
    assert code == 200
    assert sorted(i["metadata"]["name"] for i in deleted["items"]) == ["a", "b"]
    code, left = await admin.get(path)
    assert [i["metadata"]["name"] for i in left["items"]] == ["c"]


async def owner_and_dependent(admin: Client, path: str) -> tuple[Obj, Obj]:
    code, owner = await admin.post(path, {"metadata": {"name": "owner"}})
    assert code == 201
    reference = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": True,
    }
    code, dependent = await admin.post(
        path, {"metadata": {"name": "dependent", "ownerReferences": [reference]}}
    )
    assert code == 201
    return owner, dependent


async def test_foreground_deletes_dependents_first(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    await owner_and_dependent(admin, path)
    code, deleting = await admin.delete(f"{path}/owner", body={"propagationPolicy": "Foreground"})
    assert code in (200, 202)
    assert "foregroundDeletion" in deleting["metadata"]["finalizers"]
    assert deleting["metadata"]["deletionTimestamp"]

    async def both_gone() -> bool:
        owner_code, _ = await admin.get(f"{path}/owner")
        dependent_code, _ = await admin.get(f"{path}/dependent")
        return owner_code == 404 and dependent_code == 404

    await eventually(both_gone)


async def test_orphan_keeps_dependents_without_the_reference(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    await owner_and_dependent(admin, path)
    code, _ = await admin.delete(f"{path}/owner", params={"propagationPolicy": "Orphan"})
    assert code in (200, 202)

    async def orphaned() -> bool:
        owner_code, _ = await admin.get(f"{path}/owner")
        dependent_code, dependent = await admin.get(f"{path}/dependent")
        return (
            owner_code == 404
            and dependent_code == 200
            and not dependent["metadata"].get("ownerReferences")
        )

    await eventually(orphaned)


async def test_background_collects_dependents_after_the_owner(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    await owner_and_dependent(admin, path)
    code, _ = await admin.delete(f"{path}/owner", params={"propagationPolicy": "Background"})
    assert code == 200

    async def collected() -> bool:
        dependent_code, _ = await admin.get(f"{path}/dependent")
        return dependent_code == 404

    await eventually(collected)


async def test_bad_delete_options_are_refused(admin: Client, unique: str) -> None:
    path = await namespace(admin, unique)
    code, err = await admin.delete(f"{path}/x", params={"propagationPolicy": "Sideways"})
    assert code == 400 and "propagationPolicy: Unsupported value" in err["message"]
    code, err = await admin.delete(f"{path}/x", params={"dryRun": "Some"})
    assert code == 400 and 'dryRun: Unsupported value: "Some"' in err["message"]
