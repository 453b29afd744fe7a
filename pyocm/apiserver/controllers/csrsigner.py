"""Sign approved ``kubernetes.io/kube-apiserver-client`` CSRs with the hub CA, as
kube-controller-manager's signer does, and clean old CSRs up as its csrcleaner does.

The CA that signs is the CA that authenticates client certificates, so an issued
certificate works against this hub at once (OCM's agents depend on that).
"""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from pyocm.apiserver.controllers.base import SYSTEM, KeyedLoop
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import DeleteOptions
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import status, timefmt
from pyocm.pki import signer

log = logging.getLogger("pyocm.apiserver.csr")
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
Obj = dict[str, Any]

APPROVED_TTL = timedelta(hours=1)
DENIED_TTL = timedelta(hours=1)
PENDING_TTL = timedelta(hours=24)


def csr_info(state: ServerState) -> ResourceInfo:
    info = state.catalog.get("certificates.k8s.io", "v1", "certificatesigningrequests")
    assert info is not None
    return info


def conditions(csr: Obj) -> dict[str, Obj]:
    return {str(c.get("type")): c for c in (csr.get("status") or {}).get("conditions") or []}


class CsrSigner:
    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        self._info = csr_info(state)
        self._prefix = self._info.key_prefix()
        # kube-controller-manager's signing controllers run 5 workers: with etcd a
        # signature's write takes a round trip, which one worker would wait on in turn.
        self.loop = KeyedLoop("csr-signer", self._reconcile, clock=clock, workers=5)

    async def start(self) -> None:
        _, items = await self._state.store.list(self._info, namespace="")
        for item in items:
            self.loop.add(item["metadata"]["name"])
        self._state.store.backend.add_commit_hook(self._on_commit)
        self.loop.start()

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            if event.type is EventType.PUT and event.kv.key.startswith(self._prefix):
                self.loop.add(event.kv.key[len(self._prefix) :])

    async def _reconcile(self, name: str) -> float | None:
        csr = await self._state.store.get(self._info, namespace="", name=name)
        spec, found = csr.get("spec") or {}, conditions(csr)
        if spec.get("signerName") != CLIENT_SIGNER or "Approved" not in found:
            return None
        if "Denied" in found or "Failed" in found or (csr.get("status") or {}).get("certificate"):
            return None
        try:
            cert = signer.sign_client_csr(
                self._state.ca,
                csr_pem=base64.b64decode(spec.get("request") or ""),
                usages=list(spec.get("usages") or []),
                expiration_seconds=spec.get("expirationSeconds"),
                max_ttl=self._state.config.cluster_signing_duration,
                now=datetime.now(UTC),
            )
        except signer.SigningRefused as err:
            now = timefmt.now_rfc3339()
            failed = {
                "type": "Failed",
                "status": "True",
                "reason": err.reason,
                "message": err.message,
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            }
            csr.setdefault("status", {}).setdefault("conditions", []).append(failed)
        except signer.SigningError as err:
            log.warning("cannot sign CSR %s yet: %s", name, err)
            return 30.0
        else:
            csr.setdefault("status", {})["certificate"] = base64.b64encode(cert).decode()
        await self._state.store.update(
            self._info, name=name, obj=csr, ctx=Context(user=SYSTEM, subresource="status")
        )
        return None


class CsrCleaner:
    """Deletes CSRs that are done with: approved or denied (and failed) for over an hour,
    pending for over a day, or whose issued certificate has expired."""

    def __init__(self, state: ServerState, *, clock: Clock | None = None) -> None:
        self._state = state
        self._info = csr_info(state)
        self._clock = clock or RealClock()
        self.loop = KeyedLoop("csr-cleaner", self._sweep, clock=self._clock)

    async def start(self) -> None:
        self.loop.start()
        self.loop.add("sweep")

    async def _sweep(self, key: str) -> float:
        _, items = await self._state.store.list(self._info, namespace="")
        now = self._clock.now()
        for csr in items:
            if expired(csr, now=now):
                try:
                    await self._state.store.delete(
                        self._info,
                        name=csr["metadata"]["name"],
                        ctx=Context(user=SYSTEM),
                        options=DeleteOptions(),
                    )
                except status.ApiError as err:
                    if err.reason != "NotFound":
                        raise
        return self._state.config.csr_cleanup_interval.total_seconds()


def expired(csr: Obj, *, now: datetime) -> bool:
    found = conditions(csr)
    for kind, ttl in (("Approved", APPROVED_TTL), ("Denied", DENIED_TTL), ("Failed", DENIED_TTL)):
        cond = found.get(kind)
        if cond is not None and _older(
            cond.get("lastUpdateTime") or cond.get("lastTransitionTime"), ttl, now
        ):
            return True
    if not found and _older(csr.get("metadata", {}).get("creationTimestamp"), PENDING_TTL, now):
        return True
    cert = (csr.get("status") or {}).get("certificate")
    return bool(cert) and _certificate_expired(str(cert), now)


def _older(stamp: Any, ttl: timedelta, now: datetime) -> bool:
    if not stamp:
        return False
    try:
        return now - timefmt.parse_time(str(stamp)) > ttl
    except ValueError:
        return False


def _certificate_expired(b64: str, now: datetime) -> bool:
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(base64.b64decode(b64))
    except ValueError:
        return False
    return cert.not_valid_after_utc < now
