"""The registration agent: identify, bootstrap, then report until removed.

1. **Identify.** The cluster name comes from the flag, else the hub kubeconfig secret,
   else the cluster's identity ConfigMap (so a redeployed agent keeps it), else a new
   UUID; the agent id from the flag, else the secret, else 5 random characters. The
   cluster's UID (``id.k8s.io``) is published as a ClusterClaim.
2. **Bootstrap** when the secret holds no valid credential for this hub: with the
   bootstrap credential, make sure the ManagedCluster exists (refusing a name another
   cluster registered), ask for a certificate by CSR and wait for the admin's approval,
   then store the credential in the secret.
3. **Run** with the agent's own certificate: report status, renew the lease, rotate the
   certificate when 20 to 25 % of its life is left. A credential the hub refuses means
   bootstrap again; a denied or deleted cluster ends the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import shapes
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import names
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.registration.agent import certs, credentials
from pyocm.registration.agent.csrflow import request_certificate
from pyocm.registration.agent.errors import AgentError, AgentStopped, Rebootstrap
from pyocm.registration.agent.managed import ManagedSide
from pyocm.registration.agent.running import Session
from pyocm.registration.agent.status import ClaimOptions
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

Obj = dict[str, Any]
log = logging.getLogger(__name__)
_AGENT_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
ID_CLAIM = "id.k8s.io"


@dataclass(frozen=True)
class AgentOptions:
    cluster_name: str = ""
    agent_id: str = ""
    hub_kubeconfig_secret: str = "hub-kubeconfig-secret"
    healthcheck_period: float = 60.0
    claims: ClaimOptions = field(default_factory=ClaimOptions)
    expiration_seconds: int | None = None
    external_server_urls: tuple[str, ...] = ()
    #: Labels under info.open-cluster-management.io/ to keep on the ManagedCluster
    #: (a None value removes the label); the hub must grant each one (labels.py).
    labels: tuple[tuple[str, str | None], ...] = ()
    poll: float = 1.0
    #: Where the bootstrap kubeconfig lives when none is given directly (upstream's
    #: --bootstrap-kubeconfig-secret, key ``kubeconfig``, in the agent namespace).
    bootstrap_secret: str = "bootstrap-hub-kubeconfig"
    #: How often a bootstrap kubeconfig kept in a Secret is checked for changes.
    bootstrap_check: float = 10.0


class RegistrationAgent:
    def __init__(
        self,
        *,
        bootstrap: Mapping[str, Any] | None,
        managed: ManagedSide,
        options: AgentOptions | None = None,
        clock: Clock | None = None,
        on_state: Callable[[str], None] | None = None,
    ) -> None:
        # None: read it from options.bootstrap_secret, and follow that Secret's changes.
        self._given_bootstrap = dict(bootstrap) if bootstrap is not None else None
        self.bootstrap: dict[str, Any] = dict(bootstrap) if bootstrap is not None else {}
        self._hub = (
            credentials.Hub.from_bootstrap(self.bootstrap) if bootstrap is not None else None
        )
        self.managed = managed
        self.options = options or AgentOptions()
        self.clock = clock or RealClock()
        self.state = "starting"
        self._on_state = on_state
        self.subject: certs.Subject | None = None
        self.uid = ""
        self.rotation_requested = asyncio.Event()
        #: The leaseDurationSeconds the lease was last renewed for, and when (the
        #: clock's monotonic seconds) it is next due; None: renew at once.
        self.lease_due: tuple[int, float] | None = None

    @property
    def hub(self) -> credentials.Hub:
        """The hub the bootstrap kubeconfig names (loaded by :meth:`run`)."""
        if self._hub is None:
            raise AgentError("no bootstrap kubeconfig has been loaded yet")
        return self._hub

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            log.info("agent: %s", state)
            if self._on_state is not None:
                self._on_state(state)

    def rotate_now(self) -> None:
        """Renew the client certificate now instead of at 75 to 80 % of its life (the
        fleet simulator's rotation storm asks every agent at once)."""
        self.rotation_requested.set()

    async def run(self) -> str:
        """Run until the hub denies or deletes the cluster; return that reason."""
        subject = await self.identify()
        while True:
            await self._load_bootstrap()
            data = await self.managed.load_secret(self.options.hub_kubeconfig_secret)
            if not credentials.valid(data, hub=self.hub, subject=subject, now=self.clock.now()):
                data = await self.bootstrap_credential(subject, data)
            try:
                await Session(self, subject, data).run()
            except Rebootstrap as err:
                self._set_state(f"restarting: {err}")
                continue
            except AgentStopped as stop:
                self._set_state(f"stopped: {stop.reason}")
                return stop.reason

    async def _load_bootstrap(self) -> None:
        """Read the bootstrap kubeconfig from its Secret (unless one was given), waiting
        for the Secret to exist."""
        if self._given_bootstrap is not None:
            return
        while True:
            found = await self.managed.load_bootstrap(self.options.bootstrap_secret)
            if found is not None:
                try:
                    self._hub = credentials.Hub.from_bootstrap(found)
                except ValueError as err:
                    raise AgentError(
                        f"the bootstrap secret {self.options.bootstrap_secret} holds no usable kubeconfig: {err}"
                    ) from None
                self.bootstrap = found
                return
            self._set_state(f"waiting for the bootstrap secret {self.options.bootstrap_secret}")
            await self.clock.sleep(self.options.bootstrap_check)

    async def bootstrap_changed(self) -> None:
        """Return when the bootstrap Secret's kubeconfig changes or goes, as upstream
        restarts its agent then; never, for a bootstrap kubeconfig given directly."""
        if self._given_bootstrap is not None:
            await asyncio.Event().wait()
        while True:
            await self.clock.sleep(self.options.bootstrap_check)
            found = await self.managed.load_bootstrap(self.options.bootstrap_secret)
            if found != self.bootstrap:
                return

    async def identify(self) -> certs.Subject:
        record = await self.managed.load_identity()
        secret = await self.managed.load_secret(self.options.hub_kubeconfig_secret)
        cluster = (
            self.options.cluster_name
            or secret.get(credentials.CLUSTER_NAME, b"").decode()
            or record.get("cluster-name", "")
            or str(uuid.uuid4())
        )
        problems = names.is_dns1123_label(cluster)
        if problems:
            raise AgentError(f"metadata.name format is not correct: {'; '.join(problems)}")
        agent = (
            self.options.agent_id
            or secret.get(credentials.AGENT_NAME, b"").decode()
            or "".join(random.choice(_AGENT_ALPHABET) for _ in range(5))
        )
        self.uid = record.get("cluster-uid") or await self.managed.cluster_uid()
        if record.get("cluster-uid") != self.uid or not record.get("cluster-name"):
            await self.managed.save_identity(
                {
                    **record,
                    "cluster-name": record.get("cluster-name") or cluster,
                    "cluster-uid": self.uid,
                }
            )
        await self.managed.ensure_claim(ID_CLAIM, self.uid)
        self.subject = certs.Subject(cluster=cluster, agent=agent)
        self._set_state("identified")
        return self.subject

    async def bootstrap_credential(
        self, subject: certs.Subject, data: Mapping[str, bytes]
    ) -> dict[str, bytes]:
        """Join with the bootstrap credential; return the stored hub credential."""
        # A key that never got a certificate is reused (same CSR name after a restart);
        # one that had a certificate is not, or its old approved CSR would be found again.
        key = _key(None if data.get(credentials.TLS_CRT) else data.get(credentials.TLS_KEY))
        key_pem = keys.private_key_to_pem(key)
        # Keep the pending key, so a restarted agent asks with the same CSR again.
        pending = {
            **data,
            credentials.TLS_KEY: key_pem,
            credentials.CLUSTER_NAME: subject.cluster.encode(),
            credentials.AGENT_NAME: subject.agent.encode(),
        }
        pending.pop(credentials.TLS_CRT, None)
        await self.managed.save_secret(self.options.hub_kubeconfig_secret, pending)
        async with Api.from_config(self.bootstrap) as api:
            cert_pem = await self._join(api, subject, key)
        stored = credentials.secret_data(
            self.hub, subject=subject, cert_pem=cert_pem, key_pem=key_pem
        )
        await self.managed.save_secret(self.options.hub_kubeconfig_secret, stored)
        self._set_state("registered")
        return stored

    async def _join(self, api: Api, subject: certs.Subject, key: keys.PrivateKey) -> bytes:
        """Ensure the ManagedCluster and get a certificate, retrying what may pass.

        A refused credential (401) cannot pass and ends the agent with a clear message;
        anything else (the hub not up yet, its bootstrap RBAC not applied yet) is
        retried with backoff, as upstream's controllers retry."""
        failures = 0
        while True:
            try:
                await self._ensure_cluster(api, subject)
                return await request_certificate(
                    api,
                    subject.request(expiration_seconds=self.options.expiration_seconds),
                    key,
                    clock=self.clock,
                    poll=self.options.poll,
                    watch=True,
                    on_pending=self._pending,
                )
            except ApiError as err:
                if err.code == 401:
                    raise AgentError(
                        f"the hub at {self.hub.server} refused the bootstrap credential (an expired or deleted "
                        "token?); get a new one with 'pyocm get token' on the hub"
                    ) from None
                reason = f"{err.message} ({err.reason})"
            except ApiConnectionError as err:
                reason = str(err)
            failures += 1
            self._set_state(f"cannot join yet, retrying: {reason}")
            await self.clock.sleep(min(self.options.poll * 2**failures, 30.0))

    def _pending(self, csr: str, denied: bool) -> None:
        if denied:
            self._set_state(f"csr {csr} was denied on the hub; waiting for a new approval")
        else:
            self._set_state(f"waiting for the hub admin to accept (csr {csr})")

    async def _ensure_cluster(self, api: Api, subject: certs.Subject) -> None:
        try:
            cluster = await api.get(ocm.MANAGED_CLUSTER, subject.cluster)
        except ApiError as err:
            # 403: not allowed to read it (yet?): creating it may be allowed all the same,
            # and if that is refused too, _join retries. Skipping the creation would leave
            # an approved certificate for a cluster that never appears.
            if err.code not in (403, 404):
                raise
            await self._create_cluster(api, subject)
            return
        registered = _claim(cluster, ID_CLAIM)
        if registered and registered != self.uid:
            raise AgentError(
                f'the hub already has a managed cluster "{subject.cluster}" registered by another cluster '
                f"({ID_CLAIM} {registered}, this cluster is {self.uid}); join with another --cluster-name"
            )

    async def _create_cluster(self, api: Api, subject: certs.Subject) -> None:
        spec: Obj = {"hubAcceptsClient": False}  # Go's agent always sends it (no omitempty)
        if self.options.external_server_urls:
            spec["managedClusterClientConfigs"] = [
                {"url": url} for url in self.options.external_server_urls
            ]
        try:
            await api.create(
                ocm.MANAGED_CLUSTER, {"metadata": {"name": subject.cluster}, "spec": spec}
            )
        except ApiError as err:
            if err.code != 409:
                raise


def _key(pem: bytes | None) -> keys.PrivateKey:
    if pem:
        with contextlib.suppress(keys.KeyFormatError, ValueError):
            return keys.load_private_key(pem)
    return keys.generate_private_key()


def _claim(cluster: Obj, name: str) -> str | None:
    # Another writer may have stored the status with any types: those read as no claim.
    for claim in shapes.objects(shapes.mapping(cluster.get("status")).get("clusterClaims")):
        if claim.get("name") == name:
            return str(claim.get("value"))
    return None
