"""One run of the agent with one hub credential: status, lease and rotation side by side.

The session ends when the certificate has been rotated (the agent starts a new session
with the new credential), when the hub refuses the credential (:class:`Rebootstrap`),
or when the cluster is denied or deleted (:class:`AgentStopped`). It knows the agent
only through what it is given (:class:`SessionContext`), so nothing here imports the
agent.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyocm.api import cluster_v1, conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api import schema as s
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.coordination_v1 import Lease
from pyocm.base.clock import Clock
from pyocm.kube import kinds, patches, timefmt
from pyocm.kube.status import ApiError
from pyocm.registration.agent import namespaces
from pyocm.registration.agent.addons.registrar import AddOnRegistrar
from pyocm.registration.agent.errors import AgentStopped, Rebootstrap
from pyocm.registration.agent.hubcredential import HubCredentialProvider
from pyocm.registration.agent.labels import LabelPublisher
from pyocm.registration.agent.managed import ManagedSide
from pyocm.registration.agent.options import AgentOptions
from pyocm.registration.agent.rotated import report_rotation
from pyocm.registration.agent.status import StatusReporter
from pyocm.registration.agent.waits import first
from pyocm.runtime import malformed
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
LEASE = "managed-cluster-lease"
SESSION_CONNECTIONS = 2
#: The add-on side's own pool: one connection held by its watch of the cluster's
#: ManagedClusterAddOns, one for CSRs and status patches.
ADDON_CONNECTIONS = 2
DEFAULT_LEASE_SECONDS = 60
#: coordination.k8s.io/v1 LeaseSpec, for reading a Lease another writer may have stored
#: with fields of the wrong type (a kube-apiserver types Leases; an old pyocm did not).
_LEASES = malformed.TypedReader(
    "Lease",
    s.kind_root(
        description="A lease.",
        spec=s.obj(
            {
                "acquireTime": s.string(),
                "holderIdentity": s.string(),
                "leaseDurationSeconds": s.int32(),
                "leaseTransitions": s.int32(),
                "preferredHolder": s.string(),
                "renewTime": s.string(),
                "strategy": s.string(),
            }
        ),
    ),
)


def renewed_lease(lease: dict[str, Any], *, now: datetime) -> Lease:
    """``lease`` (as the hub answered it) with ``renewTime`` set to ``now``, as upstream's
    lease updater writes it, and without fields of the wrong type: the agent's renewal is
    what repairs its lease."""
    renewed = models.view(Lease, copy.deepcopy(_LEASES.clean(lease)))
    renewed["spec"] = {**renewed.get("spec", {}), "renewTime": _micro(now)}
    return renewed


def lease_seconds(cluster: ManagedCluster | None) -> int:
    """The renewal period: ``leaseDurationSeconds`` if a positive integer, else upstream's 60."""
    if cluster is None:
        return DEFAULT_LEASE_SECONDS
    # A caller may hand a cluster not read through its schema: only a positive int counts.
    seconds = shapes.mapping(cluster.get("spec")).get("leaseDurationSeconds")
    if type(seconds) is not int or seconds <= 0:
        return DEFAULT_LEASE_SECONDS
    return seconds


@dataclass
class LeaseSchedule:
    """The leaseDurationSeconds the lease was last renewed for, and when (the clock's
    monotonic seconds) it is next due; None: renew at once. It outlives sessions."""

    due: tuple[int, float] | None = None


@dataclass(frozen=True, kw_only=True)
class SessionContext:
    """What a session works with, lasting longer than one session."""

    credentials: HubCredentialProvider
    managed: ManagedSide
    options: AgentOptions
    clock: Clock
    lease: LeaseSchedule
    report: Callable[[str], None]
    #: Add-on registration and health (None: this agent registers no add-ons).
    addons: AddOnRegistrar | None = None


class Session:
    def __init__(self, context: SessionContext) -> None:
        self.context = context
        self.credentials = context.credentials
        self.subject = context.credentials.subject
        self.options = context.options
        self.clock = context.clock
        self.report = context.report
        self.changed = asyncio.Event()  # for the status loop
        self.lease_changed = asyncio.Event()  # for the lease loop
        #: The cluster as the hub stores it, and as read (fields of the wrong type left out).
        self.stored: dict[str, Any] | None = None
        self.cluster: ManagedCluster | None = None
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER)
        self.labels = LabelPublisher(dict(self.options.labels))
        self.reporter = StatusReporter(
            context.managed,
            clock=self.clock,
            claims=self.options.claims,
            namespace_label=namespaces.hub_label(self.credentials.credential.hub.server),
        )

    async def run(self) -> None:
        # Two connections: one held by the watch of this cluster, one that status reports,
        # lease renewals and rotation take turns on. Each TLS connection costs the hub
        # about 40 KiB, and an HTTP/1.1 pool would otherwise open one per overlapping
        # request (about 2.8 per agent, counted in a 500-cluster fleet).
        async with self.credentials.client(max_connections=SESSION_CONNECTIONS) as api:
            self.api = api
            # Right after joining, the hub may still be granting this agent's access:
            # refusals for the first ~20 s of backoff are expected, not warnings.
            informer = Informer(
                api,
                ocm.MANAGED_CLUSTER,
                fields=f"metadata.name={self.subject.cluster}",
                quiet_failures=8,
            )
            informer.add_handler(lambda change: self._seen(change.new))
            jobs: list[Coroutine[Any, Any, None]] = [
                self._watch(informer),
                self._report(informer),
                self._renew_lease(),
                self._rotate(),
                self._bootstrap_watch(),
            ]
            if self.context.addons is not None:
                jobs.append(self._addons(self.context.addons))
            tasks = [asyncio.create_task(job) for job in jobs]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # raises AgentStopped / Rebootstrap; a clean end means rotated
            finally:
                for task in tasks:
                    task.cancel()
                # gather, not a suppress per task: a cancellation of this session while it
                # waits here must propagate, or the agent would start another session.
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _addons(self, addons: AddOnRegistrar) -> None:
        async with self.credentials.client(max_connections=ADDON_CONNECTIONS) as api:
            await addons.run(api, hub=self.credentials.credential.hub)

    async def _bootstrap_watch(self) -> None:
        await self.credentials.bootstrap.changed()
        raise Rebootstrap("the bootstrap kubeconfig changed")

    def _seen(self, cluster: dict[str, Any] | None) -> None:
        self.stored = cluster
        self.cluster = (
            models.view(ManagedCluster, self.reader.clean(cluster)) if cluster is not None else None
        )
        self.changed.set()
        self.lease_changed.set()

    async def _watch(self, informer: Informer) -> None:
        try:
            await informer.run()
        except ApiError as err:
            raise _translate(err) from None

    async def _report(self, informer: Informer) -> None:
        await informer.wait_synced()
        while True:
            self.changed.clear()
            cluster, stored = self.cluster, self.stored
            if cluster is None or stored is None or cluster["metadata"].get("deletionTimestamp"):
                # This hub manages nothing here any more (upstream releases on deletion too).
                await namespaces.release_namespaces(
                    self.context.managed, label=self.reporter.namespace_label, keep=set()
                )
                raise AgentStopped("deleted")
            accepted = conditions.find(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED)
            if accepted is not None and accepted.get("reason") == wellknown.REASON_HUB_ADMIN_DENIED:
                raise AgentStopped("denied")
            try:
                await self._report_once(cluster, stored)
            except ApiError as err:
                if err.code != 409:  # 409: someone wrote first; the next change brings fresh state
                    raise _translate(err) from None
            except ApiConnectionError as err:
                log.warning("agent: %s", err)
            await first(
                self.changed.wait(),
                self.clock.sleep(self.reporter.retry_after or self.options.healthcheck_period),
            )

    async def _report_once(self, cluster: ManagedCluster, stored: dict[str, Any]) -> None:
        status = await self.reporter.desired(cluster)
        if status is None:
            self.report("waiting for the hub admin to accept")
            return
        found = status.get("conditions", [])
        clock_synced = conditions.find(found, wellknown.CLUSTER_CLOCK_SYNCED)
        if clock_synced is not None and clock_synced.get("status") == "False":
            log.warning(
                "agent: the hub says this cluster's clock is out of sync; not reporting status"
            )
            return
        if status != stored.get("status"):
            # Against the stored status, so fields of the wrong type (read as absent)
            # are removed: the status is the agent's to write.
            patch = {
                "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]},
                "status": patches.create_merge_patch(stored.get("status"), status),
            }
            stored = await self.api.patch(
                ocm.MANAGED_CLUSTER, self.subject.cluster, patch, subresource="status"
            )
        # Labels go on the object as stored: its spec is not the agent's to repair.
        await self.labels.publish(self.api, models.view(ManagedCluster, stored))
        available = conditions.is_true(found, wellknown.CLUSTER_AVAILABLE)
        self.report("available" if available else "joined")

    async def _renew_lease(self) -> None:
        while True:
            cluster: ManagedCluster = self.cluster or {}
            seconds = lease_seconds(cluster)
            if conditions.is_true(conditions.of(cluster), wellknown.CLUSTER_HUB_ACCEPTED):
                # The renewal schedule outlives the session: a rotated certificate starts
                # a new one, which need not renew again at once (upstream's lease updater
                # does not notice rotations either). Monotonic, so that a wall clock
                # stepped back cannot hold the lease.
                scheduled = self.context.lease.due
                wait = 0.0
                if scheduled is not None and scheduled[0] == seconds:
                    wait = min(scheduled[1] - self.clock.monotonic(), seconds * 1.25)
                if wait <= 0:
                    renewed = await self._renew_once()
                    wait = seconds * (1 + 0.25 * random.random())
                    self.context.lease.due = (
                        (seconds, self.clock.monotonic() + wait) if renewed else None
                    )
                await first(self._duration_changed(seconds), self.clock.sleep(wait))
            else:
                self.lease_changed.clear()
                await first(self.lease_changed.wait(), self.clock.sleep(1.0))

    async def _duration_changed(self, seconds: int) -> None:
        """Return when the cluster's leaseDurationSeconds is no longer ``seconds``."""
        while True:
            self.lease_changed.clear()
            if lease_seconds(self.cluster) != seconds:
                return
            await self.lease_changed.wait()

    async def _renew_once(self) -> bool:
        """Renew the lease; False when that failed (and the next session should not wait)."""
        try:
            lease = await self.api.get(kinds.LEASE, LEASE, namespace=self.subject.cluster)
            renewed = renewed_lease(lease, now=self.clock.now())
            await self.api.update(kinds.LEASE, models.wire(renewed))
            return True
        except ApiError as err:
            if err.code == 401:
                raise Rebootstrap("the hub refused the agent's certificate") from None
            if err.code not in (403, 404, 409):
                log.warning("agent: renewing the lease: %s", err.message)
        except ApiConnectionError as err:
            log.warning("agent: renewing the lease: %s", err)
        return False

    async def _rotate(self) -> None:
        """Renew the certificate when due; the session then ends, and the agent starts
        the next one with the new credential."""
        rotated = await self.credentials.rotate(self.api)
        await self._rotated_condition(rotated.chain)

    async def _rotated_condition(self, chain: list[Any]) -> None:
        if self.cluster is not None:
            await report_rotation(self.api, self.cluster, chain, clock=self.clock)


def _translate(err: ApiError) -> Exception:
    if err.code == 401:
        return Rebootstrap("the hub refused the agent's certificate")
    return err


def _micro(moment: datetime) -> str:
    return timefmt.format_micro(moment)
