"""Ask the hub for a certificate with a CSR and wait until it is issued.

Used for any :class:`~pyocm.registration.agent.certs.CertificateRequest`: the cluster
agent's at bootstrap (with the bootstrap credential; an admin approves) and at rotation
(with the agent's own credential; the hub approves renewals), and an add-on's (any
signer). An existing CSR of the same name is the requester's own earlier request (same
subject, same key) and is waited on instead of being created again.

A CSR its signer reports ``Failed`` will never be issued. By default the agent waits on
it as on a denied one, as upstream's agent does, until it is gone (the hub's CSR cleaner
removes it an hour on) and then asks again. A caller that would rather ask again sooner,
with a new key, passes ``stop_on_failed`` and gets :class:`CsrFailed`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pyocm.api import conditions, models, shapes
from pyocm.base.clock import Clock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.registration.agent import certs
from pyocm.registration.agent.errors import AgentError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

log = logging.getLogger(__name__)


class CsrFailed(Exception):
    """The signer failed the CSR: it will never be issued."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"csr {name} failed: {message}")
        self.name = name
        self.message = message


#: How long one watch of the CSR lasts before the agent looks again from scratch.
WATCH_SECONDS = 300
#: Polling backs off from ``poll`` to this many times ``poll`` between reads.
POLL_BACKOFF = 32
#: Each pause is this fraction longer or shorter at random, so that a fleet renewing at
#: once does not read at the same instants.
POLL_JITTER = 0.2


async def request_certificate(
    api: Api,
    request: certs.CertificateRequest,
    key: keys.PrivateKey,
    *,
    clock: Clock,
    poll: float = 1.0,
    watch: bool = False,
    on_pending: Callable[[str, bool], None] | None = None,
    stop_on_failed: bool = False,
) -> bytes:
    """Create (or find) the CSR and return the issued certificate's PEM.

    With ``watch`` the agent waits on a watch of its CSR, as upstream's CSR informer
    does: a cluster waiting hours for an admin costs the hub nothing. Without it, for a
    connection pool that a watch would hold (the running agent's, where the hub
    approves renewals within moments), the CSR is read after ``poll`` seconds, then
    at doubling intervals up to ``POLL_BACKOFF * poll``, each jittered: in a rotation
    storm the waiting agents' reads crowd out the renewals themselves (a 9,500-cluster
    storm went at 32 renewals a second with reads every 8 s at most, 38 with 32 s).

    With ``stop_on_failed`` a CSR its signer failed raises :class:`CsrFailed`."""
    body = request.csr_object(key)
    name = body["metadata"]["name"]
    # The CSR as the hub answers it, not read through a schema: read defensively.
    csr: dict[str, Any] | None = None
    try:
        csr = await api.create(kinds.CSR, models.wire(body))
        log.info("created CSR %s for %s", name, request.common_name)
    except ApiError as err:
        if err.code != 409:
            raise
    waiting = _Waiting(name, key, on_pending, stop_on_failed=stop_on_failed)
    delay = poll
    while True:
        if csr is None:
            try:
                csr = await api.get(kinds.CSR, name)
            except ApiError as err:
                if err.code != 404:
                    raise
                # Deleted before it was issued (an admin cleaned up, or the hub's CSR
                # GC): ask again.
                csr = await api.create(kinds.CSR, models.wire(body))
        if (pem := waiting.issued(csr)) is not None:
            return pem
        if not watch:
            await clock.sleep(delay * random.uniform(1 - POLL_JITTER, 1 + POLL_JITTER))
            delay = min(delay * 2, poll * POLL_BACKOFF)
        elif (pem := await _watch_or_pause(api, csr, waiting, clock=clock, poll=poll)) is not None:
            return pem
        csr = None  # look again


async def _watch_or_pause(
    api: Api, csr: dict[str, Any], waiting: _Waiting, *, clock: Clock, poll: float
) -> bytes | None:
    """The certificate, or None to look again: at once after a deletion, after ``poll``
    seconds when the watch ended or failed (a hub shutting down ends every watch at
    once, and thousands of waiting agents must not spin)."""
    try:
        # Bounded here too: a connection that died silently would never end the stream.
        async with asyncio.timeout(WATCH_SECONDS + 30):
            outcome = await _watch(api, csr, waiting)
        if isinstance(outcome, bytes):
            return outcome
        if outcome == "deleted":
            return None
    except TimeoutError:
        pass
    except ApiError as err:
        if err.code not in (403, 410):  # 410: history moved on; 403: no watch granted
            raise
    except ApiConnectionError as err:
        log.warning("agent: watching CSR %s: %s", waiting.name, err)
    await clock.sleep(poll)
    return None


async def _watch(
    api: Api, csr: dict[str, Any], waiting: _Waiting
) -> bytes | Literal["deleted", "ended"]:
    """The certificate once the watch shows it, or how the watch ended without one."""
    events = api.watch(
        kinds.CSR,
        fields=f"metadata.name={waiting.name}",
        resource_version=csr["metadata"]["resourceVersion"],
        timeout_seconds=WATCH_SECONDS,
    )
    # aclosing: leaving early ends the stream and frees its connection now.
    async with contextlib.aclosing(events):
        async for event, obj in events:
            if event == "DELETED":
                return "deleted"
            if event in ("ADDED", "MODIFIED") and (pem := waiting.issued(obj)) is not None:
                return pem
    return "ended"


class _Waiting:
    """What the agent makes of each state of its CSR while it waits."""

    def __init__(
        self,
        name: str,
        key: keys.PrivateKey,
        on_pending: Callable[[str, bool], None] | None,
        *,
        stop_on_failed: bool = False,
    ) -> None:
        self.name = name
        self.key = key
        self.on_pending = on_pending
        self.stop_on_failed = stop_on_failed
        self.announced: bool | None = None  # the denial state last announced

    def issued(self, csr: Mapping[str, Any]) -> bytes | None:
        """The certificate of ``csr`` (as answered or watched: read defensively) once
        approved and issued."""
        status = shapes.mapping(csr.get("status"))
        found = status.get("conditions") or []
        certificate = status.get("certificate")
        if conditions.is_true(found, "Approved") and certificate:
            pem = base64.b64decode(certificate)
            chain = certs.load_chain(pem)
            if not chain or not certs.key_matches(chain[0], self.key):
                raise AgentError(
                    f"the certificate issued for CSR {self.name} does not match the agent's private key"
                )
            return pem
        failed = conditions.find(found, "Failed")
        if self.stop_on_failed and failed is not None and failed.get("status") == "True":
            raise CsrFailed(self.name, str(failed.get("message") or failed.get("reason") or ""))
        denied = conditions.is_true(found, "Denied")
        if self.announced is None or (denied and not self.announced):
            if self.on_pending is not None:
                self.on_pending(self.name, denied)
            self.announced = denied
        return None
