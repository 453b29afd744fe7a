"""Watch semantics on the wire."""

from __future__ import annotations

import asyncio
import time

from pyocm.testing import Client

CM = "/api/v1/namespaces/default/configmaps"


def configmap(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}}}


async def test_watch_from_revision_replays_changes(admin: Client, unique: str) -> None:
    _, first = await admin.post(CM, configmap(f"{unique}-a", {"w": unique}))
    rv = first["metadata"]["resourceVersion"]
    await admin.patch(f"{CM}/{unique}-a", {"data": {"x": "1"}})
    await admin.post(CM, configmap(f"{unique}-b", {"w": unique}))
    await admin.delete(f"{CM}/{unique}-a")
    events = await admin.watch_lines(CM, params={"resourceVersion": rv, "labelSelector": f"w={unique}"}, limit=3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("MODIFIED", f"{unique}-a"), ("ADDED", f"{unique}-b"), ("DELETED", f"{unique}-a"),
    ]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revisions == sorted(revisions) and revisions[0] > int(rv)


async def test_watch_without_revision_starts_with_current_state(admin: Client, unique: str) -> None:
    await admin.post(CM, configmap(f"{unique}-a", {"w": unique}))
    events = await admin.watch_lines(CM, params={"labelSelector": f"w={unique}"}, limit=1)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == f"{unique}-a"


async def test_selector_transitions(admin: Client, unique: str) -> None:
    _, obj = await admin.post(CM, configmap(f"{unique}-a", {"w": unique, "in": "no"}))
    rv = obj["metadata"]["resourceVersion"]
    await admin.patch(f"{CM}/{unique}-a", {"metadata": {"labels": {"in": "yes"}}})
    await admin.patch(f"{CM}/{unique}-a", {"metadata": {"labels": {"in": "no"}}})
    events = await admin.watch_lines(CM, params={"resourceVersion": rv, "labelSelector": f"w={unique},in=yes"}, limit=2)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


async def test_send_initial_events_ends_with_annotated_bookmark(admin: Client, unique: str) -> None:
    await admin.post(CM, configmap(f"{unique}-a", {"w": unique}))
    params = {"labelSelector": f"w={unique}", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "allowWatchBookmarks": "true"}
    events = await admin.watch_lines(CM, params=params, limit=2)
    assert events[0]["type"] == "ADDED"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["kind"] == "ConfigMap" and events[1]["object"]["apiVersion"] == "v1"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_send_initial_events_on_list_is_invalid(admin: Client) -> None:
    code, status = await admin.get(CM, params={"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"})
    assert code == 422 and status["details"]["kind"] == "ListOptions"


async def test_timeout_seconds_ends_the_stream(admin: Client) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    events = await admin.watch_lines(CM, params={"timeoutSeconds": "1", "labelSelector": "never=matches"}, limit=10, timeout=10)
    assert events == []
    assert loop.time() - start < 5


async def test_future_revision_is_refused(admin: Client) -> None:
    code, status = await admin.get(CM, params={"watch": "true", "resourceVersion": "999999999"})
    assert code == 504 and status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_a_watch_by_name_sees_that_object_only(admin: Client, unique: str) -> None:
    """Watches pinned to one name listen to its key alone; names sharing a prefix
    (c1, c10) must still not leak into each other's watch or list."""
    path = "/api/v1/namespaces/default/configmaps"
    names = [f"{unique}-c1", f"{unique}-c10", f"{unique}-c1x"]
    code, listed = await admin.get(path, params={"fieldSelector": f"metadata.name={names[0]}"})
    assert code == 200 and listed["items"] == []
    start = listed["metadata"]["resourceVersion"]
    for name in names:
        code, _ = await admin.post(path, {"metadata": {"name": name}})
        assert code == 201
    code, _ = await admin.delete(f"{path}/{names[1]}")
    code, _ = await admin.delete(f"{path}/{names[0]}")
    events = await admin.watch_lines(
        path,
        params={"fieldSelector": f"metadata.name={names[0]}", "resourceVersion": start},
        limit=3,
        timeout=3,
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", names[0]),
        ("DELETED", names[0]),
    ]
    code, listed = await admin.get(path, params={"fieldSelector": f"metadata.name={names[2]}"})
    assert [i["metadata"]["name"] for i in listed["items"]] == [names[2]]


async def test_a_bookmark_comes_one_interval_after_the_last_event(
    admin: Client, unique: str
) -> None:
    """The test hub bookmarks every 3 s. An event just after the watch starts must not
    push the next bookmark back to twice the interval (kopf re-watches after 70 s of
    silence, against a 55 s interval by default)."""
    _, mine = await admin.post(CM, configmap(f"{unique}-once"))
    params = {
        "resourceVersion": mine["metadata"]["resourceVersion"],
        "allowWatchBookmarks": "true",
        "fieldSelector": f"metadata.name={unique}-once",
    }
    watching = asyncio.create_task(admin.watch_lines(CM, params=params, limit=2, timeout=20))
    await asyncio.sleep(0.3)
    mine["data"] = {"n": "1"}
    code, _ = await admin.put(f"{CM}/{unique}-once", mine)
    assert code == 200
    written = time.monotonic()
    events = await watching
    assert [e["type"] for e in events] == ["MODIFIED", "BOOKMARK"]
    assert time.monotonic() - written < 4.5  # one interval and slack, not two intervals


async def test_a_quiet_watch_bookmarks_the_current_revision(admin: Client, unique: str) -> None:
    """A watch of one object that does not change still learns how far the store went,
    so it resumes from a recent revision (kube-apiserver's bookmarks do the same)."""
    _, mine = await admin.post(CM, configmap(f"{unique}-quiet"))
    rv = mine["metadata"]["resourceVersion"]
    params = {
        "resourceVersion": rv,
        "allowWatchBookmarks": "true",
        "fieldSelector": f"metadata.name={unique}-quiet",
    }
    watching = asyncio.create_task(admin.watch_lines(CM, params=params, limit=1, timeout=20))
    await asyncio.sleep(1)
    _, other = await admin.post(CM, configmap(f"{unique}-busy"))
    events = await watching
    assert [e["type"] for e in events] == ["BOOKMARK"]
    marked = int(events[0]["object"]["metadata"]["resourceVersion"])
    assert marked >= int(other["metadata"]["resourceVersion"]) > int(rv)
