"""The add-on registration's options: upstream's defaults, shorter in tests (upstream
exposes the same two durations as package variables for its integration tests)."""

from __future__ import annotations

from dataclasses import dataclass

from pyocm.registration.agent.addons import health


@dataclass(frozen=True, kw_only=True)
class AddOnOptions:
    #: Register add-ons and report their Lease health (upstream's AddonManagement gate, on by default).
    enabled: bool = True
    #: How often every add-on's Lease is read (upstream's AddOnLeaseControllerSyncInterval).
    health_period: float = health.SYNC_SECONDS
    #: A Lease renewed longer ago than this makes the add-on unavailable (5 x 60 s).
    lease_grace: float = health.GRACE.total_seconds()
