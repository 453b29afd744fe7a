"""Bootstrap tokens: the short-lived credential a managed cluster joins with.

The token is kubeadm's (``<id>.<secret>``, stored as the Secret
``kube-system/bootstrap-token-<id>`` of type ``bootstrap.kubernetes.io/token``), so any
Kubernetes API server that has the bootstrap-token authenticator accepts it. The extra
group ``system:bootstrappers:managedcluster`` is what the hub's bootstrap RBAC binds: a
joining agent may create and read CSRs and ManagedClusters and nothing else.

A CA hash pins the hub's CA for a join that starts without trusting anything yet
(kubeadm's ``--discovery-token-ca-cert-hash``): ``sha256:`` and the hex digest of the CA
certificate's DER-encoded SubjectPublicKeyInfo.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pyocm.kube import timefmt

SECRET_TYPE = "bootstrap.kubernetes.io/token"
NAMESPACE = "kube-system"
MANAGED_CLUSTER_GROUP = "system:bootstrappers:managedcluster"
DEFAULT_TTL = timedelta(hours=1)
#: The label upstream's cluster-manager chart puts on its bootstrap token Secret, by which
#: ``clusteradm get token --use-bootstrap-token`` finds the newest one (and ``clusteradm
#: clean`` deletes them).
LABELS = {"app": "cluster-manager"}
_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class BootstrapToken:
    id: str
    secret: str

    def __str__(self) -> str:
        return f"{self.id}.{self.secret}"

    @property
    def secret_name(self) -> str:
        return f"bootstrap-token-{self.id}"


def generate() -> BootstrapToken:
    """A fresh random token (about 113 bits in the secret part, like kubeadm's)."""
    return BootstrapToken(id=_random(6), secret=_random(16))


def parse(text: str) -> BootstrapToken:
    """Parse ``<id>.<secret>``; the error message never repeats the secret."""
    match = _TOKEN.match(text.strip())
    if not match:
        raise ValueError(
            "the token must look like abcdef.0123456789abcdef (6 and 16 lowercase letters or digits)"
        )
    return BootstrapToken(id=match.group(1), secret=match.group(2))


def token_secret(
    token: BootstrapToken, *, now: datetime, ttl: timedelta = DEFAULT_TTL
) -> dict[str, Any]:
    """The Secret that makes ``token`` valid for ``ttl`` from ``now``."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": token.secret_name, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "type": SECRET_TYPE,
        "stringData": {
            "description": "pyocm bootstrap token for joining managed clusters",
            "token-id": token.id,
            "token-secret": token.secret,
            "expiration": timefmt.format_time(now + ttl),
            "usage-bootstrap-authentication": "true",
            "usage-bootstrap-signing": "true",
            "auth-extra-groups": MANAGED_CLUSTER_GROUP,
        },
    }


def ca_cert_hash(ca_pem: bytes) -> str:
    """``sha256:<hex>`` of the first certificate's SubjectPublicKeyInfo."""
    cert = x509.load_pem_x509_certificate(ca_pem)
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(spki).hexdigest()


def ca_matches(ca_pem: bytes, expected: str) -> bool:
    """Whether any certificate in the bundle has the pinned hash (``sha256:`` optional)."""
    want = expected.strip().lower().removeprefix("sha256:")
    certs = x509.load_pem_x509_certificates(ca_pem)
    hashes = {
        ca_cert_hash(cert.public_bytes(serialization.Encoding.PEM)).removeprefix("sha256:")
        for cert in certs
    }
    return want in hashes


def _random(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))
