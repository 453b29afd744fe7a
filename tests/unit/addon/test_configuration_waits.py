"""An add-on whose install strategy names a Placement that does not exist yet (``kubectl
apply -f dir/`` creates the ClusterManagementAddOn a moment before the Placement) is a
state the configuration controller waits out: one warning line naming the Placement, no
traceback, and the add-on retried with backoff. A real fault in a reconcile still logs
its traceback."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from pyocm.addon.hub import common, configs, install
from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Controller
from pyocm.runtime.informer import Informer

ADDON = "hello-template"
MISSING = 'placement.cluster.open-cluster-management.io "placement-all" not found'


def _cma() -> dict[str, Any]:
    ref = {"namespace": "default", "name": "placement-all"}
    return {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {"name": ADDON, "resourceVersion": "1"},
        "spec": {"installStrategy": {"type": "Placements", "placements": [dict(ref)]}},
        "status": {"installProgressions": [dict(ref)]},
    }


def _controller() -> Controller:
    api = cast(Api, None)  # nothing is written: the pass stops at the missing Placement
    cmas = common.index_cmas(Informer(api, ocm.CLUSTER_MANAGEMENT_ADDON))
    mcas = common.index_mcas(Informer(api, ocm.MANAGED_CLUSTER_ADDON))
    decisions = Informer(api, ocm.PLACEMENT_DECISION)
    decisions.add_index(install.DECISIONS_BY_PLACEMENT, install.decisions_by_placement)
    cmas._apply("ADDED", _cma())
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    reconciler = configs.ConfigurationController(
        api, cmas, mcas, Informer(api, ocm.PLACEMENT), decisions, clock
    )
    return Controller(configs.CONTROLLER_NAME, reconciler.reconcile, clock=clock)


async def test_a_missing_placement_is_one_line_and_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = _controller()
    with caplog.at_level(logging.DEBUG, logger="pyocm.runtime.controller"):
        await controller.process(ADDON)
    lines = [r for r in caplog.records if r.name == "pyocm.runtime.controller"]
    assert [r.getMessage() for r in lines] == [f"{configs.CONTROLLER_NAME}: {ADDON}: {MISSING}"]
    assert lines[0].levelno == logging.WARNING
    assert lines[0].exc_info is None
    assert "Traceback" not in caplog.text
    assert controller.queue.requeues(ADDON) == 1


async def test_a_fault_in_a_reconcile_keeps_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(key: str) -> None:
        raise KeyError(key)

    controller = Controller("broken", broken)
    with caplog.at_level(logging.WARNING, logger="pyocm.runtime.controller"):
        await controller.process("k")
    (record,) = caplog.records
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert controller.queue.requeues("k") == 1
