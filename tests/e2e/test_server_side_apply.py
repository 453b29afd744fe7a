"""Server-side apply through a real server: creation, ownership, conflicts, force,
removal of fields a manager stops applying, and sharing with ordinary writers."""

from __future__ import annotations

from typing import Any

import yaml

from pyocm.testing import Client

Obj = dict[str, Any]
APPLY = "application/apply-patch+yaml"


async def apply(
    admin: Client, path: str, config: Obj, *, manager: str, force: bool = False
) -> tuple[int, Obj]:
    params = {"fieldManager": manager}
    if force:
        params["force"] = "true"
    return await admin.request(
        "PATCH", path, raw=yaml.safe_dump(config).encode(), content_type=APPLY, params=params
    )


def configmap(name: str, data: dict[str, str], **metadata: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **metadata},
        "data": data,
    }


def owners(obj: Obj) -> dict[str, dict[str, Any]]:
    return {
        f"{e['manager']}/{e['operation']}": e["fieldsV1"]
        for e in obj["metadata"].get("managedFields") or []
    }


async def test_apply_creates_owns_conflicts_and_forces(admin: Client, unique: str) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{unique}"
    code, made = await apply(admin, path, configmap(unique, {"a": "1", "b": "2"}), manager="alice")
    assert code == 201, made
    assert owners(made) == {"alice/Apply": {"f:data": {"f:a": {}, "f:b": {}}}}

    same = configmap(unique, {"a": "1"})
    code, shared = await apply(admin, path, same, manager="bob")
    assert code == 200, "the same value is shared, not a conflict"
    assert owners(shared)["bob/Apply"] == {"f:data": {"f:a": {}}}

    code, err = await apply(admin, path, configmap(unique, {"b": "3"}), manager="bob")
    assert code == 409 and err["reason"] == "Conflict"
    assert err["message"] == 'Apply failed with 1 conflict: conflict with "alice" using v1: .data.b'
    assert err["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice" using v1',
            "field": ".data.b",
        }
    ]
    code, forced = await apply(
        admin, path, configmap(unique, {"b": "3"}), manager="bob", force=True
    )
    assert code == 200 and forced["data"] == {"a": "1", "b": "3"}
    assert owners(forced)["alice/Apply"] == {"f:data": {"f:a": {}}}
    assert owners(forced)["bob/Apply"] == {"f:data": {"f:b": {}}}, "bob stopped applying a"


async def test_fields_a_manager_stops_applying_are_removed(admin: Client, unique: str) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{unique}"
    await apply(
        admin, path, configmap(unique, {"a": "1", "b": "2"}, labels={"x": "y"}), manager="alice"
    )
    await apply(admin, path, configmap(unique, {"b": "2"}), manager="bob")
    code, after = await apply(admin, path, configmap(unique, {"a": "1"}), manager="alice")
    assert code == 200
    assert after["data"] == {"a": "1", "b": "2"}, "b stays: bob still applies it"
    assert "labels" not in after["metadata"], "alice no longer applies the label"


async def test_ordinary_writes_take_ownership_of_what_they_change(
    admin: Client, unique: str
) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{unique}"
    await apply(admin, path, configmap(unique, {"a": "1", "b": "2"}), manager="alice")
    code, patched = await admin.patch(
        path, {"data": {"a": "changed"}}, params={"fieldManager": "controller"}
    )
    assert code == 200
    assert owners(patched)["controller/Update"] == {"f:data": {"f:a": {}}}
    assert owners(patched)["alice/Apply"] == {"f:data": {"f:b": {}}}
    code, err = await apply(admin, path, configmap(unique, {"a": "1", "b": "2"}), manager="alice")
    assert code == 409 and 'conflict with "controller"' in err["message"]


async def test_first_apply_to_an_existing_object_respects_what_is_there(
    admin: Client, unique: str
) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{unique}"
    code, _ = await admin.post(
        "/api/v1/namespaces/default/configmaps", configmap(unique, {"a": "1"})
    )
    assert code == 201
    code, err = await apply(admin, path, configmap(unique, {"a": "2"}), manager="alice")
    assert code == 409 and 'conflict with "before-first-apply"' in err["message"]
    code, ok = await apply(admin, path, configmap(unique, {"a": "1", "c": "3"}), manager="alice")
    assert code == 200 and ok["data"] == {"a": "1", "c": "3"}


async def test_custom_resources_merge_keyed_lists(admin: Client, unique: str) -> None:
    """ManagedClusterSet spec.managedNamespaces is a list keyed by name."""
    path = f"/apis/cluster.open-cluster-management.io/v1beta2/managedclustersets/{unique}"

    def cluster_set(*names: str) -> Obj:
        return {
            "apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSet",
            "metadata": {"name": unique},
            "spec": {"managedNamespaces": [{"name": n} for n in names]},
        }

    code, _ = await apply(admin, path, cluster_set("apps"), manager="team-a")
    assert code == 201
    code, merged = await apply(admin, path, cluster_set("tools"), manager="team-b")
    assert code == 200
    assert [n["name"] for n in merged["spec"]["managedNamespaces"]] == ["tools", "apps"]
    code, dropped = await apply(admin, path, cluster_set(), manager="team-a")
    assert code == 200, dropped["message"]
    assert [n["name"] for n in dropped["spec"]["managedNamespaces"]] == ["tools"]


async def test_bad_apply_requests(admin: Client, unique: str) -> None:
    path = f"/api/v1/namespaces/default/configmaps/{unique}"
    code, err = await admin.request(
        "PATCH", path, raw=yaml.safe_dump(configmap(unique, {})).encode(), content_type=APPLY
    )
    assert code == 422 and "fieldManager: Required value" in err["message"]
    code, err = await apply(admin, path, configmap("other", {}), manager="m")
    assert code == 400 and "does not match the name on the URL" in err["message"]
    code, err = await admin.patch(path, {"data": {}}, params={"force": "true"})
    assert code == 422 and "force: Forbidden" in err["message"]
