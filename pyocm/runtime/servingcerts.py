"""Serving certificates for webhooks behind a Service, kept in Secrets and rotated, and
their CA put where the API server reads it (``caBundle``).

What upstream's cluster-manager operator does for its webhooks (its cert rotation
controller, built on sdk-go's ``certrotation``), as one idempotent step a controller
runs on every change and every ten minutes:

1. a self-signed signing CA in a ``kubernetes.io/tls`` Secret, replaced when a fifth of
   its validity (365 days) is left, or when it is missing or unreadable;
2. a CA bundle ConfigMap (key ``ca-bundle.crt``) with the current CA and every earlier
   one not yet expired, so certificates the old CA signed stay trusted while they last;
3. the serving certificate in its own Secret, for ``<service>.<namespace>.svc`` (and the
   shorter and longer names), replaced when a fifth of its validity (30 days) is left,
   when the CA changed, or when its names differ;
4. the bundle as ``caBundle`` of every webhook of every Validating/Mutating
   WebhookConfiguration and every CRD conversion webhook that calls this Service (so a
   configuration is claimed by what it points at, not by a name list).

Only the public CA certificate leaves the Secrets; keys are never logged.
"""

from __future__ import annotations

import base64
import copy
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding

from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.pki.ca import CAError, CertificateAuthority
from pyocm.pki.keys import KeyFormatError
from pyocm.runtime.client import Api

Obj = dict[str, Any]
log = logging.getLogger(__name__)

SIGNING_VALIDITY = timedelta(days=365)
SERVING_VALIDITY = timedelta(days=30)
#: Replace a certificate once less than this share of its validity is left.
REFRESH_SHARE = 0.2
BUNDLE_KEY = "ca-bundle.crt"
TLS_TYPE = "kubernetes.io/tls"
WEBHOOK_CONFIGURATIONS = (
    kinds.VALIDATING_WEBHOOK_CONFIGURATION,
    kinds.MUTATING_WEBHOOK_CONFIGURATION,
)


@dataclass(frozen=True, kw_only=True)
class ServingCertificates:
    """Where the certificates of the webhooks behind ``service`` live."""

    namespace: str
    service: str
    signer_secret: str = "signer-secret"
    bundle_configmap: str = "ca-bundle-configmap"
    serving_secret: str
    signer_name: str = "cluster-manager-webhook"

    @property
    def hosts(self) -> tuple[str, ...]:
        base = f"{self.service}.{self.namespace}"
        return (f"{base}.svc", base, self.service, f"{base}.svc.cluster.local")


#: The objects of a kind the injection looks at: a listing from the API by default, a
#: controller's informer cache when it has one (objects it must not change in place).
Lister = Callable[[Kind], Awaitable[list[Obj]]]


async def sync(
    api: Api,
    spec: ServingCertificates,
    *,
    now: datetime | None = None,
    lister: Lister | None = None,
) -> bytes:
    """Bring the Secrets, the bundle and every ``caBundle`` up to date; the bundle's PEM."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    signer = await _signer(api, spec, moment)
    bundle = await _bundle(api, spec, signer, moment)
    await _serving(api, spec, signer, moment)
    await inject(api, spec, bundle, lister=lister)
    return bundle


# --- the signing CA ------------------------------------------------------------------


async def _signer(api: Api, spec: ServingCertificates, now: datetime) -> CertificateAuthority:
    current = await _get(api, kinds.SECRET, spec.signer_secret, namespace=spec.namespace)
    signer = _load_ca(current)
    if signer is not None and not _due(signer.certificate, now):
        return signer
    name = f"{spec.signer_name}@{int(now.timestamp())}"
    signer = CertificateAuthority.create(name, valid_for=SIGNING_VALIDITY, now=now)
    await _put_tls(
        api, spec.namespace, spec.signer_secret, signer.cert_pem, signer.key_pem, current
    )
    log.info(
        "made a new webhook signing CA %s in secret %s/%s", name, spec.namespace, spec.signer_secret
    )
    return signer


def _load_ca(secret: Obj | None) -> CertificateAuthority | None:
    data = _tls(secret)
    if data is None:
        return None
    try:
        return CertificateAuthority.load(*data)
    except (CAError, KeyFormatError, ValueError):
        return None


# --- the bundle ----------------------------------------------------------------------


async def _bundle(
    api: Api, spec: ServingCertificates, signer: CertificateAuthority, now: datetime
) -> bytes:
    current = await _get(api, kinds.CONFIGMAP, spec.bundle_configmap, namespace=spec.namespace)
    text = str(((current or {}).get("data") or {}).get(BUNDLE_KEY) or "")
    kept = [signer.certificate]
    for certificate in _certificates(text.encode()):
        if certificate.not_valid_after_utc > now and certificate not in kept:
            kept.append(certificate)
    pem = b"".join(c.public_bytes(Encoding.PEM) for c in kept)
    if pem.decode() != text:
        body: Obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": spec.bundle_configmap, "namespace": spec.namespace},
            "data": {BUNDLE_KEY: pem.decode()},
        }
        await _write(api, kinds.CONFIGMAP, body, current)
    return pem


def _certificates(pem: bytes) -> list[x509.Certificate]:
    if not pem.strip():
        return []
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        return []  # a bundle nobody can read is rebuilt from the current CA


# --- the serving certificate ---------------------------------------------------------


async def _serving(
    api: Api, spec: ServingCertificates, signer: CertificateAuthority, now: datetime
) -> None:
    current = await _get(api, kinds.SECRET, spec.serving_secret, namespace=spec.namespace)
    if _serving_ok(_tls(current), signer, spec.hosts, now):
        return
    cert, key = signer.issue_serving(hosts=spec.hosts, valid_for=SERVING_VALIDITY, now=now)
    await _put_tls(api, spec.namespace, spec.serving_secret, cert, key, current)
    log.info(
        "issued a webhook serving certificate in secret %s/%s", spec.namespace, spec.serving_secret
    )


def _serving_ok(
    data: tuple[bytes, bytes] | None,
    signer: CertificateAuthority,
    hosts: Iterable[str],
    now: datetime,
) -> bool:
    if data is None:
        return False
    try:
        certificate = x509.load_pem_x509_certificate(data[0])
        certificate.verify_directly_issued_by(signer.certificate)
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    if sorted(names.value.get_values_for_type(x509.DNSName)) != sorted(hosts):
        return False
    return not _due(certificate, now)


# --- caBundle ------------------------------------------------------------------------


async def inject(
    api: Api, spec: ServingCertificates, bundle: bytes, *, lister: Lister | None = None
) -> None:
    """Put ``bundle`` into every webhook and CRD conversion calling ``spec``'s Service."""
    encoded = base64.b64encode(bundle).decode()
    listed = lister or _api_lister(api)
    for kind in WEBHOOK_CONFIGURATIONS:
        for config in await listed(kind):
            await _permitted(_inject_webhooks(api, kind, config, spec, encoded), kind, config)
    for crd in await listed(kinds.CRD):
        await _permitted(_inject_conversion(api, crd, spec, encoded), kinds.CRD, crd)


def _api_lister(api: Api) -> Lister:
    async def listed(kind: Kind) -> list[Obj]:
        return list((await api.list(kind)).get("items") or [])

    return listed


async def _permitted(step: Awaitable[None], kind: Kind, obj: Obj) -> None:
    """Run ``step``; an object this controller may not update is skipped with a warning.

    A deployed controller may update only the configurations and CRDs its manifests name;
    another one calling the same Service must not keep the rest from getting the CA."""
    try:
        await step
    except ApiError as err:
        if err.code != 403:
            raise
        name = obj["metadata"]["name"]
        log.warning("cannot put the webhook CA into %s %s: %s", kind, name, err.message)


async def _inject_webhooks(
    api: Api, kind: Kind, config: Obj, spec: ServingCertificates, encoded: str
) -> None:
    stale = [
        index
        for index, webhook in enumerate(config.get("webhooks") or [])
        if _calls(webhook.get("clientConfig") or {}, spec)
        and (webhook.get("clientConfig") or {}).get("caBundle") != encoded
    ]
    if not stale:
        return
    updated = copy.deepcopy(config)  # a cache's object is not ours to change
    for index in stale:
        updated["webhooks"][index]["clientConfig"]["caBundle"] = encoded
    # A JSON merge patch would replace the whole list; the update carries the
    # resourceVersion read, so a concurrent edit is retried, never overwritten.
    await api.update(kind, updated)


async def _inject_conversion(api: Api, crd: Obj, spec: ServingCertificates, encoded: str) -> None:
    webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
    client = webhook.get("clientConfig") or {}
    if not _calls(client, spec) or client.get("caBundle") == encoded:
        return
    patch = {"spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": encoded}}}}}
    await api.patch(kinds.CRD, crd["metadata"]["name"], patch)


def _calls(client: Obj, spec: ServingCertificates) -> bool:
    service = client.get("service") or {}
    return service.get("namespace") == spec.namespace and service.get("name") == spec.service


# --- helpers -------------------------------------------------------------------------


def _due(certificate: x509.Certificate, now: datetime) -> bool:
    start, end = certificate.not_valid_before_utc, certificate.not_valid_after_utc
    return now >= end - (end - start) * REFRESH_SHARE


def _tls(secret: Obj | None) -> tuple[bytes, bytes] | None:
    data = (secret or {}).get("data") or {}
    try:
        cert = base64.b64decode(data["tls.crt"], validate=True)
        key = base64.b64decode(data["tls.key"], validate=True)
    except (KeyError, ValueError, TypeError):
        return None
    return cert, key


async def _put_tls(
    api: Api, namespace: str, name: str, cert: bytes, key: bytes, current: Obj | None
) -> None:
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": TLS_TYPE,
        "data": {
            "tls.crt": base64.b64encode(cert).decode(),
            "tls.key": base64.b64encode(key).decode(),
        },
    }
    if current is not None and current.get("type") not in (None, TLS_TYPE):
        # A Secret's type is immutable: one of another type is replaced.
        await api.delete(kinds.SECRET, name, namespace=namespace)
        current = None
    await _write(api, kinds.SECRET, body, current)


async def _write(api: Api, kind: Kind, body: Obj, current: Obj | None) -> None:
    if current is None:
        await api.create(kind, body)
        return
    meta = current["metadata"]
    body["metadata"] = {
        **meta,
        **body["metadata"],
        "resourceVersion": meta["resourceVersion"],
    }
    await api.update(kind, body)


async def _get(api: Api, kind: Kind, name: str, *, namespace: str) -> Obj | None:
    try:
        return await api.get(kind, name, namespace=namespace)
    except ApiError as err:
        if err.code == 404:
            return None
        raise
