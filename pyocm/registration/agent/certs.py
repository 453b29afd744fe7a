"""Client certificates asked for by CSR: what a request carries, and when to ask again.

A :class:`CertificateRequest` holds everything a CSR varies by (subject CN and O, signer,
usages, DNS names, labels, name prefix), so the cluster agent's certificate and an
add-on's (``system:open-cluster-management:cluster:<c>:addon:<a>:agent:<agent>``, with
the kube-apiserver-client signer or a custom one) go through one flow (csrflow.py).

CSR names are ``<prefix><digest>``, the digest covering the subject and the public key
(mission seed 000): an agent restarted while its request is pending finds its own CSR
instead of piling up new ones, because the pending key is kept with the identity.
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509

from pyocm.api import wellknown
from pyocm.api.models.certificates_v1 import (
    CertificateSigningRequest,
    CertificateSigningRequestSpec,
)
from pyocm.pki import keys
from pyocm.pki.csr import build_csr, common_name, organizational_units, organizations

PREFIX = "system:open-cluster-management:"
MANAGED_CLUSTERS_GROUP = "system:open-cluster-management:managed-clusters"
SIGNER = "kubernetes.io/kube-apiserver-client"
USAGES = ["digital signature", "key encipherment", "client auth"]
#: Add-on CSRs carry this label besides the cluster's (ocm-behaviour.md 1.13).
ADDON_NAME_LABEL = "open-cluster-management.io/addon-name"


@dataclass(frozen=True)
class CertificateRequest:
    """One client certificate to ask for: the CSR's subject, signer, usages and metadata.

    Equal requests with the same key make the same CSR name, so a restarted requester
    finds its pending CSR again."""

    common_name: str
    organizations: tuple[str, ...]
    name_prefix: str
    signer: str = SIGNER
    usages: tuple[str, ...] = tuple(USAGES)
    labels: tuple[tuple[str, str], ...] = ()
    dns_names: tuple[str, ...] = ()
    expiration_seconds: int | None = None
    #: OU: only an add-on's custom-signer subject has any.
    organizational_units: tuple[str, ...] = ()

    def csr_name(self, key: keys.PrivateKey) -> str:
        digest = hashlib.sha256()
        digest.update(self.common_name.encode())
        for organization in sorted(self.organizations):
            digest.update(b"\0" + organization.encode())
        for unit in sorted(self.organizational_units):
            digest.update(b"\1" + unit.encode())
        digest.update(b"\0" + keys.public_key_der(key.public_key()))
        return f"{self.name_prefix}{digest.hexdigest()[:16]}"

    def csr_object(self, key: keys.PrivateKey) -> CertificateSigningRequest:
        """The CertificateSigningRequest to create for ``key``."""
        request = build_csr(
            key,
            common_name=self.common_name,
            organizations=self.organizations,
            organizational_units=self.organizational_units,
            dns_names=self.dns_names,
        )
        spec: CertificateSigningRequestSpec = {
            "request": base64.b64encode(request).decode(),
            "signerName": self.signer,
            "usages": list(self.usages),
        }
        if self.expiration_seconds:
            spec["expirationSeconds"] = self.expiration_seconds
        return {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": self.csr_name(key), "labels": dict(self.labels)},
            "spec": spec,
        }

    def matches(self, cert: x509.Certificate) -> bool:
        """Upstream's subject check: CN equal, the O set and the OU set equal."""
        return (
            common_name(cert.subject) == self.common_name
            and set(organizations(cert.subject)) == set(self.organizations)
            and set(organizational_units(cert.subject)) == set(self.organizational_units)
        )


def addon_request(
    *,
    cluster: str,
    addon: str,
    agent: str | None = None,
    user: str = "",
    signer: str = SIGNER,
    groups: tuple[str, ...] | None = None,
    organizational_units: tuple[str, ...] = (),
    labels: Mapping[str, str] | None = None,
    expiration_seconds: int | None = None,
) -> CertificateRequest:
    """An add-on agent's request with upstream's defaults (ocm-behaviour.md 1.13): user
    ``system:open-cluster-management:cluster:<c>:addon:<a>:agent:<agent>`` (agent defaults
    to the add-on's name) unless ``user`` names it, group ``...:cluster:<c>:addon:<a>``
    unless ``groups`` are given, DNS name ``<a>.addon.open-cluster-management.io``, name
    prefix ``addon-<c>-<a>-``."""
    scope = f"{PREFIX}cluster:{cluster}:addon:{addon}"
    return CertificateRequest(
        common_name=user or f"{scope}:agent:{agent or addon}",
        organizations=groups if groups is not None else (scope,),
        name_prefix=f"addon-{cluster}-{addon}-",
        signer=signer,
        labels=(
            (wellknown.CLUSTER_NAME_LABEL, cluster),
            (ADDON_NAME_LABEL, addon),
            *sorted((labels or {}).items()),
        ),
        dns_names=(f"{addon}.addon.open-cluster-management.io",),
        expiration_seconds=expiration_seconds,
        organizational_units=organizational_units,
    )


@dataclass(frozen=True)
class Subject:
    cluster: str
    agent: str

    @property
    def common_name(self) -> str:
        return f"{PREFIX}{self.cluster}:{self.agent}"

    @property
    def organizations(self) -> list[str]:
        return [f"{PREFIX}{self.cluster}", MANAGED_CLUSTERS_GROUP]

    def request(self, *, expiration_seconds: int | None = None) -> CertificateRequest:
        """The cluster agent's request: signer kube-apiserver-client, name ``<cluster>-...``."""
        return CertificateRequest(
            common_name=self.common_name,
            organizations=tuple(self.organizations),
            name_prefix=f"{self.cluster}-",
            labels=((wellknown.CLUSTER_NAME_LABEL, self.cluster),),
            expiration_seconds=expiration_seconds,
        )


def csr_name(subject: Subject, key: keys.PrivateKey) -> str:
    return subject.request().csr_name(key)


def csr_object(
    subject: Subject, key: keys.PrivateKey, *, expiration_seconds: int | None = None
) -> CertificateSigningRequest:
    return subject.request(expiration_seconds=expiration_seconds).csr_object(key)


def load_chain(pem: bytes) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem) if pem else []
    except ValueError:
        return []


def matches(cert: x509.Certificate, subject: Subject | CertificateRequest) -> bool:
    """Upstream's subject check: CN equal and the O set equal."""
    request = subject.request() if isinstance(subject, Subject) else subject
    return request.matches(cert)


def key_matches(cert: x509.Certificate, key: keys.PrivateKey) -> bool:
    return keys.public_key_der(cert.public_key()) == keys.public_key_der(key.public_key())


def usable(
    chain: list[x509.Certificate], subject: Subject | CertificateRequest, *, now: datetime
) -> bool:
    """A certificate for ``subject`` is in the chain and nothing in it has expired."""
    if not chain or any(cert.not_valid_after_utc <= now for cert in chain):
        return False
    return any(matches(cert, subject) for cert in chain)


def rotation_threshold(rng: random.Random | None = None) -> float:
    """Upstream's jittered threshold: rotate when 20 to 25 % of the lifetime is left."""
    return 0.2 + 0.2 * (rng or random).random() * 0.25


def rotation_due(chain: list[x509.Certificate], *, now: datetime, threshold: float) -> datetime:
    """When the chain's remaining life falls to ``threshold`` of its whole life."""
    not_before = max(cert.not_valid_before_utc for cert in chain)
    not_after = min(cert.not_valid_after_utc for cert in chain)
    return not_after - (not_after - not_before) * threshold


def go_time(moment: datetime) -> str:
    """Go's ``time.Time.String()`` for UTC, as upstream's condition messages print it."""
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
