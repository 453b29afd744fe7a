"""The clock-sync controller judges renewals only, as upstream's does."""

from __future__ import annotations

from pyocm.registration.hub.manager import _renewed
from pyocm.runtime.informer import Change


def lease(renew_time: str) -> dict[str, object]:
    return {"metadata": {"name": "managed-cluster-lease"}, "spec": {"renewTime": renew_time}}


def test_a_lease_seen_first_is_not_judged() -> None:
    # A hub restarted after hours down lists leases hours old; their clocks are not wrong.
    assert not _renewed(Change(None, lease("2026-11-24T20:00:00.000000Z")))


def test_an_update_that_moves_renew_time_is_judged() -> None:
    before, after = lease("2026-11-24T20:00:00.000000Z"), lease("2026-11-24T20:01:00.000000Z")
    assert _renewed(Change(before, after))


def test_updates_that_keep_renew_time_and_deletes_are_not_judged() -> None:
    same = lease("2026-11-24T20:00:00.000000Z")
    assert not _renewed(Change(same, dict(same, metadata={"name": "x", "labels": {"a": "b"}})))
    assert not _renewed(Change(same, None))
