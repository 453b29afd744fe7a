"""The agent's add-on side: registrations and Lease health of every add-on of the cluster.

Upstream's two spoke controllers (``pkg/registration/spoke/addon``), over one watch of the
cluster's ManagedClusterAddOns (v1beta1) on the hub:

* **registration**: for each MCA not being deleted, first tell the hub the kubeClient
  driver (``csr``); then run one :class:`~.certificate.AddOnCertificate` per registration,
  stop those whose registration went away and delete their Secret; an MCA deleted has
  all its Secrets deleted (one being deleted keeps them: its agent may need them to
  clean up);
* **health**: every 30 s, each MCA not in ``Customized`` mode gets ``Available`` from its
  Lease (health.py).

The registrar outlives the agent's sessions (a new one starts with every rotation of the
cluster's certificate): :meth:`run` is called again with the new session's client, and
the workers carry on with their pending keys.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from pyocm.api import addon_v1beta1, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.registration.agent import credentials
from pyocm.registration.agent.addons import config, health
from pyocm.registration.agent.addons.certificate import AddOnCertificate, Context, Report
from pyocm.registration.agent.addons.host import AddOnHost
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.registration.agent.waits import first
from pyocm.runtime import malformed
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.retry import retry_on_conflict
from pyocm.runtime.status import set_condition

log = logging.getLogger(__name__)
#: Upstream's registration controller resync.
RESYNC_SECONDS = 600.0


class AddOnRegistrar:
    def __init__(
        self,
        *,
        cluster: str,
        host: AddOnHost,
        clock: Clock,
        options: AddOnOptions | None = None,
        poll: float = 1.0,
        expiration_seconds: int | None = None,
    ) -> None:
        self.cluster = cluster
        self.host = host
        self.clock = clock
        self.options = options or AddOnOptions()
        self.poll = poll
        self.expiration_seconds = expiration_seconds
        self.reader = malformed.TypedReader.of(addon_v1beta1.MANAGED_CLUSTER_ADDON)
        #: Running registrations by add-on name, then registration key.
        self.workers: dict[str, dict[str, AddOnCertificate]] = {}
        self._hub: credentials.Hub | None = None
        # Per run:
        self._api: Api | None = None
        self._informer: Informer | None = None
        self._tasks: dict[AddOnCertificate, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._new_addon = asyncio.Event()

    async def run(self, api: Api, *, hub: credentials.Hub) -> None:
        """Register and watch over the cluster's add-ons with ``api`` until cancelled."""
        if hub != self._hub:
            # Another hub (a new bootstrap kubeconfig): every Secret's kubeconfig changes.
            self.workers.clear()
            self._hub = hub
        self._api = api
        informer = Informer(
            api,
            ocm.MANAGED_CLUSTER_ADDON,
            namespace=self.cluster,
            resync=RESYNC_SECONDS,
            clock=self.clock,
            quiet_failures=8,
        )
        self._informer = informer
        informer.add_handler(self._changed)
        jobs: list[Coroutine[Any, Any, None]] = [
            informer.run(),
            self._register(informer),
            self._report_health(informer),
        ]
        tasks = [asyncio.create_task(job) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in [*tasks, *self._tasks.values()]:
                task.cancel()
            await asyncio.gather(*tasks, *self._tasks.values(), return_exceptions=True)
            self._tasks.clear()
            self._informer = None

    def _changed(self, change: Change) -> None:
        self._dirty.add(change.obj["metadata"]["name"])
        self._wake.set()
        if change.old is None:
            self._new_addon.set()

    def _addon(self, name: str) -> ManagedClusterAddOn | None:
        assert self._informer is not None
        found = self._informer.store.get(f"{self.cluster}/{name}")
        if found is None:
            return None
        return models.view(ManagedClusterAddOn, self.reader.clean(found))

    # -- registration ---------------------------------------------------------------

    async def _register(self, informer: Informer) -> None:
        await informer.wait_synced()
        # Workers kept from an earlier session carry on with this one's client.
        for workers in self.workers.values():
            for worker in workers.values():
                self._start(worker)
        while True:
            self._wake.clear()
            dirty, self._dirty = self._dirty, set()
            for name in sorted(dirty):
                try:
                    await self._reconcile(name)
                except (ApiError, ApiConnectionError) as err:
                    log.warning("agent: add-on %s: %s", name, err)
                    self._dirty.add(name)
            await first(
                self._wake.wait(),
                self.clock.sleep(RESYNC_SECONDS if not self._dirty else self.poll),
            )

    async def _reconcile(self, name: str) -> None:
        addon = self._addon(name)
        if addon is None:
            await self._stop(name, keep=set())
            return
        if addon["metadata"].get("deletionTimestamp"):
            return
        if await self._ensure_driver(addon):
            return  # the status patch comes back through the watch
        desired = config.registrations(
            addon, cluster=self.cluster, expiration_seconds=self.expiration_seconds
        )
        await self._stop(name, keep=set(desired))
        running = self.workers.setdefault(name, {})
        for key, registration in desired.items():
            if key not in running:
                running[key] = worker = AddOnCertificate(
                    registration, context=self._context(), report=self._reporter(name)
                )
                self._start(worker)
        if not running:
            del self.workers[name]

    async def _ensure_driver(self, addon: ManagedClusterAddOn) -> bool:
        updated = config.with_driver(addon)
        if updated is None:
            return False
        assert self._api is not None
        meta = addon["metadata"]
        patch = {
            "metadata": {"resourceVersion": meta["resourceVersion"]},
            "status": {"registrations": [models.wire(entry) for entry in updated]},
        }
        try:
            await self._api.patch(
                ocm.MANAGED_CLUSTER_ADDON,
                meta["name"],
                patch,
                namespace=self.cluster,
                subresource="status",
            )
        except ApiError as err:
            if err.code not in (404, 409):  # gone, or changed: the watch brings the news
                raise
        return True

    async def _stop(self, name: str, *, keep: set[str]) -> None:
        """Stop the add-on's registrations not in ``keep`` and delete their Secrets."""
        running = self.workers.get(name, {})
        for key in [key for key in running if key not in keep]:
            worker = running.pop(key)
            task = self._tasks.pop(worker, None)
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            registration = worker.registration
            await self.host.delete_secret(registration.namespace, registration.secret)
            log.info(
                "agent: add-on %s: removed secret %s/%s",
                name,
                registration.namespace,
                registration.secret,
            )
        if not running:
            self.workers.pop(name, None)

    def _context(self) -> Context:
        assert self._hub is not None
        return Context(
            cluster=self.cluster, hub=self._hub, host=self.host, clock=self.clock, poll=self.poll
        )

    def _start(self, worker: AddOnCertificate) -> None:
        assert self._api is not None
        self._tasks[worker] = asyncio.create_task(worker.run(self._api))

    def _reporter(self, name: str) -> Report:
        async def report(status: str, reason: str, message: str) -> None:
            await self._set_condition(
                name,
                type=wellknown.CLUSTER_CERTIFICATE_ROTATED,
                status=status,
                reason=reason,
                message=message,
            )

        return report

    # -- health ---------------------------------------------------------------------

    async def _report_health(self, informer: Informer) -> None:
        await informer.wait_synced()
        grace = timedelta(seconds=self.options.lease_grace)
        while True:
            self._new_addon.clear()
            period = self.options.health_period
            for obj in informer.store.objects():
                addon = models.view(ManagedClusterAddOn, self.reader.clean(obj))
                if not health.lease_mode(addon):
                    continue
                try:
                    await self._check_lease(addon, grace)
                except ApiError as err:
                    if err.code != 409:
                        log.warning("agent: add-on %s health: %s", addon["metadata"]["name"], err)
                    # 409: the MCA changed since the cache's copy (its mode too, maybe):
                    # look again with the watch's news, as upstream's requeue does.
                    period = min(period, self.poll)
                except ApiConnectionError as err:
                    log.warning("agent: add-on %s health: %s", addon["metadata"]["name"], err)
            # A new add-on is looked at at once; upstream's waits for the next period.
            await first(self._new_addon.wait(), self.clock.sleep(period))

    async def _check_lease(self, addon: ManagedClusterAddOn, grace: timedelta) -> None:
        name = addon["metadata"]["name"]
        lease = await self.host.lease(config.install_namespace(addon), name)
        status, reason, message = health.available(addon, lease, now=self.clock.now(), grace=grace)
        await self._set_condition(
            name,
            type=wellknown.ADDON_AVAILABLE,
            status=status,
            reason=reason,
            message=message,
            retry=False,
        )

    # -- status ---------------------------------------------------------------------

    async def _set_condition(
        self, name: str, *, type: str, status: str, reason: str, message: str, retry: bool = True
    ) -> None:
        """Set one condition on the MCA as cached; after a Conflict, on the MCA read again
        (``retry``) or not at all (the caller decides again on fresh state)."""
        assert self._api is not None
        api = self._api
        informer = self._informer
        cached = informer.store.get(f"{self.cluster}/{name}") if informer is not None else None
        last: dict[str, Any] | None = copy.deepcopy(cached) if cached is not None else None

        async def attempt() -> None:
            nonlocal last
            current = last
            last = None
            if current is None:
                try:
                    current = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=self.cluster)
                except ApiError as err:
                    if err.code == 404:
                        return
                    raise
            try:
                await set_condition(
                    api,
                    ocm.MANAGED_CLUSTER_ADDON,
                    current,
                    clock=self.clock,
                    type=type,
                    status=status,
                    reason=reason,
                    message=message,
                )
            except ApiError as err:
                if err.code != 404:  # deleted meanwhile: nothing to report on
                    raise

        if retry:
            await retry_on_conflict(attempt, clock=self.clock)
        else:
            await attempt()
