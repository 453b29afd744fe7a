"""Available from the add-on's Lease (upstream lease_controller.go), in virtual time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pyocm.api import models
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.coordination_v1 import Lease
from pyocm.base.clock import FakeClock
from pyocm.kube import timefmt
from pyocm.registration.agent.addons import health


def addon(
    status: dict[str, Any] | None = None, annotations: dict[str, str] | None = None
) -> ManagedClusterAddOn:
    metadata: dict[str, Any] = {"name": "hello", "namespace": "c1"}
    if annotations:
        metadata["annotations"] = annotations
    found: ManagedClusterAddOn = models.view(
        ManagedClusterAddOn, {"metadata": metadata, "spec": {}, "status": status or {}}
    )
    return found


def lease(renewed: str | None) -> Lease:
    spec = {"renewTime": renewed} if renewed is not None else {}
    return models.view(Lease, {"metadata": {"name": "hello"}, "spec": spec})


def test_a_lease_renewed_within_five_minutes_is_available_and_then_not() -> None:
    clock = FakeClock()
    renewed = lease(timefmt.format_micro(clock.now()))
    clock.advance(299)
    assert health.available(addon(), renewed, now=clock.now()) == (
        "True",
        "ManagedClusterAddOnLeaseUpdated",
        "hello add-on is available.",
    )
    clock.advance(1)
    assert health.available(addon(), renewed, now=clock.now()) == (
        "False",
        "ManagedClusterAddOnLeaseUpdateStopped",
        "hello add-on is not available.",
    )


def test_the_grace_is_upstreams_five_lease_durations_unless_given() -> None:
    assert timedelta(minutes=5) == health.GRACE
    clock = FakeClock()
    renewed = lease(timefmt.format_micro(clock.now()))
    clock.advance(3)
    assert (
        health.available(addon(), renewed, now=clock.now(), grace=timedelta(seconds=3))[0]
        == "False"
    )


def test_no_lease_is_unknown_with_a_hint_for_a_hosted_addon() -> None:
    clock = FakeClock()
    assert health.available(addon(), None, now=clock.now()) == (
        "Unknown",
        "ManagedClusterAddOnLeaseNotFound",
        "The status of hello add-on is unknown.",
    )
    hosted = addon(annotations={"addon.open-cluster-management.io/hosting-cluster-name": "h1"})
    assert health.available(hosted, None, now=clock.now())[2] == (
        'The status of hello add-on is unknown. No lease found on hosting cluster "h1"; verify it '
        "matches the cluster where this managed cluster's klusterlet actually runs."
    )


def test_a_lease_never_renewed_or_unreadable_is_not_available() -> None:
    now = FakeClock().now()
    assert (
        health.available(addon(), lease(None), now=now)[1]
        == "ManagedClusterAddOnLeaseUpdateStopped"
    )
    assert (
        health.available(addon(), lease("yesterday"), now=now)[1]
        == "ManagedClusterAddOnLeaseUpdateStopped"
    )


def test_only_customized_mode_is_left_to_the_addon_manager() -> None:
    assert health.lease_mode(addon())
    assert health.lease_mode(addon({"healthCheck": {"mode": "Lease"}}))
    assert not health.lease_mode(addon({"healthCheck": {"mode": "Customized"}}))
