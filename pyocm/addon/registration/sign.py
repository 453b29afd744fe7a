"""Signing an add-on agent's CustomSigner CSR with a CA the add-on names (upstream's
``CustomSignerWithExpiry`` over ``utils.DefaultSignerWithExpiry``, ocm-behaviour.md 4.9).

The CA is a ``kubernetes.io/tls`` Secret (``tls.crt``, ``tls.key``). Upstream signs only
with an RSA key in PKCS#1 (its PKCS#8 path re-encodes the key and then parses it as
PKCS#1 again); pyocm also takes RSA in PKCS#8 and ECDSA in SEC1 or PKCS#8 (issue 21).
The issued certificate is upstream's: subject, SANs and public key from the CSR, a
random 128-bit serial, KeyUsage digitalSignature|keyEncipherment, ExtKeyUsage serverAuth
and clientAuth, NotBefore now and NotAfter now + 24h, capped at the CA's NotAfter.

A CA or request that can never yield a certificate (no such key type, an unreadable
certificate or key, a key of another certificate, an expired CA, an unreadable request)
raises :class:`~pyocm.pki.signer.SigningRefused`: the signing controller turns that
into a Failed condition on the CSR and a Warning event, once, instead of retrying
forever. Messages never quote key or certificate bytes.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from pyocm.addon.agent import CsrSign, Obj
from pyocm.api import shapes
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki import ca as ca_module
from pyocm.pki import csr as csr_module
from pyocm.pki.signer import SIGNER_VALIDATION_FAILURE, SigningRefused
from pyocm.runtime.client import Api

#: How long an issued certificate lasts (upstream's template add-ons sign for 24h).
DEFAULT_DURATION = timedelta(hours=24)
#: Where the CA Secret is when the add-on names no namespace: the add-on manager's own
#: (upstream's ``POD_NAMESPACE``, defaulting to this).
DEFAULT_CA_NAMESPACE = "open-cluster-management-hub"
TLS_CERT_KEY = "tls.crt"
TLS_KEY_KEY = "tls.key"
_SERIAL_LIMIT = 1 << 128

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def refused(message: str) -> SigningRefused:
    return SigningRefused(SIGNER_VALIDATION_FAILURE, message)


@dataclass(frozen=True)
class SigningCA:
    """A CA certificate and its RSA or ECDSA key."""

    certificate: x509.Certificate
    key: SigningKey

    @classmethod
    def load(cls, cert_pem: bytes, key_pem: bytes) -> SigningCA:
        """Read the CA; raises :class:`SigningRefused` saying what is wrong with it."""
        try:
            certificate = x509.load_pem_x509_certificate(cert_pem)
        except ValueError:
            raise refused("failed to decode ca cert") from None
        key = _load_key(key_pem)
        public = certificate.public_key()
        if not isinstance(public, type(key.public_key())) or _spki(public) != _spki(
            key.public_key()
        ):
            raise refused("the ca key does not belong to the ca certificate")
        return cls(certificate=certificate, key=key)


def _load_key(pem: bytes) -> SigningKey:
    """An RSA key (PKCS#1 or PKCS#8) or an ECDSA key (SEC1 or PKCS#8), unencrypted."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except TypeError:
        raise refused("the ca key is encrypted") from None
    except (ValueError, UnsupportedAlgorithm):
        # The library's message may quote the key's bytes: never passed on.
        raise refused("failed to parse ca key as PKCS#1, PKCS#8 or SEC1 PEM") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise refused(f"unsupported ca key type {type(key).__name__}: only RSA and ECDSA")
    return key


def _spki(key: Any) -> bytes:
    return bytes(
        key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def sign_csr(
    ca: SigningCA, csr_pem: bytes, *, now: datetime, duration: timedelta = DEFAULT_DURATION
) -> bytes:
    """The PEM certificate ``ca`` issues for the PEM ``csr_pem`` (upstream's ``signCSR``)."""
    moment = ca_module.utc_now(now)
    ca_expiry = ca.certificate.not_valid_after_utc
    if ca_expiry <= moment:
        raise refused(f"signer has expired, expired time: {_go_time(ca_expiry)}")
    try:
        request = csr_module.load_csr(csr_pem)
        public_key = request.public_key()
        sans = _sans(request)
    except (csr_module.CsrError, ValueError, TypeError, x509.UnsupportedGeneralNameType) as err:
        raise refused(f"failed to parse csr: {err}") from None
    builder = (
        x509.CertificateBuilder()
        .subject_name(request.subject)
        .issuer_name(ca.certificate.subject)
        .public_key(public_key)
        .serial_number(_serial())
        .not_valid_before(moment)
        .not_valid_after(min(moment + duration, ca_expiry))
        .add_extension(_KEY_USAGE, critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    )
    aki = _authority_key_id(ca.certificate)
    if aki is not None:
        builder = builder.add_extension(aki, critical=False)
    if sans is not None:
        builder = builder.add_extension(sans, critical=len(request.subject) == 0)
    issued = builder.sign(ca.key, _hash_for(ca.key))
    return issued.public_bytes(serialization.Encoding.PEM)


_KEY_USAGE = x509.KeyUsage(
    digital_signature=True,
    content_commitment=False,
    key_encipherment=True,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=False,
    crl_sign=False,
    encipher_only=False,
    decipher_only=False,
)


def _serial() -> int:
    """Go's ``rand.Int(rand.Reader, 2^128)``, never 0 (which X.509 forbids)."""
    return secrets.randbelow(_SERIAL_LIMIT - 1) + 1


def _sans(request: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    """The request's DNS, IP, email and URI names, in the order Go writes them."""
    try:
        found = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    order = (x509.DNSName, x509.IPAddress, x509.RFC822Name, x509.UniformResourceIdentifier)
    names = [name for kind in order for name in found if isinstance(name, kind)]
    return x509.SubjectAlternativeName(names) if names else None


def _authority_key_id(ca: x509.Certificate) -> x509.AuthorityKeyIdentifier | None:
    """Go's ``CreateCertificate`` names the parent's SubjectKeyId, when it has one."""
    try:
        ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    except x509.ExtensionNotFound:
        return None
    return x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)


def _hash_for(key: SigningKey) -> hashes.SHA256 | hashes.SHA384 | hashes.SHA512:
    """The digest Go's ``x509`` signs with for this key (SHA-256 but for the larger curves)."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        if key.curve.key_size > 384:
            return hashes.SHA512()
        if key.curve.key_size > 256:
            return hashes.SHA384()
    return hashes.SHA256()


def _go_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def ca_from_secret(secret: Mapping[str, Any]) -> SigningCA:
    """The CA a ``kubernetes.io/tls`` Secret (as read, not through a schema) holds."""
    data = shapes.string_map(shapes.mapping(secret.get("data")))
    try:
        cert_pem = base64.b64decode(data.get(TLS_CERT_KEY, ""), validate=True)
        key_pem = base64.b64decode(data.get(TLS_KEY_KEY, ""), validate=True)
    except (binascii.Error, ValueError):
        raise refused("the ca secret's data is not base64") from None
    if not cert_pem:
        raise refused(f"the ca secret has no {TLS_CERT_KEY}")
    if not key_pem:
        raise refused(f"the ca secret has no {TLS_KEY_KEY}")
    return SigningCA.load(cert_pem, key_pem)


def ca_secret_signer(
    *,
    signer_name: str,
    secret: str,
    namespace: str = "",
    duration: timedelta = DEFAULT_DURATION,
    clock: Clock | None = None,
) -> CsrSign:
    """A ``CSRSign`` for ``signer_name``'s CSRs with the CA in Secret ``secret`` of
    ``namespace`` (the add-on manager's namespace when empty), read at each signing so a
    rotated CA is used at once. CSRs of other signers are left alone (b"").

    A missing Secret is refused like a broken one: the CSR fails, and the agent's next
    CSR is signed once the Secret is there."""
    where = namespace or DEFAULT_CA_NAMESPACE
    moments = clock or RealClock()

    async def sign(
        api: Api, _cluster: ManagedCluster, _addon: ManagedClusterAddOn, csr: Obj
    ) -> bytes:
        spec = shapes.mapping(csr.get("spec"))
        if spec.get("signerName") != signer_name:
            return b""
        try:
            found = await api.get(kinds.SECRET, secret, namespace=where)
        except ApiError as err:
            if err.code != 404:
                raise
            raise refused(f"get custom signer ca {where}/{secret} failed: not found") from None
        try:
            ca = ca_from_secret(found)
        except SigningRefused as err:
            raise refused(f"get ca {where}/{secret} data failed: {err.message}") from None
        try:
            request = base64.b64decode(str(spec.get("request") or ""), validate=True)
        except (binascii.Error, ValueError):
            raise refused("failed to parse csr: the request is not base64") from None
        return sign_csr(ca, request, now=moments.now(), duration=duration)

    return sign
