"""Keep one add-on registration's Secret holding a current certificate.

Upstream starts a secret controller per registration (``ClientCertController@addon:<a>:
type:<type>``) running the CSR driver: it asks for a certificate when the Secret has no
good one (secrets.py), waits for the hub to approve and issue it, writes the Secret and
then reports ``ClusterCertificateRotated`` on the ManagedClusterAddOn. This worker does
the same through the cluster agent's own CSR flow (csrflow.py) and rotation rule
(certs.py).

Two upstream details kept on purpose: the pending private key is kept until its
certificate is stored, so a Secret that cannot be written yet (its namespace is missing)
is written when it can without a new CSR; and no CSR is created while 10 or more CSRs of
this cluster and add-on exist on the hub, with upstream's condition. One departure: a CSR
its signer failed is given up at once (see :meth:`AddOnCertificate._failed`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pyocm.api import wellknown
from pyocm.base.backoff import Backoff
from pyocm.base.clock import Clock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.registration.agent import certs, credentials
from pyocm.registration.agent.addons import secrets
from pyocm.registration.agent.addons.config import Registration
from pyocm.registration.agent.addons.host import AddOnHost
from pyocm.registration.agent.csrflow import CsrFailed, request_certificate
from pyocm.registration.agent.errors import AgentError
from pyocm.registration.agent.waits import first
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

log = logging.getLogger(__name__)

#: Upstream's addonCSRThreshold: no new CSR while this many of the add-on's exist.
CSR_THRESHOLD = 10
#: Upstream's secret controller resync (ControllerResyncInterval).
RESYNC_SECONDS = 300.0
HALTED_MESSAGE = "Stop creating csr since there are too many csr created already on hub"

#: Reports the ``ClusterCertificateRotated`` condition: (status, reason, message).
Report = Callable[[str, str, str], Awaitable[None]]


@dataclass(frozen=True, kw_only=True)
class Context:
    """What every registration of the cluster shares."""

    cluster: str
    hub: credentials.Hub
    host: AddOnHost
    clock: Clock
    poll: float = 1.0


class AddOnCertificate:
    """The worker for one :class:`Registration`; :meth:`run` until cancelled."""

    def __init__(self, registration: Registration, *, context: Context, report: Report) -> None:
        self.registration = registration
        self.context = context
        self.report = report
        self.additional = secrets.additional_data(
            registration, cluster=context.cluster, hub=context.hub
        )
        self.threshold = certs.rotation_threshold()
        #: The key of the CSR asked for and not yet stored, kept across failures.
        self.pending: keys.PrivateKey | None = None
        #: A certificate got but not yet stored (upstream's ``secretToSave``).
        self.unsaved: dict[str, bytes] | None = None
        self.poked = asyncio.Event()
        #: CSRs failed by their signer in a row, for the backoff before the next one.
        self.failed_csrs = 0
        self._backoff = Backoff(duration=2 * context.poll, cap=60.0)

    def poke(self) -> None:
        """Look at the Secret again now (it changed, or the hub credential did)."""
        self.poked.set()

    async def run(self, api: Api) -> None:
        failures = 0
        while True:
            self.poked.clear()
            try:
                wait = await self.sync(api)
                failures = 0
            except (ApiError, ApiConnectionError) as err:
                failures += 1
                log.warning(
                    "agent: add-on %s secret %s/%s: %s",
                    self.registration.addon,
                    self.registration.namespace,
                    self.registration.secret,
                    err,
                )
                wait = self._backoff.delay(failures - 1)
            await first(self.poked.wait(), self.context.clock.sleep(wait))

    async def sync(self, api: Api) -> float:
        """One pass; answers how long to wait before the next one."""
        registration, host = self.registration, self.context.host
        if self.unsaved is None:
            data = await host.load_secret(registration.namespace, registration.secret) or {}
            now = self.context.clock.now()
            reason = secrets.renewal_reason(
                data,
                registration,
                additional=self.additional,
                now=now,
                threshold=self.threshold,
            )
            if reason is None:
                due = secrets.renewal_due(data, now=now, threshold=self.threshold)
                return min(RESYNC_SECONDS, max((due - now).total_seconds(), 0.0))
            log.info(
                "agent: add-on %s needs a certificate for secret %s (%s)",
                registration.addon,
                registration.secret,
                reason,
            )
            if self.pending is None and await self._halted(api):
                await self.report(
                    "False", wellknown.REASON_CLIENT_CERT_UPDATE_FAILED, HALTED_MESSAGE
                )
                return RESYNC_SECONDS
            try:
                cert_pem = await self._certificate(api)
            except CsrFailed as err:
                return await self._failed(err)
            if cert_pem is None:
                return 0.0
            self.failed_csrs = 0
            self.unsaved = {**data, **self._stored(cert_pem)}
        await host.ensure_namespace(registration.namespace)
        await host.save_secret(registration.namespace, registration.secret, self.unsaved)
        chain = certs.load_chain(self.unsaved[credentials.TLS_CRT])
        self.unsaved = None
        self.pending = None
        self.threshold = certs.rotation_threshold()
        start, end = chain[0].not_valid_before_utc, chain[0].not_valid_after_utc
        await self.report(
            "True",
            wellknown.REASON_CLIENT_CERT_UPDATED,
            f"client certificate rotated starting from {certs.go_time(start)} to {certs.go_time(end)}",
        )
        return 0.0

    async def _certificate(self, api: Api) -> bytes | None:
        """The issued certificate for the pending key; None when it had to be dropped."""
        if self.pending is None:
            self.pending = keys.generate_private_key()
        try:
            return await request_certificate(
                api,
                self.registration.request,
                self.pending,
                clock=self.context.clock,
                poll=self.context.poll,
                stop_on_failed=True,
            )
        except AgentError:
            name = self.registration.request.csr_name(self.pending)
            self.pending = None
            await self.report(
                "False",
                wellknown.REASON_CLIENT_CERT_UPDATE_FAILED,
                "Failed to rotated client certificate private key does not match with the "
                f"certificate in csr: {name}",
            )
            return None
        except ApiError as err:
            await self.report(
                "False",
                wellknown.REASON_CLIENT_CERT_UPDATE_FAILED,
                f"Failed to create CSR {err.message}",
            )
            raise

    async def _failed(self, err: CsrFailed) -> float:
        """Its signer failed the CSR: drop its key, so that the next pass asks again
        with a new CSR, after a backoff. Upstream's agent waits on such a CSR until it
        is gone (an hour on); pyocm's hub fails CSRs its add-on's CA cannot sign, and a
        CA fixed in minutes should not hold the add-on for an hour. The 10-CSR halt
        still bounds how many failed ones pile up on the hub."""
        self.pending = None
        self.failed_csrs += 1
        log.warning("agent: add-on %s: %s", self.registration.addon, err)
        await self.report(
            "False",
            wellknown.REASON_CLIENT_CERT_UPDATE_FAILED,
            f"Failed to rotated client certificate {err}",
        )
        return self._backoff.delay(self.failed_csrs - 1)

    def _stored(self, cert_pem: bytes) -> dict[str, bytes]:
        assert self.pending is not None
        return secrets.secret_data(
            cert_pem=cert_pem,
            key_pem=keys.private_key_to_pem(self.pending),
            additional=self.additional,
        )

    async def _halted(self, api: Api) -> bool:
        """Upstream's halt: too many CSRs of this cluster and add-on on the hub already."""
        labels = (
            f"{wellknown.CLUSTER_NAME_LABEL}={self.context.cluster},"
            f"{wellknown.ADDON_NAME_LABEL}={self.registration.addon}"
        )
        found = await api.list_all(kinds.CSR, labels=labels)
        return len(found.get("items") or []) >= CSR_THRESHOLD
