"""The hub credential: one client certificate for the hub, got, kept and renewed.

:class:`HubCredentialProvider` owns the credential's whole life, so the registration
agent, the work agent and add-on registrations share one:

* **bootstrap**: when the hub-kubeconfig secret holds no valid credential for this
  hub and subject (credentials.py), ask for a certificate by CSR with the bootstrap
  kubeconfig and wait for the admin's approval, keeping the pending key in the secret
  so a restarted agent finds its CSR again;
* **rotation**: when 20 to 25 % of the certificate's life is left (or when asked),
  ask again with the current credential and store the new one;
* **rebootstrap**: a refusal (401) raises :class:`Rebootstrap`; the next
  :meth:`~HubCredentialProvider.current` bootstraps again.

Users read :attr:`~HubCredentialProvider.credential` (its ``kubeconfig``), open a
client with :meth:`~HubCredentialProvider.client`, and hear of every new credential
through :meth:`~HubCredentialProvider.subscribe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography import x509

from pyocm.base.backoff import Backoff
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.registration.agent import certs, credentials
from pyocm.registration.agent.bootstrap import BootstrapSource
from pyocm.registration.agent.csrflow import request_certificate
from pyocm.registration.agent.errors import AgentError, Rebootstrap
from pyocm.registration.agent.managed import ManagedSide
from pyocm.registration.agent.waits import first
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

log = logging.getLogger(__name__)
Listener = Callable[["Credential"], None]


@dataclass(frozen=True)
class Credential:
    """One hub credential, as stored in the hub-kubeconfig secret."""

    hub: credentials.Hub
    data: Mapping[str, bytes]

    @property
    def kubeconfig(self) -> dict[str, Any]:
        """A kubeconfig for the hub with the certificate and key embedded."""
        return self.hub.kubeconfig(
            cert_pem=self.data[credentials.TLS_CRT], key_pem=self.data[credentials.TLS_KEY]
        )

    @property
    def chain(self) -> list[x509.Certificate]:
        return certs.load_chain(self.data.get(credentials.TLS_CRT, b""))


class HubCredentialProvider:
    """Hands out a current hub credential for ``subject`` and renews it.

    ``prepare`` runs with the bootstrap client before each CSR of a bootstrap (the
    registration agent makes sure its ManagedCluster exists there). ``report`` hears
    the provider's state in an operator's words."""

    def __init__(
        self,
        *,
        subject: certs.Subject,
        bootstrap: BootstrapSource,
        managed: ManagedSide,
        secret: str,
        clock: Clock,
        poll: float = 1.0,
        expiration_seconds: int | None = None,
        prepare: Callable[[Api], Awaitable[None]] | None = None,
        report: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.subject = subject
        self.bootstrap = bootstrap
        self.managed = managed
        self.secret = secret  # the hub-kubeconfig secret on the managed side
        self.clock = clock
        self.poll = poll
        self.request = subject.request(expiration_seconds=expiration_seconds)
        self._prepare = prepare
        self._report = report
        self._listeners: list[Listener] = []
        self._credential: Credential | None = None
        self.rotation_requested = asyncio.Event()
        # The retries as they always were: doubling from 2 * poll, to 30 s joining, 60 s renewing.
        self._join_backoff = Backoff(duration=2 * poll, cap=30.0)
        self._renew_backoff = Backoff(duration=2 * poll, cap=60.0)

    @property
    def credential(self) -> Credential:
        """The current credential (:meth:`current` must have returned once)."""
        if self._credential is None:
            raise AgentError("no hub credential has been obtained yet")
        return self._credential

    def client(self, **options: Any) -> Api:
        """A client of the hub with the current credential (``options`` as Api.from_config)."""
        return Api.from_config(self.credential.kubeconfig, **options)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every new credential; return the unsubscribe call."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def rotate_now(self) -> None:
        """Renew at the next :meth:`rotate` instead of at 75 to 80 % of the life."""
        self.rotation_requested.set()

    async def current(self) -> Credential:
        """The stored credential if it is valid for this hub and subject, else a new
        one from a bootstrap (which waits for the admin's approval)."""
        await self.bootstrap.load()
        data = await self.managed.load_secret(self.secret)
        hub = self.bootstrap.hub
        if not credentials.valid(data, hub=hub, subject=self.subject, now=self.clock.now()):
            data = await self._bootstrap(data)
        self._set(Credential(hub=hub, data=data))
        return self.credential

    async def rotate(self, api: Api) -> Credential:
        """Wait until the certificate is due (or :meth:`rotate_now`), renew it with
        ``api`` (a client of the current credential), store and return it."""
        chain = self.credential.chain
        due = certs.rotation_due(chain, now=self.clock.now(), threshold=certs.rotation_threshold())
        wait = (due - self.clock.now()).total_seconds()
        if wait > 0 and not self.rotation_requested.is_set():
            await first(self.clock.sleep(wait), self.rotation_requested.wait())
        self.rotation_requested.clear()
        key = keys.generate_private_key()
        cert_pem = await self._renew(api, key)
        stored = await self._save(cert_pem, keys.private_key_to_pem(key))
        log.info(
            "agent: client certificate rotated, valid until %s",
            self.credential.chain[0].not_valid_after_utc,
        )
        return stored

    async def _renew(self, api: Api, key: keys.PrivateKey) -> bytes:
        failures = 0
        while True:
            try:
                return await request_certificate(
                    api, self.request, key, clock=self.clock, poll=self.poll
                )
            except ApiError as err:
                if err.code == 401:
                    raise Rebootstrap("the hub refused the agent's certificate") from None
                raise
            except ApiConnectionError as err:
                # The hub is busy or away: the current certificate still serves, so ask
                # again (the same key finds the same CSR) instead of ending the agent.
                failures += 1
                log.warning("agent: renewing the client certificate: %s", err)
                await self.clock.sleep(self._renew_backoff.delay(failures - 1))

    async def _bootstrap(self, data: Mapping[str, bytes]) -> dict[str, bytes]:
        """Join with the bootstrap credential; return the stored hub credential."""
        # A key that never got a certificate is reused (same CSR name after a restart);
        # one that had a certificate is not, or its old approved CSR would be found again.
        key = _key(None if data.get(credentials.TLS_CRT) else data.get(credentials.TLS_KEY))
        key_pem = keys.private_key_to_pem(key)
        # Keep the pending key, so a restarted agent asks with the same CSR again.
        pending = {
            **data,
            credentials.TLS_KEY: key_pem,
            credentials.CLUSTER_NAME: self.subject.cluster.encode(),
            credentials.AGENT_NAME: self.subject.agent.encode(),
        }
        pending.pop(credentials.TLS_CRT, None)
        await self.managed.save_secret(self.secret, pending)
        async with Api.from_config(self.bootstrap.kubeconfig) as api:
            cert_pem = await self._join(api, key)
        stored = credentials.secret_data(
            self.bootstrap.hub, subject=self.subject, cert_pem=cert_pem, key_pem=key_pem
        )
        await self.managed.save_secret(self.secret, stored)
        self._report("registered")
        return stored

    async def _join(self, api: Api, key: keys.PrivateKey) -> bytes:
        """Prepare and get a certificate, retrying what may pass.

        A refused credential (401) cannot pass and ends the agent with a clear message;
        anything else (the hub not up yet, its bootstrap RBAC not applied yet) is
        retried with backoff, as upstream's controllers retry."""
        failures = 0
        while True:
            try:
                if self._prepare is not None:
                    await self._prepare(api)
                return await request_certificate(
                    api,
                    self.request,
                    key,
                    clock=self.clock,
                    poll=self.poll,
                    watch=True,
                    on_pending=self._pending,
                )
            except ApiError as err:
                if err.code == 401:
                    raise AgentError(
                        f"the hub at {self.bootstrap.hub.server} refused the bootstrap credential (an expired or "
                        "deleted token?); get a new one with 'pyocm get token' on the hub"
                    ) from None
                reason = f"{err.message} ({err.reason})"
            except ApiConnectionError as err:
                reason = str(err)
            failures += 1
            self._report(f"cannot join yet, retrying: {reason}")
            await self.clock.sleep(self._join_backoff.delay(failures - 1))

    def _pending(self, csr: str, denied: bool) -> None:
        if denied:
            self._report(f"csr {csr} was denied on the hub; waiting for a new approval")
        else:
            self._report(f"waiting for the hub admin to accept (csr {csr})")

    async def _save(self, cert_pem: bytes, key_pem: bytes) -> Credential:
        stored = credentials.secret_data(
            self.bootstrap.hub, subject=self.subject, cert_pem=cert_pem, key_pem=key_pem
        )
        await self.managed.save_secret(self.secret, stored)
        self._set(Credential(hub=self.bootstrap.hub, data=stored))
        return self.credential

    def _set(self, credential: Credential) -> None:
        changed = self._credential is None or self._credential.data != credential.data
        self._credential = credential
        if changed:
            for listener in list(self._listeners):
                listener(credential)


def _key(pem: bytes | None) -> keys.PrivateKey:
    if pem:
        with contextlib.suppress(keys.KeyFormatError, ValueError):
            return keys.load_private_key(pem)
    return keys.generate_private_key()
