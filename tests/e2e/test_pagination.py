"""List pagination through a real server: limit and continue over one consistent
snapshot, selectors, Exact reads, and the errors a bad request gets."""

from __future__ import annotations

from typing import Any

from pyocm.testing import Client

Obj = dict[str, Any]


async def make_namespace(admin: Client, name: str, count: int) -> str:
    code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert code == 201
    for i in range(count):
        labels = {"parity": "even" if i % 2 == 0 else "odd"}
        code, _ = await admin.post(
            f"/api/v1/namespaces/{name}/configmaps",
            {"metadata": {"name": f"cm-{i}", "labels": labels}, "data": {"v": "1"}},
        )
        assert code == 201
    return f"/api/v1/namespaces/{name}/configmaps"


async def test_pages_come_from_one_snapshot(admin: Client, unique: str) -> None:
    path = await make_namespace(admin, unique, 7)
    code, first = await admin.get(path, params={"limit": "3"})
    assert code == 200
    assert [i["metadata"]["name"] for i in first["items"]] == ["cm-0", "cm-1", "cm-2"]
    assert first["metadata"]["remainingItemCount"] == 4
    token = first["metadata"]["continue"]

    # Changes after the first page do not show in the later pages.
    code, _ = await admin.delete(f"{path}/cm-4")
    assert code == 200
    code, _ = await admin.patch(f"{path}/cm-5", {"data": {"v": "2"}})
    assert code == 200
    code, _ = await admin.post(path, {"metadata": {"name": "cm-9"}})
    assert code == 201

    seen = list(first["items"])
    while token:
        code, page = await admin.get(path, params={"limit": "3", "continue": token})
        assert code == 200, page
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        seen += page["items"]
        token = page["metadata"].get("continue")
    assert [i["metadata"]["name"] for i in seen] == [f"cm-{i}" for i in range(7)]
    assert next(i for i in seen if i["metadata"]["name"] == "cm-5")["data"] == {"v": "1"}

    code, now = await admin.get(path)
    assert "continue" not in now["metadata"]
    assert [i["metadata"]["name"] for i in now["items"]] == [
        "cm-0", "cm-1", "cm-2", "cm-3", "cm-5", "cm-6", "cm-9"
    ]  # fmt: skip


async def test_selectors_fill_pages_with_matches(admin: Client, unique: str) -> None:
    path = await make_namespace(admin, unique, 9)
    code, first = await admin.get(path, params={"limit": "2", "labelSelector": "parity=even"})
    assert code == 200
    assert [i["metadata"]["name"] for i in first["items"]] == ["cm-0", "cm-2"]
    assert "remainingItemCount" not in first["metadata"], "not counted under a selector"
    code, second = await admin.get(
        path,
        params={
            "limit": "2",
            "labelSelector": "parity=even",
            "continue": first["metadata"]["continue"],
        },
    )
    assert [i["metadata"]["name"] for i in second["items"]] == ["cm-4", "cm-6"]
    code, last = await admin.get(
        path,
        params={
            "limit": "2",
            "labelSelector": "parity=even",
            "continue": second["metadata"]["continue"],
        },
    )
    assert [i["metadata"]["name"] for i in last["items"]] == ["cm-8"]
    assert "continue" not in last["metadata"]


async def test_cluster_wide_lists_page_across_namespaces(admin: Client, unique: str) -> None:
    await make_namespace(admin, f"{unique}-a", 2)
    await make_namespace(admin, f"{unique}-b", 2)
    names: list[tuple[str, str]] = []
    token = ""
    while True:
        params = {"limit": "1", "labelSelector": "parity"}
        if token:
            params["continue"] = token
        code, page = await admin.get("/api/v1/configmaps", params=params)
        assert code == 200
        names += [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    mine = [n for n in names if n[0].startswith(unique)]
    assert mine == [
        (f"{unique}-a", "cm-0"),
        (f"{unique}-a", "cm-1"),
        (f"{unique}-b", "cm-0"),
        (f"{unique}-b", "cm-1"),
    ]
    assert len(names) == len(set(names)), "no object twice"


async def test_exact_reads_a_past_revision(admin: Client, unique: str) -> None:
    path = await make_namespace(admin, unique, 2)
    code, before = await admin.get(path)
    revision = before["metadata"]["resourceVersion"]
    code, _ = await admin.delete(f"{path}/cm-0")
    assert code == 200
    code, then = await admin.get(
        path, params={"resourceVersion": revision, "resourceVersionMatch": "Exact"}
    )
    assert code == 200 and then["metadata"]["resourceVersion"] == revision
    assert [i["metadata"]["name"] for i in then["items"]] == ["cm-0", "cm-1"]
    code, newer = await admin.get(
        path, params={"resourceVersion": revision, "resourceVersionMatch": "NotOlderThan"}
    )
    assert [i["metadata"]["name"] for i in newer["items"]] == ["cm-1"]


async def test_bad_paging_requests_are_refused(admin: Client, unique: str) -> None:
    path = await make_namespace(admin, unique, 3)
    code, err = await admin.get(path, params={"continue": "not-a-token"})
    assert code == 400 and err["message"].startswith("continue key is not valid")
    code, err = await admin.get(path, params={"limit": "many"})
    assert code == 400 and err["message"] == 'limit: Invalid value: "many": must be an integer'
    code, first = await admin.get(path, params={"limit": "1"})
    code, err = await admin.get(
        path, params={"continue": first["metadata"]["continue"], "resourceVersion": "5"}
    )
    assert code == 400
    assert err["message"] == "specifying resource version is not allowed when using continue"
