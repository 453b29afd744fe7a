"""An add-on's health from its Lease (upstream ``pkg/registration/spoke/addon/lease_controller.go``).

In ``Lease`` mode (or no mode: the CRD's default is Lease) the add-on agent renews a
Lease named after the add-on in its install namespace. The registration agent reads it
every 30 s and reports the MCA's ``Available`` condition: True while the Lease was
renewed within the grace period (5 x 60 s), False once renewals stopped, Unknown when
there is no Lease. ``Customized`` mode leaves the condition to the add-on's manager.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.coordination_v1 import Lease
from pyocm.kube import timefmt

#: Upstream's AddOnLeaseControllerSyncInterval.
SYNC_SECONDS = 30.0
#: Upstream's AddOnLeaseControllerLeaseDurationSeconds and leaseDurationTimes.
LEASE_DURATION_SECONDS = 60
LEASE_DURATION_TIMES = 5
GRACE = timedelta(seconds=LEASE_DURATION_TIMES * LEASE_DURATION_SECONDS)

CUSTOMIZED = "Customized"
LEASE_UPDATED = "ManagedClusterAddOnLeaseUpdated"
LEASE_UPDATE_STOPPED = "ManagedClusterAddOnLeaseUpdateStopped"
LEASE_NOT_FOUND = "ManagedClusterAddOnLeaseNotFound"


def lease_mode(addon: ManagedClusterAddOn) -> bool:
    """Whether the agent reports this add-on's health (every mode but Customized, as upstream)."""
    return addon.get("status", {}).get("healthCheck", {}).get("mode") != CUSTOMIZED


def available(
    addon: ManagedClusterAddOn, lease: Lease | None, *, now: datetime, grace: timedelta = GRACE
) -> tuple[str, str, str]:
    """The ``Available`` condition's (status, reason, message) for ``lease`` (None: not
    found): renewed within ``grace`` before ``now`` is available."""
    name = addon["metadata"]["name"]
    if lease is None:
        message = f"The status of {name} add-on is unknown."
        hosting = (
            addon["metadata"]
            .get("annotations", {})
            .get(wellknown.ADDON_HOSTING_CLUSTER_ANNOTATION, "")
        )
        if hosting:
            message += (
                f' No lease found on hosting cluster "{hosting}"; verify it matches the cluster '
                "where this managed cluster's klusterlet actually runs."
            )
        return "Unknown", LEASE_NOT_FOUND, message
    renewed = _renew_time(lease)
    if renewed is not None and now < renewed + grace:
        return "True", LEASE_UPDATED, f"{name} add-on is available."
    return "False", LEASE_UPDATE_STOPPED, f"{name} add-on is not available."


def _renew_time(lease: Lease) -> datetime | None:
    # A Lease never renewed has no renewTime: Go's zero time, long past any grace.
    # Read defensively: the Lease is the add-on agent's, read without a schema.
    value = lease.get("spec", {}).get("renewTime")
    if not isinstance(value, str) or not value:
        return None
    try:
        return timefmt.parse_time(value)
    except ValueError:
        return None
