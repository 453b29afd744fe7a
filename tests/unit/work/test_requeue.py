"""When the work agent looks again: upstream's jitter and per-work backoff, and which
changes of a work wake the manifest work controller."""

from __future__ import annotations

from typing import Any

from pyocm.api import wellknown
from pyocm.base.backoff import Backoff
from pyocm.runtime.informer import Change
from pyocm.work.agent.agent import _spec_or_finalizer_changed
from pyocm.work.agent.requeue import APPLY_BACKOFF, FINALIZE_BACKOFF, Failures, jitter

Obj = dict[str, Any]


def test_jitter_adds_up_to_the_factor() -> None:
    assert jitter(10, 0.9, rand=lambda: 0.0) == 10
    assert jitter(10, 0.9, rand=lambda: 1.0) == 19
    assert jitter(240, 0.5, rand=lambda: 0.5) == 300


def test_failures_back_off_per_key_and_start_over_when_forgotten() -> None:
    failures = Failures(Backoff(duration=0.005, cap=1000.0))
    assert [failures.when("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert failures.when("b") == 0.005
    failures.forget("a")
    assert failures.when("a") == 0.005
    for _ in range(40):
        last = failures.when("a")
    assert last == 1000.0
    assert APPLY_BACKOFF.nominal(0) == 0.005 and APPLY_BACKOFF.cap == 1000.0
    assert FINALIZE_BACKOFF.nominal(0) == 0.05 and FINALIZE_BACKOFF.cap == 60.0


def work(
    *, finalizer: bool = True, spec: Obj | None = None, labels: Obj | None = None, rv: str = "1"
) -> Obj:
    meta: Obj = {"name": "w", "namespace": "c", "resourceVersion": rv}
    if finalizer:
        meta["finalizers"] = [wellknown.MANIFEST_WORK_CLEANUP_FINALIZER]
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "spec": spec or {"workload": {"manifests": []}}, "status": {}}


def test_only_spec_labels_and_the_finalizer_wake_the_manifest_work_controller() -> None:
    wakes = _spec_or_finalizer_changed
    assert wakes(Change(None, work()))
    assert not wakes(Change(None, work(finalizer=False)))
    assert wakes(Change(work(finalizer=False), work()))
    assert not wakes(Change(work(), work(finalizer=False)))
    with_status = work(rv="2")
    with_status["status"] = {"conditions": [{"type": "Applied", "status": "True"}]}
    assert not wakes(Change(work(), with_status))  # its own status writes
    assert wakes(Change(work(), work(spec={"workload": {"manifests": [{"kind": "ConfigMap"}]}})))
    assert wakes(Change(work(), work(labels={"team": "a"})))
    assert wakes(Change(work(), None))  # deleted: only to forget it
