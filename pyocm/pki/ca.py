"""Certificate authorities: self-signed CAs, issuing leaf certificates, verifying clients.

A :class:`CertificateAuthority` holds a CA certificate and its key and issues serving
and client certificates signed by it. Client verification follows Go's ``x509.Verify``
as the kube-apiserver's x509 authenticator calls it: the leaf and the CA must both be
inside their validity windows, the signature must check out, and the extended key
usages must allow client authentication (a certificate without an EKU extension allows
every usage, as in Go). Only certificates issued directly by a CA are supported; pyocm
never issues through intermediates.

:class:`CABundle` verifies against several CAs at once, so a rotated CA can be added
next to the old one while certificates from both are still in use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyocm.pki import csr, keys

CLOCK_SKEW = timedelta(minutes=5)
"""How far NotBefore is backdated, so peers with slightly slow clocks accept new certs."""

_CLIENT_USAGES = (ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE)
_UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"


class CAError(ValueError):
    """Raised when a CA certificate or key cannot be loaded or do not belong together."""


class VerificationError(Exception):
    """Raised when a client certificate is not acceptable; the message says why."""


@dataclass(frozen=True)
class ClientIdentity:
    """Who a verified client certificate names: user from CN, groups from every O."""

    user: str
    groups: tuple[str, ...]
    not_after: datetime


def utc_now(now: datetime | None) -> datetime:
    """Return ``now`` (or the current time) as an aware UTC datetime in whole seconds.

    Certificates store whole seconds, so truncating up front keeps computed dates equal
    to what ends up in the certificate.
    """
    moment = datetime.now(UTC) if now is None else now
    if moment.tzinfo is None:
        raise ValueError("now must be a timezone-aware datetime")
    return moment.astimezone(UTC).replace(microsecond=0)


class CertificateAuthority:
    """A CA certificate with its private key, able to issue leaf certificates."""

    def __init__(self, *, certificate: x509.Certificate, key: keys.PrivateKey) -> None:
        _require_ca(certificate)
        if keys.public_key_der(certificate.public_key()) != keys.public_key_der(key.public_key()):
            raise CAError("CA private key does not match the CA certificate")
        self.certificate = certificate
        self.key = key

    @classmethod
    def create(
        cls, common_name: str, *, valid_for: timedelta, now: datetime | None = None
    ) -> CertificateAuthority:
        """Make a new self-signed CA with a fresh P-256 key, valid for ``valid_for``."""
        key = keys.generate_private_key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
        builder = _builder(subject=name, key=key, is_ca=True, valid_for=valid_for, now=now)
        builder = builder.issuer_name(name).add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False
        )
        return cls(certificate=builder.sign(key, hashes.SHA256()), key=key)

    @classmethod
    def load(cls, cert_pem: bytes | str, key_pem: bytes | str) -> CertificateAuthority:
        """Load a CA from PEM; raises :class:`CAError` (or ``KeyFormatError`` for the key)."""
        data = cert_pem.encode() if isinstance(cert_pem, str) else cert_pem
        try:
            certificate = x509.load_pem_x509_certificate(data)
        except ValueError as err:
            raise CAError("CA certificate PEM could not be decoded") from err
        return cls(certificate=certificate, key=keys.load_private_key(key_pem))

    @property
    def cert_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return keys.private_key_to_pem(self.key)

    @property
    def not_after(self) -> datetime:
        return self.certificate.not_valid_after_utc

    def sign(self, builder: x509.CertificateBuilder) -> x509.Certificate:
        """Set this CA as issuer of ``builder`` and sign it.

        Adds an AuthorityKeyIdentifier when the CA has a SubjectKeyIdentifier, which is
        what Go's ``x509.CreateCertificate`` does; everything else is the caller's.
        """
        builder = builder.issuer_name(self.certificate.subject)
        try:
            ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        except x509.ExtensionNotFound:
            return builder.sign(self.key, hashes.SHA256())
        aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski.value)
        return builder.add_extension(aki, critical=False).sign(self.key, hashes.SHA256())

    def issue_serving(
        self, *, hosts: Sequence[str], valid_for: timedelta, now: datetime | None = None
    ) -> tuple[bytes, bytes]:
        """Issue a serverAuth certificate for ``hosts`` with a new key: (cert PEM, key PEM).

        Each host that parses as an IPv4/IPv6 address becomes an IP SAN, every other one
        a DNS SAN; the first host is also the subject CN.
        """
        if not hosts:
            raise ValueError("a serving certificate needs at least one host")
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
        sans = x509.SubjectAlternativeName([_general_name(host) for host in hosts])
        return self._issue(
            subject=subject,
            usage=ExtendedKeyUsageOID.SERVER_AUTH,
            sans=sans,
            valid_for=valid_for,
            now=now,
        )

    def issue_client(
        self,
        *,
        common_name: str,
        organizations: Sequence[str] = (),
        valid_for: timedelta,
        now: datetime | None = None,
    ) -> tuple[bytes, bytes]:
        """Issue a clientAuth certificate with a new key: (cert PEM, key PEM).

        The API server reads the user from CN and the groups from the O attributes.
        """
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        return self._issue(
            subject=x509.Name(attributes),
            usage=ExtendedKeyUsageOID.CLIENT_AUTH,
            sans=None,
            valid_for=valid_for,
            now=now,
        )

    def verify_client(
        self, cert: bytes | x509.Certificate, *, now: datetime | None = None
    ) -> ClientIdentity:
        """Verify a client certificate (DER or PEM) against this CA; see :class:`CABundle`."""
        return CABundle([self.certificate]).verify_client(cert, now=now)

    def _issue(
        self,
        *,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        sans: x509.SubjectAlternativeName | None,
        valid_for: timedelta,
        now: datetime | None,
    ) -> tuple[bytes, bytes]:
        key = keys.generate_private_key()
        builder = _builder(subject=subject, key=key, is_ca=False, valid_for=valid_for, now=now)
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if sans is not None:
            builder = builder.add_extension(sans, critical=False)
        certificate = self.sign(builder)
        return certificate.public_bytes(serialization.Encoding.PEM), keys.private_key_to_pem(key)


class CABundle:
    """Several CA certificates trusted together (old and new during a CA rotation)."""

    def __init__(self, certificates: Iterable[x509.Certificate]) -> None:
        self.certificates = tuple(certificates)
        if not self.certificates:
            raise CAError("a CA bundle needs at least one certificate")
        for certificate in self.certificates:
            _require_ca(certificate)

    @classmethod
    def from_pem(cls, pem: bytes | str) -> CABundle:
        """Load every ``CERTIFICATE`` block of a PEM bundle."""
        data = pem.encode() if isinstance(pem, str) else pem
        if not data.strip():
            raise CAError("a CA bundle needs at least one certificate")
        try:
            certificates = x509.load_pem_x509_certificates(data)
        except ValueError:
            raise CAError("CA bundle PEM could not be decoded") from None
        return cls(certificates)

    @property
    def pem(self) -> bytes:
        """The bundle as concatenated PEM, as kubeconfigs and ``ca.crt`` files hold it."""
        return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in self.certificates)

    def verify_client(
        self, cert: bytes | x509.Certificate, *, now: datetime | None = None
    ) -> ClientIdentity:
        """Verify a client certificate (DER, PEM or parsed) and return who it names.

        Checks, in Go's order: the leaf's validity window, a signature by one of the CAs
        (whose own window must hold), then EKU clientAuth. Raises
        :class:`VerificationError` with Go's x509 wording on the first failure.
        """
        moment = utc_now(now)
        leaf = _parse_certificate(cert)
        _check_window(leaf, moment)
        issuer = self._issuer_of(leaf)
        _check_window(issuer, moment)
        for certificate in (leaf, issuer):
            if not _allows_client_auth(certificate):
                raise VerificationError("x509: certificate specifies an incompatible key usage")
        return _identity(leaf)

    def _issuer_of(self, leaf: x509.Certificate) -> x509.Certificate:
        for candidate in self.certificates:
            try:
                leaf.verify_directly_issued_by(candidate)
            except (ValueError, TypeError, InvalidSignature):
                continue
            return candidate
        raise VerificationError(_UNKNOWN_AUTHORITY)


def _require_ca(certificate: x509.Certificate) -> None:
    try:
        constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints)
    except x509.ExtensionNotFound:
        raise CAError("certificate is not a CA: it has no BasicConstraints") from None
    if not constraints.value.ca:
        raise CAError("certificate is not a CA: BasicConstraints has CA:FALSE")


def _builder(
    *,
    subject: x509.Name,
    key: keys.PrivateKey,
    is_ca: bool,
    valid_for: timedelta,
    now: datetime | None,
) -> x509.CertificateBuilder:
    """What CA and leaf certificates share: key, dates, constraints, usages and SKI."""
    start = utc_now(now)
    key_usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not is_ca,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=is_ca,
        crl_sign=is_ca,
        encipher_only=False,
        decipher_only=False,
    )
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - CLOCK_SKEW)
        .not_valid_after(start + valid_for)
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
        .add_extension(key_usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _parse_certificate(cert: bytes | x509.Certificate) -> x509.Certificate:
    if isinstance(cert, x509.Certificate):
        return cert
    try:
        if b"-----BEGIN" in cert:
            return x509.load_pem_x509_certificate(cert)
        return x509.load_der_x509_certificate(cert)
    except ValueError:
        raise VerificationError("x509: malformed certificate") from None


def _check_window(certificate: x509.Certificate, moment: datetime) -> None:
    not_before = certificate.not_valid_before_utc
    not_after = certificate.not_valid_after_utc
    if moment < not_before:
        detail = f"current time {_rfc3339(moment)} is before {_rfc3339(not_before)}"
    elif moment > not_after:
        detail = f"current time {_rfc3339(moment)} is after {_rfc3339(not_after)}"
    else:
        return
    raise VerificationError(f"x509: certificate has expired or is not yet valid: {detail}")


def _allows_client_auth(certificate: x509.Certificate) -> bool:
    try:
        usages = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return any(oid in _CLIENT_USAGES for oid in usages)


def _identity(leaf: x509.Certificate) -> ClientIdentity:
    user = csr.common_name(leaf.subject)
    if not user:
        raise VerificationError("x509: certificate has no common name")
    return ClientIdentity(
        user=user, groups=csr.organizations(leaf.subject), not_after=leaf.not_valid_after_utc
    )


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
