"""Server-side apply's merge and bookkeeping, without a server."""

from __future__ import annotations

import pytest

from pyocm.kube import fieldsets, serversideapply
from pyocm.kube.serversideapply import ConflictError

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object"},
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set"},
                "args": {"type": "array"},
            },
        }
    },
}
STRUCTURE = fieldsets.structure_for(None, SCHEMA)


def obj(**spec: object) -> dict[str, object]:
    return {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "o"}, "spec": spec}


def apply(
    live: dict[str, object] | None, config: dict[str, object], manager: str, **kw: bool
) -> dict[str, object]:
    return serversideapply.apply(
        live,
        config,
        manager=manager,
        force=kw.get("force", False),
        structure=STRUCTURE,
        api_version="x/v1",
        now="t",
    )


def test_leaves_follow_the_list_types() -> None:
    found = serversideapply.owned_paths(
        obj(items=[{"name": "a", "v": 1}], tags=["x"], args=["1", "2"]), STRUCTURE
    )
    assert found == {
        ("f:spec", "f:items", 'k:{"name":"a"}', "."),
        ("f:spec", "f:items", 'k:{"name":"a"}', "f:name"),
        ("f:spec", "f:items", 'k:{"name":"a"}', "f:v"),
        ("f:spec", "f:tags", 'v:"x"'),
        ("f:spec", "f:args"),
    }
    tree = fieldsets.to_fields_v1(found)
    assert fieldsets.from_fields_v1(tree) == found


@pytest.mark.parametrize("reverse", [False, True])
def test_an_item_no_longer_applied_goes_whole_whatever_the_stored_order(reverse: bool) -> None:
    live = apply(None, obj(items=[{"name": "a", "v": 1}, {"name": "b"}]), "m")
    entry = live["metadata"]["managedFields"][0]  # type: ignore[index]
    item = entry["fieldsV1"]["f:spec"]["f:items"]['k:{"name":"a"}']
    if reverse:  # the order a client or another server may have stored the keys in
        entry["fieldsV1"]["f:spec"]["f:items"]['k:{"name":"a"}'] = dict(
            reversed(list(item.items()))
        )
    after = apply(live, obj(items=[{"name": "b"}]), "m")
    assert after["spec"] == {"items": [{"name": "b"}]}


def test_sets_union_and_atomic_lists_conflict() -> None:
    live = apply(None, obj(tags=["x"], args=["1"]), "m1")
    merged = apply(live, obj(tags=["y"]), "m2")
    assert merged["spec"] == {"tags": ["y", "x"], "args": ["1"]}
    with pytest.raises(ConflictError) as caught:
        apply(merged, obj(args=["2"]), "m2")
    assert (
        str(caught.value)
        == 'Apply failed with 1 conflict: conflict with "m1" using x/v1: .spec.args'
    )


def test_conflict_paths_are_described_like_kubectl() -> None:
    assert (
        serversideapply.describe(("f:spec", "f:items", 'k:{"name":"a"}', "f:v"))
        == '.spec.items[name="a"].v'
    )
    assert serversideapply.describe(("f:spec", "f:tags", 'v:"x"')) == '.spec.tags[="x"]'


def test_updates_move_changed_fields_to_their_writer() -> None:
    live = apply(None, obj(items=[{"name": "a", "v": 1}], tags=["x"]), "m")
    new = {**live, "spec": {"items": [{"name": "a", "v": 2}], "tags": ["x"]}}
    serversideapply.track_update(
        live, new, manager="ctl", structure=STRUCTURE, api_version="x/v1", now="t2"
    )
    entries = {e["manager"]: e for e in new["metadata"]["managedFields"]}  # type: ignore[index]
    assert entries["ctl"]["operation"] == "Update"
    assert fieldsets.from_fields_v1(entries["ctl"]["fieldsV1"]) == {
        ("f:spec", "f:items", 'k:{"name":"a"}', "f:v")
    }
    assert ("f:spec", "f:items", 'k:{"name":"a"}', "f:v") not in fieldsets.from_fields_v1(
        entries["m"]["fieldsV1"]
    )
