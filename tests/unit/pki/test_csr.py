from __future__ import annotations

import base64
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from pyocm.pki import csr, keys


def test_build_and_parse_round_trip() -> None:
    key = keys.generate_private_key()

    pem = csr.build_csr(
        key,
        common_name="system:open-cluster-management:c1:agent",
        organizations=[
            "system:open-cluster-management:c1",
            "system:open-cluster-management:managed-clusters",
        ],
    )

    assert pem.startswith(b"-----BEGIN CERTIFICATE REQUEST-----\n")
    assert csr.parse_csr(pem) == csr.CsrInfo(
        common_name="system:open-cluster-management:c1:agent",
        organizations=(
            "system:open-cluster-management:c1",
            "system:open-cluster-management:managed-clusters",
        ),
        public_key_fingerprint=keys.fingerprint(key.public_key()),
        signature_valid=True,
        dns_names=(),
        ips=(),
        emails=(),
        uris=(),
    )


def test_organizations_precede_common_name_in_the_subject() -> None:
    pem = csr.build_csr(keys.generate_private_key(), common_name="u", organizations=["g1", "g2"])

    request = x509.load_pem_x509_csr(pem)
    oids = [attribute.oid for attribute in request.subject]
    assert oids == [NameOID.ORGANIZATION_NAME, NameOID.ORGANIZATION_NAME, NameOID.COMMON_NAME]


def test_subject_alternative_names_are_reported() -> None:
    key = keys.generate_private_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "svc")])
    sans = x509.SubjectAlternativeName(
        [
            x509.DNSName("svc.example.com"),
            x509.IPAddress(ipaddress.ip_address("10.0.0.1")),
            x509.RFC822Name("ops@example.com"),
            x509.UniformResourceIdentifier("spiffe://cluster/ns/a"),
        ]
    )
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(name)
        .add_extension(sans, critical=False)
        .sign(key, hashes.SHA256())
    )

    info = csr.parse_csr(request.public_bytes(serialization.Encoding.PEM).decode())

    assert info.dns_names == ("svc.example.com",)
    assert info.ips == ("10.0.0.1",)
    assert info.emails == ("ops@example.com",)
    assert info.uris == ("spiffe://cluster/ns/a",)
    assert info.organizations == ()


def test_build_csr_with_sans() -> None:
    pem = csr.build_csr(
        keys.generate_private_key(), common_name="hub", dns_names=["hub.local"], ips=["::1"]
    )

    info = csr.parse_csr(pem)

    assert info.dns_names == ("hub.local",)
    assert info.ips == ("::1",)


def _tampered(pem: bytes) -> bytes:
    """Flip one bit of the signature so the CSR still parses but no longer verifies."""
    request = x509.load_pem_x509_csr(pem)
    der = bytearray(request.public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0x01
    body = base64.encodebytes(bytes(der))
    return b"-----BEGIN CERTIFICATE REQUEST-----\n" + body + b"-----END CERTIFICATE REQUEST-----\n"


def test_broken_signature_is_reported_not_raised() -> None:
    pem = csr.build_csr(keys.generate_private_key(), common_name="u")

    info = csr.parse_csr(_tampered(pem))

    assert info.signature_valid is False
    assert info.common_name == "u"


def test_leading_text_before_the_pem_block_is_skipped() -> None:
    pem = csr.build_csr(keys.generate_private_key(), common_name="u")

    assert csr.parse_csr(b"comment line\n" + pem).common_name == "u"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"", "PEM block type must be CERTIFICATE REQUEST", id="empty"),
        pytest.param(b"not a pem", "PEM block type must be CERTIFICATE REQUEST", id="garbage"),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
            "PEM block type must be CERTIFICATE REQUEST",
            id="wrong-block-type",
        ),
        pytest.param(
            b"-----BEGIN CERTIFICATE REQUEST-----\n!!!!\n-----END CERTIFICATE REQUEST-----\n",
            "PEM block type must be CERTIFICATE REQUEST",
            id="bad-base64",
        ),
        pytest.param(
            b"-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQE=\n-----END CERTIFICATE REQUEST-----\n",
            "x509: malformed certificate request",
            id="not-a-csr",
        ),
    ],
)
def test_garbage_raises_csr_error(data: bytes, message: str) -> None:
    with pytest.raises(csr.CsrError) as caught:
        csr.parse_csr(data)

    assert str(caught.value) == message


def test_common_name_is_empty_without_cn() -> None:
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "g")])

    assert csr.common_name(name) == ""
    assert csr.organizations(name) == ("g",)


def test_read_subject_reads_without_verifying() -> None:
    pem = csr.build_csr(
        keys.generate_private_key(), common_name="agent", organizations=["g1", "g2"]
    )

    assert csr.read_subject(pem) == ("agent", ("g1", "g2"))
    assert csr.read_subject(_tampered(pem)) == ("agent", ("g1", "g2"))


def test_read_subject_refuses_a_malformed_extension_as_go_does() -> None:
    broken_sans = x509.UnrecognizedExtension(
        x509.oid.ExtensionOID.SUBJECT_ALTERNATIVE_NAME, b"\x04\x01\x00"
    )
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent")]))
        .add_extension(broken_sans, critical=False)
        .sign(keys.generate_private_key(), hashes.SHA256())
    )

    with pytest.raises(csr.CsrError, match="malformed certificate request"):
        csr.read_subject(request.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(csr.CsrError):
        csr.read_subject(b"not a pem")
