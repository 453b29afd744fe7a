"""Guarded status and finalizer writes: only when something changes, and never over a
newer version."""

from __future__ import annotations

import pytest

from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.status import add_finalizer, remove_finalizer, set_condition


async def test_condition_and_finalizer_writes_are_guarded(api: Api, unique: str) -> None:
    clock = FakeClock()
    made = await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": unique}})
    written = await set_condition(
        api,
        ocm.MANAGED_CLUSTER_SET,
        made,
        clock=clock,
        type="Ready",
        status="True",
        reason="R",
        message="m",
    )
    assert written["status"]["conditions"][0]["type"] == "Ready"
    same = await set_condition(
        api,
        ocm.MANAGED_CLUSTER_SET,
        written,
        clock=clock,
        type="Ready",
        status="True",
        reason="R",
        message="m",
    )
    assert same is written, "an unchanged condition is not written"
    with pytest.raises(ApiError) as stale:
        await set_condition(
            api,
            ocm.MANAGED_CLUSTER_SET,
            made,
            clock=clock,
            type="Ready",
            status="False",
            reason="R",
            message="m",
        )
    assert stale.value.code == 409, "a condition computed from an old version is refused"

    held = await add_finalizer(api, ocm.MANAGED_CLUSTER_SET, written, "example.com/hold")
    assert held["metadata"]["finalizers"] == ["example.com/hold"]
    assert await add_finalizer(api, ocm.MANAGED_CLUSTER_SET, held, "example.com/hold") is held
    released = await remove_finalizer(api, ocm.MANAGED_CLUSTER_SET, held, "example.com/hold")
    assert not released["metadata"].get("finalizers")
