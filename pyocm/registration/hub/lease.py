"""Cluster availability from the agent's lease, and the clock-sync condition.

The agent renews Lease ``managed-cluster-lease`` in its cluster namespace every
``leaseDurationSeconds``. Five missed renewals make ``ManagedClusterConditionAvailable``
Unknown (the agent stopped updating its lease). The renew time, stamped by the agent's
clock, also tells whether the two clocks agree.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pyocm.api import cluster_v1, conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.coordination_v1 import Lease
from pyocm.base.clock import Clock
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer
from pyocm.runtime.status import set_condition

log = logging.getLogger(__name__)
LEASE_NAME = "managed-cluster-lease"
GRACE_RATIO = 5
DEFAULT_LEASE_SECONDS = 60
CLOCK_SYNCED_MESSAGE = "The clock of the managed cluster is synced with the hub."
CLOCK_OUT_OF_SYNC_MESSAGE = "The clock of hub and agent is out of sync. This may cause the Unknown status and affect agent functionalities."


def grace(cluster: ManagedCluster) -> timedelta:
    # Another writer may have stored anything here (a caller may hand a cluster not read
    # through its schema); only a positive integer counts.
    seconds = shapes.mapping(cluster.get("spec")).get("leaseDurationSeconds")
    if type(seconds) is not int or seconds <= 0:
        seconds = DEFAULT_LEASE_SECONDS
    return timedelta(seconds=GRACE_RATIO * seconds)


def renew_time(lease: Lease) -> datetime | None:
    """The lease's renewTime, or None when absent or malformed (logged once per value)."""
    # Leases are not read through a schema: the spec may be anything another writer stored.
    renewed = shapes.mapping(lease.get("spec")).get("renewTime")
    if renewed is None:
        return None
    if isinstance(renewed, str):
        try:
            return timefmt.parse_time(renewed)
        except ValueError:
            pass
    malformed.first_report("Lease", lease, ["spec.renewTime: not a time"])
    return None


def lease_key(lease: Mapping[str, Any]) -> list[str]:
    """Leases map to their cluster: the namespace is the cluster's name."""
    meta = models.view(Lease, lease).get("metadata", {})
    namespace = meta.get("namespace")
    return [namespace] if meta.get("name") == LEASE_NAME and namespace else []


class LeaseController:
    def __init__(
        self, api: Api, clusters: Informer, leases: Informer, *, clock: Clock, recorder: Recorder
    ) -> None:
        self.api = api
        self.clusters = clusters
        self.leases = leases
        self.clock = clock
        self.recorder = recorder
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER, recorder=recorder)

    async def reconcile(self, name: str) -> Result | None:
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None:
            return None
        if conditions.find(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED) is None:
            return None  # never accepted: no agent is expected to renew anything
        lease = models.view(Lease, self.leases.store.get(f"{name}/{LEASE_NAME}"))
        now = self.clock.now()
        if lease is None:
            if cluster["metadata"].get("deletionTimestamp"):
                await self._unknown(cluster)
                return None
            await self._create_lease(name, now)
            return Result(requeue_after=grace(cluster).total_seconds())
        expiry = (renew_time(lease) or now) + grace(cluster)
        if now >= expiry:
            await self._unknown(cluster)
            return Result(requeue_after=grace(cluster).total_seconds())
        return Result(requeue_after=max((expiry - now).total_seconds(), 1.0))

    async def _create_lease(self, name: str, now: datetime) -> None:
        body: Lease = {
            "metadata": {
                "name": LEASE_NAME,
                "namespace": name,
                "labels": {wellknown.CLUSTER_NAME_LABEL: name},
            },
            "spec": {"holderIdentity": LEASE_NAME, "renewTime": timefmt.format_micro(now)},
        }
        try:
            await self.api.create(kinds.LEASE, models.wire(body))
        except ApiError as err:
            if err.code != 409:
                raise

    async def _unknown(self, cluster: ManagedCluster) -> None:
        available = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
        if available is not None and available.get("status") == "Unknown":
            return
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            clock=self.clock,
            type=wellknown.CLUSTER_AVAILABLE,
            status="Unknown",
            reason=wellknown.REASON_LEASE_UPDATE_STOPPED,
            message="Registration agent stopped updating its lease.",
        )
        name = cluster["metadata"]["name"]
        await self.recorder.event(
            models.wire(cluster),
            type="Warning",
            reason="AvailableUnknown",
            note=f"The managed cluster ({name}) cannot connect to the hub cluster.",
        )


class ClockSyncController:
    """Judges the agent's clock by its lease's renewTime, on each renewal."""

    def __init__(self, api: Api, clusters: Informer, leases: Informer, *, clock: Clock) -> None:
        self.api = api
        self.clusters = clusters
        self.leases = leases
        self.clock = clock
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER)

    async def reconcile(self, name: str) -> None:
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        lease = models.view(Lease, self.leases.store.get(f"{name}/{LEASE_NAME}"))
        renewed = renew_time(lease) if lease is not None else None
        if cluster is None or renewed is None:
            return
        annotations = cluster["metadata"].get("annotations", {})
        skew = abs(self.clock.now() - renewed)
        synced = (
            skew < grace(cluster) or annotations.get(wellknown.SKIP_CLOCK_SYNC_ANNOTATION) == "true"
        )
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            models.wire(cluster),
            clock=self.clock,
            type=wellknown.CLUSTER_CLOCK_SYNCED,
            status="True" if synced else "False",
            reason=wellknown.REASON_CLOCK_SYNCED if synced else wellknown.REASON_CLOCK_OUT_OF_SYNC,
            message=CLOCK_SYNCED_MESSAGE if synced else CLOCK_OUT_OF_SYNC_MESSAGE,
        )
