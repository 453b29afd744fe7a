"""The agent's client certificate: the subject it must carry, the CSR asking for it, and
when to ask for a new one.

CSR names are ``<cluster>-<digest>``, the digest covering the subject and the public key
(mission seed 000): an agent restarted while its request is pending finds its own CSR
instead of piling up new ones, because the pending key is kept with the identity.
"""

from __future__ import annotations

import base64
import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509

from pyocm.api import wellknown
from pyocm.pki import keys
from pyocm.pki.csr import build_csr, common_name, organizations

PREFIX = "system:open-cluster-management:"
MANAGED_CLUSTERS_GROUP = "system:open-cluster-management:managed-clusters"
SIGNER = "kubernetes.io/kube-apiserver-client"
USAGES = ["digital signature", "key encipherment", "client auth"]


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


def csr_name(subject: Subject, key: keys.PrivateKey) -> str:
    digest = hashlib.sha256()
    digest.update(subject.common_name.encode())
    for organization in sorted(subject.organizations):
        digest.update(b"\0" + organization.encode())
    digest.update(b"\0" + keys.public_key_der(key.public_key()))
    return f"{subject.cluster}-{digest.hexdigest()[:16]}"


def csr_object(
    subject: Subject, key: keys.PrivateKey, *, expiration_seconds: int | None = None
) -> dict[str, object]:
    request = build_csr(key, common_name=subject.common_name, organizations=subject.organizations)
    spec: dict[str, object] = {
        "request": base64.b64encode(request).decode(),
        "signerName": SIGNER,
        "usages": list(USAGES),
    }
    if expiration_seconds:
        spec["expirationSeconds"] = expiration_seconds
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {
            "name": csr_name(subject, key),
            "labels": {wellknown.CLUSTER_NAME_LABEL: subject.cluster},
        },
        "spec": spec,
    }


def load_chain(pem: bytes) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem) if pem else []
    except ValueError:
        return []


def matches(cert: x509.Certificate, subject: Subject) -> bool:
    """Upstream's subject check: CN equal and the O set equal."""
    return common_name(cert.subject) == subject.common_name and set(
        organizations(cert.subject)
    ) == set(subject.organizations)


def key_matches(cert: x509.Certificate, key: keys.PrivateKey) -> bool:
    return keys.public_key_der(cert.public_key()) == keys.public_key_der(key.public_key())


def usable(chain: list[x509.Certificate], subject: Subject, *, now: datetime) -> bool:
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
