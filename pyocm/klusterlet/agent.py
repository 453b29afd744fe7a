"""One managed cluster's klusterlet: the registration agent, and the work agent once
registration has a hub credential (upstream's singleton agent, pkg/singleton/spoke).

As upstream's, it starts registration, waits (polling) until a hub credential is
there, then starts the work agent with it, as the same agent (cluster name and agent
id). A new credential (rotated, or got again after the hub refused the old one) means
a new hub client, so the work agent is restarted with it: its state is all level-based
(informer, queues, the hub's and the managed cluster's objects), so a restart loses
nothing but a relist. The klusterlet ends when registration ends (the cluster denied
or deleted on the hub), returning its reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable

from pyocm.base.backoff import Backoff
from pyocm.base.clock import Clock, RealClock
from pyocm.klusterlet.crds import CrdNotEstablished, ensure_applied_work_crd
from pyocm.kube.status import ApiError
from pyocm.registration.agent.agent import RegistrationAgent
from pyocm.registration.agent.errors import AgentError
from pyocm.registration.agent.hubcredential import HubCredentialProvider
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.work.agent.agent import WorkAgent
from pyocm.work.agent.options import WorkAgentOptions
from pyocm.work.agent.spoke import KubeSpoke, SpokeClient

log = logging.getLogger(__name__)
#: The work agent with upstream's defaults.
DEFAULT_WORK = WorkAgentOptions()
#: Pauses between failed preparations of the managed cluster: 1 s doubling to 30 s.
PREPARE_BACKOFF = Backoff(duration=1.0, cap=30.0, jitter=0.1)
Prepare = Callable[[], Awaitable[None]]


class Klusterlet:
    """Run with :meth:`run`. ``work`` None runs registration alone; its ``cluster_name``
    and (when empty) ``agent_id`` come from registration. ``prepare`` runs once before
    the work agent first starts (:meth:`for_cluster` installs the AppliedManifestWork
    CRD there)."""

    def __init__(
        self,
        registration: RegistrationAgent,
        spoke: SpokeClient,
        *,
        work: WorkAgentOptions | None = DEFAULT_WORK,
        clock: Clock | None = None,
        poll: float = 1.0,
        prepare: Prepare | None = None,
    ) -> None:
        self.registration = registration
        self.spoke = spoke
        self.work = work
        self.clock = clock or RealClock()
        self.poll = poll
        self.prepare = prepare
        #: The work agent running now (None before the first credential, or when off).
        self.work_agent: WorkAgent | None = None
        #: How many work agents were started (a rotation starts another).
        self.work_starts = 0

    @classmethod
    def for_cluster(
        cls,
        registration: RegistrationAgent,
        managed: Api,
        *,
        work: WorkAgentOptions | None = DEFAULT_WORK,
        clock: Clock | None = None,
        poll: float = 1.0,
    ) -> Klusterlet:
        """A klusterlet of the cluster ``managed`` serves, as the operator would set it up."""
        return cls(
            registration,
            KubeSpoke(managed),
            work=work,
            clock=clock,
            poll=poll,
            prepare=lambda: ensure_applied_work_crd(managed, clock=clock),
        )

    async def run(self) -> str:
        """Run until registration ends; return its reason. A failing work agent fails
        the klusterlet (after stopping registration), as upstream's exits."""
        registering = asyncio.create_task(self.registration.run(), name="registration")
        tasks: set[asyncio.Task[object]] = {registering}  # type: ignore[arg-type]
        if self.work is not None:
            tasks.add(asyncio.create_task(self._run_work(self.work), name="work"))
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not registering:
                    task.result()  # raises what ended the work agent
            return await registering
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run_work(self, template: WorkAgentOptions) -> None:
        provider = await self._credentials()
        subject = provider.subject
        options = dataclasses.replace(
            template,
            cluster_name=subject.cluster,
            agent_id=template.agent_id or subject.agent,
        )
        await self._prepare()
        renewed = asyncio.Event()
        unsubscribe = provider.subscribe(lambda _: renewed.set())
        try:
            while True:
                renewed.clear()
                await self._work_until(renewed, provider, options)
                log.info("work agent: the hub credential changed; restarting with it")
        finally:
            unsubscribe()

    async def _work_until(
        self, renewed: asyncio.Event, provider: HubCredentialProvider, options: WorkAgentOptions
    ) -> None:
        """Run a work agent with the current credential until ``renewed``."""
        async with provider.client() as hub:
            self.work_agent = WorkAgent(hub, self.spoke, options=options, clock=self.clock)
            self.work_starts += 1
            running = asyncio.create_task(self.work_agent.run(), name="work agent")
            waiter = asyncio.create_task(renewed.wait())
            try:
                await asyncio.wait({running, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if running.done():
                    running.result()  # raises what ended it
                    raise AgentError("the work agent stopped")
            finally:
                for task in (running, waiter):
                    task.cancel()
                await asyncio.gather(running, waiter, return_exceptions=True)
                self.work_agent = None

    async def _prepare(self) -> None:
        """Run ``prepare`` until it succeeds: the managed cluster may be busy or away for
        a while, which is no reason to stop registration."""
        failures = 0
        while self.prepare is not None:
            try:
                await self.prepare()
                return
            except (ApiError, ApiConnectionError, CrdNotEstablished) as err:
                failures += 1
                log.warning("work agent: preparing the managed cluster: %s; retrying", err)
                await self.clock.sleep(PREPARE_BACKOFF.delay(failures - 1))

    async def _credentials(self) -> HubCredentialProvider:
        """Registration's credential provider once it holds a credential (polled, as
        upstream polls for a valid hub kubeconfig)."""
        while True:
            provider = self.registration.credentials
            if provider is not None and _holds_credential(provider):
                return provider
            await self.clock.sleep(self.poll)


def _holds_credential(provider: HubCredentialProvider) -> bool:
    try:
        return provider.credential is not None
    except AgentError:  # none obtained yet
        return False
