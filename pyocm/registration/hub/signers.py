"""Custom CSR signers: a registry by signerName, and the controller that signs with them.

An add-on whose agents need certificates from its own CA (upstream's ``customSigner``
registrations) registers a signer under its signerName; once an approver (approvers.py)
has approved a CSR for that signer, :class:`CsrSigningController` issues the
certificate into ``status.certificate``. Names under ``kubernetes.io/`` are refused:
``kubernetes.io/kube-apiserver-client`` is the API server's own signer (its CSR
controller, as kube-controller-manager's), and stays there.

Registering a test add-on's signer::

    registry = SignerRegistry()
    registry.register("example.com/hello", CaSigner(ca=CertificateAuthority.create("hello")))
"""

from __future__ import annotations

import base64
import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from pyocm.api import conditions, models, shapes
from pyocm.api.models.certificates_v1 import CertificateSigningRequest
from pyocm.base.clock import Clock
from pyocm.kube import kinds, timefmt
from pyocm.pki import signer
from pyocm.pki.ca import CertificateAuthority
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
RESERVED_PREFIX = "kubernetes.io/"
#: How soon a CSR that could not be signed yet (an expired CA, say) is tried again.
RETRY_SECONDS = 30.0


class Signer(Protocol):
    def sign(self, csr: dict[str, Any], *, now: datetime) -> bytes:
        """The PEM certificate for the approved ``csr`` (as cached, not read through a
        schema: its fields may hold anything); raises
        :class:`~pyocm.pki.signer.SigningRefused` (never signable: a Failed condition)
        or :class:`~pyocm.pki.signer.SigningError` (not now: tried again)."""
        ...


@dataclass(frozen=True, kw_only=True)
class CaSigner:
    """Signs client certificates with ``ca``, as the kube-apiserver-client signer does
    (pki/signer.py: usages, backdating, the CSR's subject and SANs), for at most ``max_ttl``."""

    ca: CertificateAuthority
    max_ttl: timedelta = timedelta(hours=720)

    def sign(self, csr: dict[str, Any], *, now: datetime) -> bytes:
        spec = shapes.mapping(csr.get("spec"))
        return signer.sign_client_csr(
            self.ca,
            csr_pem=base64.b64decode(spec.get("request") or ""),
            usages=list(spec.get("usages") or []),
            expiration_seconds=spec.get("expirationSeconds"),
            max_ttl=self.max_ttl,
            now=now,
        )


class SignerRegistry:
    """The custom signers the hub signs for, by signerName."""

    def __init__(self) -> None:
        self._signers: dict[str, Signer] = {}

    def register(self, signer_name: str, signer: Signer) -> None:
        if signer_name.startswith(RESERVED_PREFIX):
            raise ValueError(f"{signer_name}: kubernetes.io/ signers are the API server's own")
        if signer_name in self._signers:
            raise ValueError(f"{signer_name}: a signer is registered under that name already")
        self._signers[signer_name] = signer

    def get(self, signer_name: str) -> Signer | None:
        return self._signers.get(signer_name)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._signers)


class CsrSigningController:
    """Signs the approved CSRs of registered signers that have no certificate yet."""

    def __init__(self, api: Api, csrs: Informer, *, registry: SignerRegistry, clock: Clock) -> None:
        self.api = api
        self.csrs = csrs
        self.registry = registry
        self.clock = clock

    async def reconcile(self, name: str) -> Result | None:
        csr = self.csrs.store.get(name)
        if csr is None or not _signable(csr):
            return None
        found = self.registry.get(str(shapes.mapping(csr.get("spec")).get("signerName")))
        if found is None:
            return None
        signed = models.view(CertificateSigningRequest, copy.deepcopy(csr))
        status = signed.setdefault("status", {})
        try:
            status["certificate"] = base64.b64encode(found.sign(csr, now=self.clock.now())).decode()
        except signer.SigningRefused as err:
            moment = timefmt.format_time(self.clock.now())
            status.setdefault("conditions", []).append(
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": err.reason,
                    "message": err.message,
                    "lastUpdateTime": moment,
                    "lastTransitionTime": moment,
                }
            )
        except signer.SigningError as err:
            log.warning("cannot sign CSR %s yet: %s", name, err)
            return Result(requeue_after=RETRY_SECONDS)
        await self.api.update(kinds.CSR, models.wire(signed), subresource="status")
        return None


def _signable(csr: Mapping[str, Any]) -> bool:
    """Whether a cached CSR (not read through a schema) is approved and not yet signed."""
    status = shapes.mapping(csr.get("status"))
    found = status.get("conditions") or []
    if not conditions.is_true(found, "Approved"):
        return False
    if any(conditions.find(found, kind) is not None for kind in ("Denied", "Failed")):
        return False
    return not status.get("certificate")
