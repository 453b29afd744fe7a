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

The credential's life (bootstrap, rotation, rebootstrap, the secret) is the
:class:`~pyocm.registration.agent.hubcredential.HubCredentialProvider`'s, which the
agent composes with its :class:`~pyocm.registration.agent.running.Session`; the agent
adds what is its own: the identity, and the ManagedCluster created while joining.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models, shapes
from pyocm.api.models.cluster_v1 import ManagedCluster, ManagedClusterSpec
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import names
from pyocm.kube.status import ApiError
from pyocm.registration.agent import certs, credentials
from pyocm.registration.agent.addons.host import AddOnHost, KubeAddOnHost
from pyocm.registration.agent.addons.registrar import AddOnRegistrar
from pyocm.registration.agent.bootstrap import BootstrapSource
from pyocm.registration.agent.errors import AgentError, AgentStopped, Rebootstrap
from pyocm.registration.agent.hubcredential import HubCredentialProvider
from pyocm.registration.agent.managed import KubeManagedSide, ManagedSide
from pyocm.registration.agent.options import AgentOptions
from pyocm.registration.agent.running import LeaseSchedule, Session, SessionContext
from pyocm.runtime.client import Api

log = logging.getLogger(__name__)
_AGENT_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
ID_CLAIM = "id.k8s.io"
__all__ = ["ID_CLAIM", "AgentOptions", "RegistrationAgent"]


class RegistrationAgent:
    def __init__(
        self,
        *,
        bootstrap: Mapping[str, Any] | None,
        managed: ManagedSide,
        options: AgentOptions | None = None,
        clock: Clock | None = None,
        on_state: Callable[[str], None] | None = None,
        addon_host: AddOnHost | None = None,
    ) -> None:
        self.managed = managed
        # Add-on agents' namespaces, Secrets and Leases: on a Kubernetes managed cluster
        # its API; a managed side without one (the fleet simulator's) names its own host.
        self.addon_host = addon_host or (
            KubeAddOnHost(managed.api) if isinstance(managed, KubeManagedSide) else None
        )
        self.options = options or AgentOptions()
        self.clock = clock or RealClock()
        self.state = "starting"
        self._on_state = on_state
        # None: read it from options.bootstrap_secret, and follow that Secret's changes.
        self.bootstrap = BootstrapSource(
            given=bootstrap,
            managed=managed,
            secret=self.options.bootstrap_secret,
            check_every=self.options.bootstrap_check,
            clock=self.clock,
            report=self._set_state,
        )
        self.subject: certs.Subject | None = None
        self.uid = ""
        #: The hub credential, once :meth:`identify` has named the subject.
        self.credentials: HubCredentialProvider | None = None
        self._rotate_asked = False
        self._lease = LeaseSchedule()

    @property
    def hub(self) -> credentials.Hub:
        """The hub the bootstrap kubeconfig names (loaded by :meth:`run`)."""
        return self.bootstrap.hub

    @property
    def lease_due(self) -> tuple[int, float] | None:
        """The leaseDurationSeconds the lease was last renewed for, and when (the
        clock's monotonic seconds) it is next due; None: renew at once."""
        return self._lease.due

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            log.info("agent: %s", state)
            if self._on_state is not None:
                self._on_state(state)

    def rotate_now(self) -> None:
        """Renew the client certificate now instead of at 75 to 80 % of its life (the
        fleet simulator's rotation storm asks every agent at once)."""
        if self.credentials is None:
            self._rotate_asked = True  # asked before the credential exists
        else:
            self.credentials.rotate_now()

    async def run(self) -> str:
        """Run until the hub denies or deletes the cluster; return that reason."""
        provider = self._provider(await self.identify())
        context = SessionContext(
            credentials=provider,
            managed=self.managed,
            options=self.options,
            clock=self.clock,
            lease=self._lease,
            report=self._set_state,
            addons=self._addons(provider.subject.cluster),
        )
        while True:
            await provider.current()
            try:
                await Session(context).run()
            except Rebootstrap as err:
                self._set_state(f"restarting: {err}")
                continue
            except AgentStopped as stop:
                self._set_state(f"stopped: {stop.reason}")
                return stop.reason

    def _addons(self, cluster: str) -> AddOnRegistrar | None:
        if self.addon_host is None or not self.options.addons.enabled:
            return None
        return AddOnRegistrar(
            cluster=cluster,
            host=self.addon_host,
            clock=self.clock,
            options=self.options.addons,
            poll=self.options.poll,
            expiration_seconds=self.options.expiration_seconds,
        )

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

    def _provider(self, subject: certs.Subject) -> HubCredentialProvider:
        self.credentials = HubCredentialProvider(
            subject=subject,
            bootstrap=self.bootstrap,
            managed=self.managed,
            secret=self.options.hub_kubeconfig_secret,
            clock=self.clock,
            poll=self.options.poll,
            expiration_seconds=self.options.expiration_seconds,
            prepare=lambda api: self._ensure_cluster(api, subject),
            report=self._set_state,
        )
        if self._rotate_asked:
            self.credentials.rotate_now()
        return self.credentials

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
        registered = _claim(models.view(ManagedCluster, cluster), ID_CLAIM)
        if registered and registered != self.uid:
            raise AgentError(
                f'the hub already has a managed cluster "{subject.cluster}" registered by another cluster '
                f"({ID_CLAIM} {registered}, this cluster is {self.uid}); join with another --cluster-name"
            )

    async def _create_cluster(self, api: Api, subject: certs.Subject) -> None:
        # Go's agent always sends hubAcceptsClient (no omitempty).
        spec: ManagedClusterSpec = {"hubAcceptsClient": False}
        if self.options.external_server_urls:
            spec["managedClusterClientConfigs"] = [
                {"url": url} for url in self.options.external_server_urls
            ]
        body: ManagedCluster = {"metadata": {"name": subject.cluster}, "spec": spec}
        try:
            await api.create(ocm.MANAGED_CLUSTER, models.wire(body))
        except ApiError as err:
            if err.code != 409:
                raise


def _claim(cluster: ManagedCluster, name: str) -> str | None:
    # The hub's answer, not read through a schema: another writer may have stored the
    # status with any types, and those read as no claim.
    for claim in shapes.objects(shapes.mapping(cluster.get("status")).get("clusterClaims")):
        if claim.get("name") == name:
            return str(claim.get("value"))
    return None
