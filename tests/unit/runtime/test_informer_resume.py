"""An informer whose server goes away watches again from the version it last saw, as
client-go's reflector does: a fleet behind a replica that died resumes without one LIST
per informer. A 410 Gone, or a watch the server refuses, still lists again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Informer

Obj = dict[str, Any]


def config_map(name: str, version: int) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(version)}}


class ScriptedApi:
    """list_all answers the objects at version 10; each watch plays the next script:
    its events, then the error it ends with (or it stays open)."""

    def __init__(self, scripts: list[tuple[list[tuple[str, Obj]], BaseException | None]]):
        self.scripts = scripts
        self.lists = 0
        self.watched_from: list[str | None] = []
        self.done = asyncio.Event()

    async def list_all(self, kind: Any, **_: Any) -> Obj:
        self.lists += 1
        return {"items": [config_map("a", 10)], "metadata": {"resourceVersion": "10"}}

    async def watch(
        self, kind: Any, *, resource_version: str | None = None, **_: Any
    ) -> AsyncIterator[tuple[str, Obj]]:
        self.watched_from.append(resource_version)
        if not self.scripts:
            self.done.set()
            await asyncio.Event().wait()  # open until cancelled
        events, ending = self.scripts.pop(0)
        for event in events:
            yield event
        if ending is not None:
            raise ending


async def run_until_done(api: ScriptedApi) -> Informer:
    informer = Informer(api, kinds.CONFIGMAP)  # type: ignore[arg-type]
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(api.done.wait(), 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return informer


async def test_a_broken_watch_resumes_from_the_last_version_without_a_list() -> None:
    broke = ApiConnectionError("watch of configmaps broke: payload not completed")
    refused = ApiConnectionError("GET /api/v1/configmaps failed: connection refused")
    api = ScriptedApi(
        [
            ([("MODIFIED", config_map("a", 11))], broke),
            ([], refused),  # the replica behind the address is gone a moment
            ([("DELETED", config_map("a", 12)), ("ADDED", config_map("b", 13))], broke),
        ]
    )
    informer = await run_until_done(api)
    assert api.lists == 1
    assert api.watched_from == ["10", "11", "11", "13"]
    # The deletion made while the watch was away came from the replayed watch.
    assert [key for key in informer.store] == ["ns/b"]


async def test_gone_or_a_refused_watch_lists_again() -> None:
    gone = ApiError(code=410, reason="Expired", message="too old resource version: 10 (12)")
    refused = ApiError(code=403, reason="Forbidden", message="configmaps is forbidden")
    api = ScriptedApi([([], gone), ([], refused)])
    await run_until_done(api)
    assert api.lists == 3
    assert api.watched_from == ["10", "10", "10"]
