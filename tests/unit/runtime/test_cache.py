"""The informer cache: client-go keys and indexes that follow updates and deletes."""

from __future__ import annotations

import pytest

from pyocm.kube.sharing import SharedValues
from pyocm.runtime.cache import (
    SHARED_STRING_MAX,
    Store,
    by_label,
    by_namespace,
    key_of,
    split_key,
)


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


def _fresh(text: str) -> str:
    """An equal string that is not the same object (as each parsed response has)."""
    return "".join(list(text))


def test_cached_objects_share_their_short_strings() -> None:
    long = "x" * (SHARED_STRING_MAX + 1)
    store = Store()
    for name in ("a", "b"):
        condition = {"type": _fresh("ManagedClusterConditionAvailable"), "status": _fresh("True")}
        store.upsert(
            {
                "metadata": {"name": name, "labels": {"tier": _fresh("gold")}},
                "status": {"conditions": [condition], "notes": [_fresh("ok"), _fresh(long)]},
            }
        )
    a, b = store.get("a"), store.get("b")
    assert a is not None and b is not None
    assert a["status"]["conditions"][0]["type"] is b["status"]["conditions"][0]["type"]
    assert a["metadata"]["labels"]["tier"] is b["metadata"]["labels"]["tier"]
    assert a["status"]["notes"][0] is b["status"]["notes"][0]
    # Long strings (certificates, messages) are each object's own: rarely repeated.
    assert a["status"]["notes"][1] == b["status"]["notes"][1]
    assert a["status"]["notes"][1] is not b["status"]["notes"][1]
    assert a["status"]["conditions"] == [
        {"type": "ManagedClusterConditionAvailable", "status": "True"}
    ]


def test_the_shared_table_is_bounded_and_skips_values_new_on_every_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pyocm.runtime import cache

    monkeypatch.setattr(cache, "_SHARED", SharedValues(lambda text: text, limit=4))
    store = Store()
    for i in range(20):
        meta = {"name": f"lease-{i}", "resourceVersion": str(1000 + i), "uid": f"u{i}"}
        store.upsert({"metadata": meta, "spec": {"renewTime": f"2026-11-25T00:00:{i:02}Z"}})
        assert len(cache._SHARED) <= 4
    assert not any(v in cache._SHARED for v in ("1019", "u19", "2026-11-25T00:00:19Z"))
    held = store.get("lease-19")
    assert held is not None and held["metadata"]["resourceVersion"] == "1019"
