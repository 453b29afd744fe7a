"""The garbage collector's Orphan policy, driven in virtual time."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.controllers.gc import GarbageCollector
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.state import ServerState
from pyocm.base.clock import FakeClock
from pyocm.kube import status
from tests.unit.controllers.conftest import configmap, configmaps, ctx


async def test_an_orphaned_dependent_whose_update_fails_is_retried_not_collected(
    state: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = configmaps(state)
    owner = await state.store.create(info, configmap("owner"), ctx("default"))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    await state.store.create(info, configmap("dep", ownerReferences=[ref]), ctx("default"))
    clock = FakeClock()
    collector = GarbageCollector(state, clock=clock)
    await collector.start()
    # The first write to the dependent loses to a concurrent writer.
    real_update = state.store.update
    conflicts = ["dep"]

    async def update(info: Any, *, name: str, obj: Any, ctx: Any) -> Any:
        if name in conflicts:
            conflicts.remove(name)
            raise status.conflict(resource="configmaps", group="", name=name)
        return await real_update(info, name=name, obj=obj, ctx=ctx)

    monkeypatch.setattr(state.store, "update", update)
    try:
        await state.store.delete(
            info,
            name="owner",
            ctx=ctx("default"),
            options=DeleteOptions(propagation_policy="Orphan"),
        )
        await clock.settle(100)
        assert not conflicts, "the collector never tried to orphan the dependent"
        kept = await state.store.get(info, namespace="default", name="owner")
        assert kept["metadata"]["finalizers"] == ["orphan"]
        clock.advance(10)
        await clock.settle(100)
        dep = await state.store.get(info, namespace="default", name="dep")
        assert not dep["metadata"].get("ownerReferences")
        with pytest.raises(status.ApiError) as gone:
            await state.store.get(info, namespace="default", name="owner")
        assert gone.value.reason == "NotFound"
    finally:
        await collector.loop.stop()
