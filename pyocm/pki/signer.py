"""The ``kubernetes.io/kube-apiserver-client`` signer, as kube-controller-manager runs it.

The caller (the API server's CSR signing controller) decides *when* to sign: approved,
not failed, this signer, no certificate yet. This module decides *what* to sign:

- usages must be a subset of {digital signature, key encipherment, client auth} and
  include client auth, otherwise :class:`SigningRefused` (the caller records a Failed
  condition with reason ``SignerValidationFailure`` and the message);
- TTL is ``max_ttl``, or ``expirationSeconds`` clamped to [10 min, ``max_ttl``];
- NotBefore is backdated 5 minutes; NotAfter is ``now + ttl`` for certificates shorter
  than 8 hours (5 minutes of backdating would eat too much of them) and
  ``now + ttl - 5 min`` otherwise, never past the CA's own NotAfter;
- subject and SANs come from the CSR, key usages from ``usages``, other requested
  extensions are dropped, and the certificate is never a CA.

Problems Kubernetes does not turn into a condition (an unreadable CSR, a bad CSR
signature, an expired signing CA) raise :class:`SigningError`; the controller logs it
and retries, leaving the CSR pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from pyocm.pki import ca as ca_module
from pyocm.pki import csr as csr_module

SIGNER_NAME = "kubernetes.io/kube-apiserver-client"
SIGNER_VALIDATION_FAILURE = "SignerValidationFailure"
MASTERS_GROUP = "system:masters"
MASTERS_FORBIDDEN_MESSAGE = f"use of {SIGNER_NAME} signer with {MASTERS_GROUP} group is not allowed"
"""The CertificateSubjectRestriction admission plugin's 403 message."""

DIGITAL_SIGNATURE = "digital signature"
KEY_ENCIPHERMENT = "key encipherment"
CLIENT_AUTH = "client auth"

BACKDATE = timedelta(minutes=5)
SHORT_LIVED = timedelta(hours=8)
MIN_TTL = timedelta(minutes=10)
"""Twice the backdate, so a requested lifetime always outlasts the backdating."""
DEFAULT_MAX_TTL = timedelta(hours=8760)
"""kube-controller-manager's default ``--cluster-signing-duration``."""


class SigningRefused(Exception):
    """The request can never be signed; becomes a Failed condition on the CSR."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class SigningError(Exception):
    """The request cannot be signed now; Kubernetes leaves the CSR alone and retries."""


def validate_usages(usages: Sequence[str]) -> None:
    """Raise :class:`SigningRefused` unless ``usages`` suit a client certificate."""
    for usage in usages:
        if usage not in (DIGITAL_SIGNATURE, KEY_ENCIPHERMENT, CLIENT_AUTH):
            raise SigningRefused(
                SIGNER_VALIDATION_FAILURE, f"invalid usage for client certificate: {usage}"
            )
    if CLIENT_AUTH not in usages:
        raise SigningRefused(
            SIGNER_VALIDATION_FAILURE,
            f"missing required usage for client certificate: {CLIENT_AUTH}",
        )


def certificate_ttl(expiration_seconds: int | None, max_ttl: timedelta) -> timedelta:
    """The lifetime to grant: ``max_ttl``, or the request clamped to [10 min, max_ttl]."""
    if expiration_seconds is None:
        return max_ttl
    requested = timedelta(seconds=expiration_seconds)
    if requested > max_ttl:
        return max_ttl
    return max(requested, MIN_TTL)


def validity_window(
    *, now: datetime, ttl: timedelta, signer_not_after: datetime
) -> tuple[datetime, datetime]:
    """(NotBefore, NotAfter) for a certificate signed at ``now`` lasting ``ttl``.

    Raises :class:`SigningError` when the signing CA has already expired.
    """
    not_before = now - BACKDATE
    if not_before >= signer_not_after:
        raise SigningError(f"the signer has expired: NotAfter={_go_time(signer_not_after)}")
    not_after = now + ttl if ttl < SHORT_LIVED else now + ttl - BACKDATE
    not_after = min(not_after, signer_not_after)
    if now >= signer_not_after:
        raise SigningError(
            "refusing to sign a certificate that expired in the past: "
            f"NotAfter={_go_time(signer_not_after)}"
        )
    return not_before, not_after


def sign_client_csr(
    ca: ca_module.CertificateAuthority,
    *,
    csr_pem: bytes | str,
    usages: Sequence[str],
    expiration_seconds: int | None,
    max_ttl: timedelta,
    now: datetime,
) -> bytes:
    """Sign an approved kube-apiserver-client CSR and return the PEM certificate.

    Raises :class:`SigningRefused` for usages this signer never grants and
    :class:`SigningError` for problems Kubernetes retries (see the module docstring).
    """
    try:
        request = csr_module.load_csr(csr_pem)
    except csr_module.CsrError as err:
        raise SigningError(f"unable to parse csr: {err}") from None
    validate_usages(usages)
    moment = ca_module.utc_now(now)
    not_before, not_after = validity_window(
        now=moment, ttl=certificate_ttl(expiration_seconds, max_ttl), signer_not_after=ca.not_after
    )
    if not request.is_signature_valid:
        raise SigningError("unable to verify certificate request signature")
    builder = (
        x509.CertificateBuilder()
        .subject_name(request.subject)
        .public_key(request.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    for extension, critical in _usage_extensions(usages):
        builder = builder.add_extension(extension, critical=critical)
    sans = _copied_sans(request)
    if sans is not None:
        # Go marks the SAN extension critical when the subject is empty (RFC 5280 4.2.1.6).
        builder = builder.add_extension(sans, critical=len(request.subject) == 0)
    return ca.sign(builder).public_bytes(serialization.Encoding.PEM)


def csr_subject_has_masters(csr_pem: bytes | str) -> bool:
    """True when the CSR subject's O attributes include ``system:masters``.

    The CertificateSubjectRestriction admission plugin refuses such kube-apiserver-client
    CSRs at create with 403 and :data:`MASTERS_FORBIDDEN_MESSAGE`. Raises ``CsrError``
    for unreadable requests (Kubernetes answers those with 403 "failed to parse CSR: ...").
    """
    request = csr_module.load_csr(csr_pem)
    return MASTERS_GROUP in csr_module.organizations(request.subject)


def _usage_extensions(usages: Sequence[str]) -> list[tuple[x509.ExtensionType, bool]]:
    extensions: list[tuple[x509.ExtensionType, bool]] = []
    if DIGITAL_SIGNATURE in usages or KEY_ENCIPHERMENT in usages:
        # Go omits KeyUsage entirely when no key usage bit is requested.
        key_usage = x509.KeyUsage(
            digital_signature=DIGITAL_SIGNATURE in usages,
            content_commitment=False,
            key_encipherment=KEY_ENCIPHERMENT in usages,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=False,
            crl_sign=False,
            encipher_only=False,
            decipher_only=False,
        )
        extensions.append((key_usage, True))
    if CLIENT_AUTH in usages:
        extensions.append((x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False))
    return extensions


def _copied_sans(request: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    """The CSR's DNS, email, IP and URI SANs in the order Go writes them; others dropped."""
    try:
        requested = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    except ValueError:
        raise SigningError("unable to parse csr: malformed extensions") from None
    kinds = (x509.DNSName, x509.RFC822Name, x509.IPAddress, x509.UniformResourceIdentifier)
    names = [name for kind in kinds for name in requested if isinstance(name, kind)]
    return x509.SubjectAlternativeName(names) if names else None


def _go_time(moment: datetime) -> str:
    """``moment`` as Go's ``%v`` prints a UTC ``time.Time``."""
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
