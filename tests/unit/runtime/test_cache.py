"""The informer cache: client-go keys and indexes that follow updates and deletes."""

from __future__ import annotations

from pyocm.runtime.cache import Store, by_label, by_namespace, key_of, split_key


def obj(name: str, namespace: str | None = None, **labels: str) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def test_keys() -> None:
    assert key_of(obj("a", "ns")) == "ns/a"
    assert key_of(obj("a")) == "a"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("a") == (None, "a")


def test_indexes_follow_updates_and_deletes() -> None:
    store = Store()
    store.upsert(obj("a", "ns1", set="x"))
    store.add_index("set", by_label("set"))
    store.add_index("namespace", by_namespace)
    store.upsert(obj("b", "ns2", set="x"))
    assert [key_of(o) for o in store.by_index("set", "x")] == ["ns1/a", "ns2/b"]
    store.upsert(obj("a", "ns1", set="y"))
    assert [key_of(o) for o in store.by_index("set", "x")] == ["ns2/b"]
    assert [key_of(o) for o in store.by_index("set", "y")] == ["ns1/a"]
    assert store.delete("ns2/b") is not None
    assert store.by_index("set", "x") == []
    assert [key_of(o) for o in store.by_index("namespace", "ns1")] == ["ns1/a"]
    assert "ns1/a" in store and "ns2/b" not in store and len(store) == 1
    assert store.delete("missing") is None
