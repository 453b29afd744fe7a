"""``/healthz`` and ``/readyz`` beside ``/metrics``: kube's answers (``ok``, or 500 naming
the failed checks), and the hub controllers' readiness (caches synced, unless standing by
for the lease)."""

from __future__ import annotations

import aiohttp

from pyocm.cli.metricsserver import serving_metrics
from pyocm.kube import kinds
from pyocm.runtime.manager import Manager


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as answer:
        return answer.status, await answer.text()


async def test_a_failing_check_is_named_and_fails_the_probe() -> None:
    state = {"synced": False}
    ready = {"informer-sync": lambda: state["synced"]}
    async with serving_metrics("127.0.0.1:0", ready=ready) as [url]:
        base = url.removesuffix("/metrics")
        assert await get(f"{base}/readyz") == (
            500,
            "[+]ping ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n",
        )
        assert await get(f"{base}/healthz") == (200, "ok")
        state["synced"] = True
        assert await get(f"{base}/readyz") == (200, "ok")


def test_a_manager_is_ready_standing_by_or_once_synced() -> None:
    manager = Manager(object())  # type: ignore[arg-type]  # nothing runs: no API call
    informer = manager.informer(kinds.NAMESPACE)
    assert manager.ready  # not running its controllers (waiting for the lease)
    manager._active = True  # as _run_all sets it
    assert not manager.ready
    informer._synced.set()
    assert manager.ready
