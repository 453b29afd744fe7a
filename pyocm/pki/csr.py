"""PKCS#10 certificate signing requests: building one, and reading one a client sent.

Reading follows Kubernetes' ``ParseCSR``: the first PEM block of the data must be a
``CERTIFICATE REQUEST``, otherwise the request is refused with Kubernetes' own message.
The subject is read attribute by attribute (never through ``rfc4514_string``, which
reverses the RDN order), and the CN is the last CN present, as Go's ``pkix.Name`` keeps.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from pyocm.pki import keys

NOT_A_CSR = "PEM block type must be CERTIFICATE REQUEST"

_PEM_BLOCK = re.compile(
    rb"-----BEGIN (?P<label>[^\r\n-]+)-----\r?\n(?P<body>.*?)-----END (?P=label)-----",
    re.DOTALL,
)


class CsrError(ValueError):
    """Raised when bytes are not a readable PEM certificate request."""


@dataclass(frozen=True)
class CsrInfo:
    """What a CSR asks for, plus whether its self-signature holds."""

    common_name: str
    organizations: tuple[str, ...]
    public_key_fingerprint: str
    signature_valid: bool
    dns_names: tuple[str, ...]
    ips: tuple[str, ...]
    emails: tuple[str, ...]
    uris: tuple[str, ...]
    organizational_units: tuple[str, ...] = ()


def build_csr(
    key: keys.PrivateKey,
    *,
    common_name: str,
    organizations: Sequence[str] = (),
    organizational_units: Sequence[str] = (),
    dns_names: Sequence[str] = (),
    ips: Sequence[str] = (),
) -> bytes:
    """Return a PEM CSR signed by ``key`` for subject ``O=...,OU=...,CN=common_name``.

    Organizations, then units, come before the CN, the order Go's CSR builder writes,
    so requests from pyocm agents look like those from the OCM registration agent.
    """
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.extend(
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, u) for u in organizational_units
    )
    # Unchecked length: Go's builder takes a CN over X.520's 64 characters, and add-on
    # agents' names (system:open-cluster-management:cluster:<c>:addon:<a>:agent:<x>) are.
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name, _validate=False))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attributes))
    names: list[x509.GeneralName] = [x509.DNSName(name) for name in dns_names]
    names.extend(x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    request = builder.sign(key, hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


def load_csr(pem: bytes | str) -> x509.CertificateSigningRequest:
    """Decode the first PEM block of ``pem``, which must be a ``CERTIFICATE REQUEST``.

    Raises :class:`CsrError` with Kubernetes' message when the block is missing or has
    another type, and with a parse message when its contents are not a CSR.
    """
    data = pem.encode() if isinstance(pem, str) else pem
    match = _PEM_BLOCK.search(data)
    if match is None or match["label"] != b"CERTIFICATE REQUEST":
        raise CsrError(NOT_A_CSR)
    try:
        der = base64.b64decode(b"".join(match["body"].split()), validate=True)
    except (binascii.Error, ValueError):
        raise CsrError(NOT_A_CSR) from None
    try:
        return x509.load_der_x509_csr(der)
    except ValueError:
        raise CsrError("x509: malformed certificate request") from None


def parse_csr(pem: bytes | str) -> CsrInfo:
    """Read a PEM CSR into a :class:`CsrInfo`; raises :class:`CsrError` on garbage."""
    request = load_csr(pem)
    try:
        public_key = request.public_key()
        signature_valid = request.is_signature_valid
        sans = _subject_alternative_names(request)
    except (ValueError, TypeError, x509.UnsupportedGeneralNameType):
        raise CsrError("x509: malformed certificate request") from None
    return CsrInfo(
        common_name=common_name(request.subject),
        organizations=organizations(request.subject),
        public_key_fingerprint=keys.fingerprint(public_key),
        signature_valid=signature_valid,
        dns_names=tuple(sans.get_values_for_type(x509.DNSName)),
        ips=tuple(str(ip) for ip in sans.get_values_for_type(x509.IPAddress)),
        emails=tuple(sans.get_values_for_type(x509.RFC822Name)),
        uris=tuple(sans.get_values_for_type(x509.UniformResourceIdentifier)),
        organizational_units=organizational_units(request.subject),
    )


def read_subject(pem: bytes | str) -> tuple[str, tuple[str, ...]]:
    """(CN, O attributes) of a PEM CSR, read as Go's ``ParseCertificateRequest`` reads
    it (a malformed extension makes the request unreadable) but not verified; for
    requests the API server already verified. Raises :class:`CsrError` on garbage."""
    request = load_csr(pem)
    try:
        request.extensions  # noqa: B018 - parsed for its errors, as Go parses them
        return common_name(request.subject), organizations(request.subject)
    except (ValueError, TypeError, KeyError, x509.UnsupportedGeneralNameType):
        raise CsrError("x509: malformed certificate request") from None


def common_name(name: x509.Name) -> str:
    """The subject's CN as Go reads it: the last CN attribute, or "" when absent."""
    values = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(values[-1].value) if values else ""


def organizations(name: x509.Name) -> tuple[str, ...]:
    """Every O attribute of the subject, in order."""
    return tuple(str(a.value) for a in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))


def organizational_units(name: x509.Name) -> tuple[str, ...]:
    """Every OU attribute of the subject, in order."""
    return tuple(
        str(a.value) for a in name.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
    )


def _subject_alternative_names(
    request: x509.CertificateSigningRequest,
) -> x509.SubjectAlternativeName:
    try:
        extension = request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return x509.SubjectAlternativeName([])
    return extension.value
