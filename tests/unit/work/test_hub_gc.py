"""When a completed work is due for deletion (upstream's ManifestWorkGarbageCollection)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyocm.api import models
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.work.hub.gc import REPLICA_SET_LABEL, seconds_left

DONE_AT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def work(*, ttl: Any = 60, complete: str | None = "True", **meta: Any) -> ManifestWork:
    body: dict[str, Any] = {
        "metadata": {"name": "w", "namespace": "cluster1", **meta},
        "spec": {"workload": {"manifests": []}},
    }
    if ttl is not None:
        body["spec"]["deleteOption"] = {"ttlSecondsAfterFinished": ttl}
    if complete is not None:
        body["status"] = {
            "conditions": [
                {
                    "type": "Complete",
                    "status": complete,
                    "reason": "Complete",
                    "message": "",
                    "lastTransitionTime": "2026-11-25T12:00:00Z",
                }
            ]
        }
    return models.view(ManifestWork, body)


def test_counts_from_the_complete_condition() -> None:
    now = DONE_AT.timestamp() + 20
    assert seconds_left(work(ttl=60), now=now) == 40


def test_past_the_ttl_is_due() -> None:
    assert seconds_left(work(ttl=60), now=DONE_AT.timestamp() + 61) == -1


def test_zero_is_due_at_once() -> None:
    assert seconds_left(work(ttl=0), now=DONE_AT.timestamp() - 1000) == 0


def test_never_without_a_ttl_or_completion() -> None:
    now = DONE_AT.timestamp() + 10_000
    assert seconds_left(work(ttl=None), now=now) is None
    assert seconds_left(work(complete=None), now=now) is None
    assert seconds_left(work(complete="False"), now=now) is None


def test_deleting_or_replica_set_works_are_left_alone() -> None:
    now = DONE_AT.timestamp() + 10_000
    assert seconds_left(work(deletionTimestamp="2026-11-25T12:00:00Z"), now=now) is None
    assert seconds_left(work(labels={REPLICA_SET_LABEL: "mwrs"}), now=now) is None
