"""Cluster availability from the agent's lease, and the clock-sync condition.

The agent renews Lease ``managed-cluster-lease`` in its cluster namespace every
``leaseDurationSeconds``. Five missed renewals make ``ManagedClusterConditionAvailable``
Unknown (the agent stopped updating its lease). The renew time, stamped by the agent's
clock, also tells whether the two clocks agree.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
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
Obj = dict[str, Any]
LEASE_NAME = "managed-cluster-lease"
GRACE_RATIO = 5
DEFAULT_LEASE_SECONDS = 60
CLOCK_SYNCED_MESSAGE = "The clock of the managed cluster is synced with the hub."
CLOCK_OUT_OF_SYNC_MESSAGE = "The clock of hub and agent is out of sync. This may cause the Unknown status and affect agent functionalities."


def grace(cluster: Obj) -> timedelta:
    spec = cluster.get("spec")
    seconds = spec.get("leaseDurationSeconds") if isinstance(spec, dict) else None
    # Another writer may have stored anything here; only a positive integer counts.
    if type(seconds) is not int or seconds <= 0:
        seconds = DEFAULT_LEASE_SECONDS
    return timedelta(seconds=GRACE_RATIO * seconds)


def renew_time(lease: Obj) -> datetime | None:
    """The lease's renewTime, or None when absent or malformed (logged once per value)."""
    spec = lease.get("spec")
    renewed = spec.get("renewTime") if isinstance(spec, dict) else None
    if renewed is None:
        return None
    if isinstance(renewed, str):
        try:
            return timefmt.parse_time(renewed)
        except ValueError:
            pass
    _malformed(lease)
    return None


_reported: set[tuple[str, str]] = set()


def _malformed(lease: Obj) -> None:
    meta = lease.get("metadata") or {}
    key = (str(meta.get("namespace")), str(meta.get("resourceVersion")))
    if key not in _reported:
        _reported.add(key)
        log.warning("lease %s/%s has a malformed spec; ignoring its renewTime", *key)


def lease_key(lease: Obj) -> list[str]:
    """Leases map to their cluster: the namespace is the cluster's name."""
    meta = lease.get("metadata") or {}
    return [meta["namespace"]] if meta.get("name") == LEASE_NAME and meta.get("namespace") else []


class LeaseController:
    def __init__(
        self, api: Api, clusters: Informer, leases: Informer, *, clock: Clock, recorder: Recorder
    ) -> None:
        self.api = api
        self.clusters = clusters
        self.leases = leases
        self.clock = clock
        self.recorder = recorder
        self.reader = malformed.managed_clusters(recorder=recorder)

    async def reconcile(self, name: str) -> Result | None:
        cluster = await self.reader.read(self.clusters.store.get(name))
        if cluster is None:
            return None
        if conditions.find(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED) is None:
            return None  # never accepted: no agent is expected to renew anything
        lease = self.leases.store.get(f"{name}/{LEASE_NAME}")
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

    async def _create_lease(self, name: str, now: Any) -> None:
        body = {
            "metadata": {
                "name": LEASE_NAME,
                "namespace": name,
                "labels": {wellknown.CLUSTER_NAME_LABEL: name},
            },
            "spec": {"holderIdentity": LEASE_NAME, "renewTime": timefmt.format_micro(now)},
        }
        try:
            await self.api.create(kinds.LEASE, body)
        except ApiError as err:
            if err.code != 409:
                raise

    async def _unknown(self, cluster: Obj) -> None:
        available = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
        if available is not None and available.get("status") == "Unknown":
            return
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            cluster,
            clock=self.clock,
            type=wellknown.CLUSTER_AVAILABLE,
            status="Unknown",
            reason=wellknown.REASON_LEASE_UPDATE_STOPPED,
            message="Registration agent stopped updating its lease.",
        )
        name = cluster["metadata"]["name"]
        await self.recorder.event(
            cluster,
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
        self.reader = malformed.managed_clusters()

    async def reconcile(self, name: str) -> None:
        cluster = await self.reader.read(self.clusters.store.get(name))
        lease = self.leases.store.get(f"{name}/{LEASE_NAME}")
        renewed = renew_time(lease) if lease is not None else None
        if cluster is None or renewed is None:
            return
        annotations = cluster["metadata"].get("annotations") or {}
        skew = abs(self.clock.now() - renewed)
        synced = (
            skew < grace(cluster) or annotations.get(wellknown.SKIP_CLOCK_SYNC_ANNOTATION) == "true"
        )
        await set_condition(
            self.api,
            ocm.MANAGED_CLUSTER,
            cluster,
            clock=self.clock,
            type=wellknown.CLUSTER_CLOCK_SYNCED,
            status="True" if synced else "False",
            reason=wellknown.REASON_CLOCK_SYNCED if synced else wellknown.REASON_CLOCK_OUT_OF_SYNC,
            message=CLOCK_SYNCED_MESSAGE if synced else CLOCK_OUT_OF_SYNC_MESSAGE,
        )
