"""Ask the hub for a certificate with a CSR and wait until it is issued.

Used twice: at bootstrap (with the bootstrap credential; an admin approves) and at
rotation (with the agent's own credential; the hub approves renewals). An existing CSR
of the same name is the agent's own earlier request (same subject, same key) and is
waited on instead of being created again.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable

from pyocm.api import conditions
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.registration.agent import certs
from pyocm.registration.agent.errors import AgentError
from pyocm.runtime import kinds
from pyocm.runtime.client import Api
from pyocm.runtime.clock import Clock

log = logging.getLogger(__name__)


async def request_certificate(
    api: Api,
    subject: certs.Subject,
    key: keys.PrivateKey,
    *,
    clock: Clock,
    poll: float = 1.0,
    expiration_seconds: int | None = None,
    on_pending: Callable[[str, bool], None] | None = None,
) -> bytes:
    """Create (or find) the CSR and return the issued certificate's PEM."""
    body = certs.csr_object(subject, key, expiration_seconds=expiration_seconds)
    name = str(body["metadata"]["name"])  # type: ignore[index]
    try:
        await api.create(kinds.CSR, body)
        log.info("created CSR %s for cluster %s", name, subject.cluster)
    except ApiError as err:
        if err.code != 409:
            raise
    announced = False
    while True:
        try:
            csr = await api.get(kinds.CSR, name)
        except ApiError as err:
            if err.code != 404:
                raise
            # Deleted before it was issued (an admin cleaned up, or the hub's CSR GC): ask again.
            await api.create(kinds.CSR, body)
            continue
        found = (csr.get("status") or {}).get("conditions") or []
        certificate = (csr.get("status") or {}).get("certificate")
        if conditions.is_true(found, "Approved") and certificate:
            pem = base64.b64decode(certificate)
            chain = certs.load_chain(pem)
            if not chain or not certs.key_matches(chain[0], key):
                raise AgentError(
                    f"the certificate issued for CSR {name} does not match the agent's private key"
                )
            return pem
        if not announced or conditions.is_true(found, "Denied"):
            if on_pending is not None:
                on_pending(name, conditions.is_true(found, "Denied"))
            announced = True
        await clock.sleep(poll)
