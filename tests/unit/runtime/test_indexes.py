"""Cache indexes in use: the owner index, index keys and counts, informers sharing an
index, and the owner-to-owned mappers built on them."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.cache import Store, by_label, by_owner_uid
from pyocm.runtime.informer import Informer
from pyocm.runtime.owners import enqueue_owned, enqueue_owner, owned_by, owner_references

Obj = dict[str, Any]


def owned(name: str, *owners: Obj, namespace: str = "ns", controller: str = "") -> Obj:
    refs = [
        {
            "apiVersion": "v1",
            "kind": o["kind"],
            "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"],
            **({"controller": True} if o["metadata"]["name"] == controller else {}),
        }
        for o in owners
    ]
    return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": refs}}


def config_map(name: str, uid: str) -> Obj:
    return {"kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns", "uid": uid}}


def test_owner_index_follows_adds_updates_and_deletes() -> None:
    a, b = config_map("a", "uid-a"), config_map("b", "uid-b")
    store = Store()
    store.upsert(owned("x", a))
    store.add_index("owner", by_owner_uid)  # existing objects are indexed at once
    store.upsert(owned("y", a, b))
    assert store.index_keys("owner", "uid-a") == ["ns/x", "ns/y"]
    assert store.index_count("owner", "uid-b") == 1
    store.upsert(owned("x", b))  # x changes owner
    assert store.index_keys("owner", "uid-a") == ["ns/y"]
    assert store.index_keys("owner", "uid-b") == ["ns/x", "ns/y"]
    store.delete("ns/y")
    assert store.index_keys("owner", "uid-a") == []
    assert store.index_count("owner", "uid-a") == 0
    assert [o["metadata"]["name"] for o in store.by_index("owner", "uid-b")] == ["x"]


def test_an_object_without_the_indexed_value_is_filed_nowhere() -> None:
    store = Store()
    store.add_index("set", by_label("set"))
    store.upsert({"metadata": {"name": "plain"}})
    store.upsert({"metadata": {"name": "odd", "ownerReferences": ["x", {"uid": ""}]}})
    store.add_index("owner", by_owner_uid)
    assert store._indexes == {"set": {}, "owner": {}}  # no empty entries kept


def test_a_store_refuses_a_second_index_of_a_name_an_informer_shares_it() -> None:
    store = Store()
    store.add_index("set", by_label("set"))
    with pytest.raises(ValueError):
        store.add_index("set", by_label("other"))
    informer = Informer(Any, kinds.CONFIGMAP)  # type: ignore[arg-type]
    assert informer.add_index("set", by_label("set")) is informer
    informer.add_index("set", by_label("set"))  # a second controller asking: shared
    informer.store.upsert({"metadata": {"name": "a", "namespace": "n", "labels": {"set": "s"}}})
    assert informer.store.index_keys("set", "s") == ["n/a"]


def test_owner_mappers_map_both_ways_through_the_index() -> None:
    a, b = config_map("a", "uid-a"), config_map("b", "uid-b")
    informer = Informer(Any, kinds.CONFIGMAP)  # type: ignore[arg-type]
    to_owned = enqueue_owned(informer)
    informer.store.upsert(owned("x", a, b, controller="b"))
    informer.store.upsert(owned("y", a))
    assert to_owned(a) == ["ns/x", "ns/y"]
    assert to_owned(b) == ["ns/x"]
    assert [o["metadata"]["name"] for o in owned_by(informer, b)] == ["x"]

    x = informer.store.get("ns/x")
    assert x is not None
    assert enqueue_owner(kinds.CONFIGMAP)(x) == ["ns/a", "ns/b"]
    assert enqueue_owner(kinds.CONFIGMAP, controller_only=True)(x) == ["ns/b"]
    assert enqueue_owner(kinds.SECRET)(x) == []  # another kind owns nothing here
    # A cluster-scoped owner's key is its bare name.
    cluster_owned = {
        "metadata": {
            "name": "w",
            "namespace": "c1",
            "ownerReferences": [
                {
                    "apiVersion": "cluster.open-cluster-management.io/v1",
                    "kind": "ManagedCluster",
                    "name": "c1",
                    "uid": "u",
                }
            ],
        }
    }
    assert enqueue_owner(ocm.MANAGED_CLUSTER)(cluster_owned) == ["c1"]
    assert owner_references(cluster_owned, kinds.NAMESPACE) == []
