"""Core and events.k8s.io Events are one store seen through two APIs: each API reads,
writes, watches and field-selects every Event in its own shape."""

from __future__ import annotations

import asyncio

from pyocm.kube import kinds
from pyocm.runtime.client import Api


async def test_one_store_two_shapes(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    core = await api.create(
        kinds.CORE_EVENT,
        {
            "metadata": {"name": "legacy", "namespace": unique},
            "involvedObject": {"kind": "Pod", "name": "p1", "namespace": unique},
            "reason": "Started",
            "message": "started the container",
            "type": "Normal",
            "source": {"component": "kubelet"},
            "count": 2,
        },
    )
    assert core["apiVersion"] == "v1" and core["message"] == "started the container"
    modern = await api.create(
        kinds.EVENT,
        {
            "metadata": {"name": "modern", "namespace": unique},
            "eventTime": "2026-11-23T10:00:00.000000Z",
            "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Reconcile",
            "reason": "Synced",
            "note": "synced the object",
            "type": "Normal",
            "regarding": {"kind": "ConfigMap", "name": "c1", "namespace": unique},
        },
    )
    assert modern["apiVersion"] == "events.k8s.io/v1" and modern["note"] == "synced the object"

    as_events = await api.get(kinds.EVENT, "legacy", namespace=unique)
    assert as_events["apiVersion"] == "events.k8s.io/v1"
    assert as_events["note"] == "started the container"
    assert as_events["regarding"]["name"] == "p1"
    assert as_events["deprecatedCount"] == 2 and as_events["deprecatedSource"] == {
        "component": "kubelet"
    }
    assert "message" not in as_events and "involvedObject" not in as_events

    as_core = await api.get(kinds.CORE_EVENT, "modern", namespace=unique)
    assert as_core["apiVersion"] == "v1"
    assert as_core["message"] == "synced the object"
    assert as_core["involvedObject"]["name"] == "c1"
    assert as_core["reportingComponent"] == "example.com/ctl"

    core_listed = await api.list(
        kinds.CORE_EVENT, namespace=unique, fields="involvedObject.name=c1"
    )
    assert [e["metadata"]["name"] for e in core_listed["items"]] == ["modern"]
    events_listed = await api.list(kinds.EVENT, namespace=unique, fields="regarding.name=p1")
    assert [e["metadata"]["name"] for e in events_listed["items"]] == ["legacy"]
    assert all("note" in e for e in (await api.list(kinds.EVENT, namespace=unique))["items"])

    # A write through events.k8s.io is seen through core, and watches speak their API's shape.
    start = events_listed["metadata"]["resourceVersion"]
    seen: list[tuple[str, dict[str, object]]] = []

    async def watch() -> None:
        async for event_type, obj in api.watch(
            kinds.EVENT, namespace=unique, resource_version=start
        ):
            if event_type != "BOOKMARK":
                seen.append((event_type, obj))
                return

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.1)
    updated = await api.get(kinds.EVENT, "modern", namespace=unique)
    # A recurring event counts up in its series (the note itself is immutable).
    updated["series"] = {"count": 2, "lastObservedTime": "2026-11-23T10:05:00.000000Z"}
    await api.update(kinds.EVENT, updated)
    await asyncio.wait_for(watcher, 10)
    assert seen[0][0] == "MODIFIED" and seen[0][1]["series"]["count"] == 2
    assert seen[0][1]["note"] == "synced the object"
    assert (await api.get(kinds.CORE_EVENT, "modern", namespace=unique))["series"]["count"] == 2
