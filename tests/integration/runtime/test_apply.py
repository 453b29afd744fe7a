"""Server-side apply and write options through the runtime client, against a real hub:
apply creates and updates, a conflict is a 409 naming its fields, force takes them,
dry runs store nothing, and field managers and validation reach the server."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

Obj = dict[str, Any]


def configmap(name: str, data: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


def managers(obj: Obj) -> dict[str, Any]:
    return {
        f"{e['manager']}/{e['operation']}": e["fieldsV1"]
        for e in obj["metadata"].get("managedFields") or []
    }


async def test_apply_creates_then_updates(api: Api, unique: str) -> None:
    made = await api.apply(kinds.CONFIGMAP, configmap(unique, {"a": "1"}), field_manager="alice")
    assert made["data"] == {"a": "1"}
    assert managers(made) == {"alice/Apply": {"f:data": {"f:a": {}}}}
    changed = await api.apply(
        kinds.CONFIGMAP, configmap(unique, {"a": "2", "b": "3"}), field_manager="alice"
    )
    assert changed["data"] == {"a": "2", "b": "3"}
    stored = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    assert stored["data"] == {"a": "2", "b": "3"}


async def test_a_conflict_names_its_fields_and_force_takes_them(api: Api, unique: str) -> None:
    await api.apply(kinds.CONFIGMAP, configmap(unique, {"a": "1"}), field_manager="alice")
    with pytest.raises(ApiError) as caught:
        await api.apply(kinds.CONFIGMAP, configmap(unique, {"a": "2"}), field_manager="bob")
    assert caught.value.code == 409 and caught.value.reason == "Conflict"
    assert caught.value.details is not None
    assert caught.value.details["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice" using v1',
            "field": ".data.a",
        }
    ]
    forced = await api.apply(
        kinds.CONFIGMAP, configmap(unique, {"a": "2"}), field_manager="bob", force=True
    )
    assert forced["data"] == {"a": "2"}
    assert managers(forced) == {"bob/Apply": {"f:data": {"f:a": {}}}}


async def test_dry_runs_change_nothing(api: Api, unique: str) -> None:
    planned = await api.apply(
        kinds.CONFIGMAP, configmap(unique, {"a": "1"}), field_manager="alice", dry_run=True
    )
    assert planned["data"] == {"a": "1"}
    with pytest.raises(ApiError) as missing:
        await api.get(kinds.CONFIGMAP, unique, namespace="default")
    assert missing.value.code == 404

    await api.create(kinds.CONFIGMAP, configmap(unique, {"a": "1"}), dry_run=True)
    with pytest.raises(ApiError):
        await api.get(kinds.CONFIGMAP, unique, namespace="default")

    made = await api.create(kinds.CONFIGMAP, configmap(unique, {"a": "1"}))
    made["data"] = {"a": "changed"}
    await api.update(kinds.CONFIGMAP, made, dry_run=True)
    await api.patch(
        kinds.CONFIGMAP, unique, {"data": {"a": "x"}}, namespace="default", dry_run=True
    )
    await api.delete(kinds.CONFIGMAP, unique, namespace="default", dry_run=True)
    stored = await api.get(kinds.CONFIGMAP, unique, namespace="default")
    assert stored["data"] == {"a": "1"}
    assert stored["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


async def test_ordinary_writes_carry_their_field_manager(api: Api, unique: str) -> None:
    """pyocm's server tracks ordinary writers on objects someone has applied."""
    made = await api.apply(kinds.CONFIGMAP, configmap(unique, {"a": "1"}), field_manager="alice")
    made["data"]["b"] = "2"
    updated = await api.update(kinds.CONFIGMAP, made, field_manager="updater")
    assert managers(updated)["updater/Update"] == {"f:data": {"f:b": {}}}
    patched = await api.patch(
        kinds.CONFIGMAP, unique, {"data": {"c": "3"}}, namespace="default", field_manager="p"
    )
    assert managers(patched)["p/Update"] == {"f:data": {"f:c": {}}}


async def test_strict_field_validation_refuses_unknown_fields(api: Api, unique: str) -> None:
    body = {**configmap(unique, {"a": "1"}), "bogus": True}
    with pytest.raises(ApiError) as caught:
        await api.create(kinds.CONFIGMAP, body, field_validation="Strict")
    assert caught.value.code == 400 and "bogus" in caught.value.message
    made = await api.create(kinds.CONFIGMAP, body, field_validation="Ignore")
    assert "bogus" not in made


async def test_options_the_api_refuses_are_refused_before_sending(api: Api) -> None:
    with pytest.raises(ValueError, match="field_manager"):
        await api.patch(kinds.CONFIGMAP, "x", {}, namespace="default", type="apply")
    with pytest.raises(ValueError, match="force"):
        await api.patch(kinds.CONFIGMAP, "x", {}, namespace="default", force=True)
