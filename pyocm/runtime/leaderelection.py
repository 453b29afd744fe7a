"""Lease-based leader election, with client-go's rules and defaults.

A candidate holds the ``coordination.k8s.io/v1`` Lease when its ``holderIdentity`` is
the candidate's and it keeps ``renewTime`` fresh. Others take it over only after
``leaseDurationSeconds`` have passed without a renewal, judged by *their own* clock
from the moment they last saw the lease change (client-go's observedTime), so clock
skew between replicas does not matter. Every write is conditional on the lease's
resourceVersion, so two candidates never both win.

Defaults are client-go's: lease 15 s, renew deadline 10 s, retry period 2 s.
"""

from __future__ import annotations

import logging
from typing import Any

from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class LeaderElector:
    def __init__(
        self,
        api: Api,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Clock | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError(
                "leader election needs lease_duration > renew_deadline > retry_period > 0"
            )
        self.api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock or RealClock()
        self._observed: tuple[str | None, float] = (None, 0.0)  # (resourceVersion, when seen)

    async def acquire(self) -> None:
        """Return once this candidate holds the lease."""
        while not await self._try():
            await self._clock.sleep(self.retry_period)

    async def hold(self) -> None:
        """Renew every retry period; return when a renewal has not succeeded for ``renew_deadline``."""
        last_renewed = self._clock.monotonic()
        while True:
            await self._clock.sleep(self.retry_period)
            if await self._try():
                last_renewed = self._clock.monotonic()
            elif self._clock.monotonic() - last_renewed >= self.renew_deadline:
                return

    async def release(self) -> None:
        """Give the lease up at once if still held, so a successor need not wait it out."""
        try:
            lease = await self.api.get(kinds.LEASE, self.name, namespace=self.namespace)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"]["holderIdentity"] = None
            lease["spec"]["leaseDurationSeconds"] = 1
            await self.api.update(kinds.LEASE, lease)
        except (ApiError, ApiConnectionError) as err:
            log.info("could not release lease %s/%s: %s", self.namespace, self.name, err)

    async def _try(self) -> bool:
        """One attempt to acquire or renew; True when the lease is ours afterwards."""
        now = self._clock.now()
        try:
            lease = await self.api.get(kinds.LEASE, self.name, namespace=self.namespace)
        except ApiError as err:
            if err.code != 404:
                log.warning("leader election: %s", err.message)
                return False
            return await self._write(None, now)
        except ApiConnectionError as err:
            log.warning("leader election: %s", err)
            return False
        spec = lease.get("spec") or {}
        version = lease["metadata"]["resourceVersion"]
        if version != self._observed[0]:
            self._observed = (version, self._clock.monotonic())
        holder = spec.get("holderIdentity")
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        expired = self._clock.monotonic() >= self._observed[1] + duration
        if holder and holder != self.identity and not expired:
            return False
        return await self._write(lease, now)

    async def _write(self, lease: Obj | None, now: Any) -> bool:
        stamp = timefmt.format_micro(now)
        spec: Obj = dict((lease or {}).get("spec") or {})
        transitions = int(spec.get("leaseTransitions") or 0)
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = stamp
            if lease is not None:
                transitions += 1
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=int(self.lease_duration),
            renewTime=stamp,
            leaseTransitions=transitions,
        )
        try:
            if lease is None:
                body = {"metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec}
                written = await self.api.create(kinds.LEASE, body)
            else:
                written = await self.api.update(kinds.LEASE, {**lease, "spec": spec})
        except ApiError as err:
            if err.code not in (409, 404):
                log.warning("leader election: %s", err.message)
            return False
        except ApiConnectionError as err:
            log.warning("leader election: %s", err)
            return False
        self._observed = (written["metadata"]["resourceVersion"], self._clock.monotonic())
        return True
