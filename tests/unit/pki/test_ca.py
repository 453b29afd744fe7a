from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyocm.pki import ca, keys

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
YEAR = timedelta(days=365)


@pytest.fixture(scope="module")
def authority() -> ca.CertificateAuthority:
    return ca.CertificateAuthority.create("pyocm-test-ca", valid_for=10 * YEAR, now=NOW)


@pytest.fixture(scope="module")
def other_authority() -> ca.CertificateAuthority:
    return ca.CertificateAuthority.create("pyocm-other-ca", valid_for=10 * YEAR, now=NOW)


def _cert(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


T = TypeVar("T", bound=x509.ExtensionType)


def _ext(cert: x509.Certificate, kind: type[T]) -> x509.Extension[T]:
    return cert.extensions.get_extension_for_class(kind)


def test_created_ca_is_a_self_signed_ca(authority: ca.CertificateAuthority) -> None:
    cert = authority.certificate

    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "pyocm-test-ca"
    assert cert.issuer == cert.subject
    constraints = _ext(cert, x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca
    usage = _ext(cert, x509.KeyUsage)
    assert usage.critical
    assert usage.value.key_cert_sign and usage.value.crl_sign
    ski = _ext(cert, x509.SubjectKeyIdentifier).value
    assert _ext(cert, x509.AuthorityKeyIdentifier).value.key_identifier == ski.digest
    cert.verify_directly_issued_by(cert)
    assert isinstance(authority.key, keys.PrivateKey)


def test_created_ca_validity_window(authority: ca.CertificateAuthority) -> None:
    assert authority.certificate.not_valid_before_utc == NOW - timedelta(minutes=5)
    assert authority.not_after == NOW + 10 * YEAR


def test_now_is_truncated_to_whole_seconds() -> None:
    authority = ca.CertificateAuthority.create(
        "x", valid_for=YEAR, now=NOW + timedelta(microseconds=999_999)
    )

    assert authority.not_after == NOW + YEAR


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        ca.CertificateAuthority.create("x", valid_for=YEAR, now=datetime(2026, 1, 1))


def test_load_round_trips(authority: ca.CertificateAuthority) -> None:
    loaded = ca.CertificateAuthority.load(authority.cert_pem, authority.key_pem.decode())

    assert loaded.certificate == authority.certificate
    assert loaded.key_pem == authority.key_pem


def test_load_refuses_a_key_from_another_ca(
    authority: ca.CertificateAuthority, other_authority: ca.CertificateAuthority
) -> None:
    with pytest.raises(ca.CAError, match="CA private key does not match the CA certificate"):
        ca.CertificateAuthority.load(authority.cert_pem, other_authority.key_pem)


def test_load_refuses_a_leaf_certificate(authority: ca.CertificateAuthority) -> None:
    cert_pem, key_pem = authority.issue_client(common_name="u", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.CAError, match="BasicConstraints has CA:FALSE"):
        ca.CertificateAuthority.load(cert_pem, key_pem)


def test_load_refuses_garbage(authority: ca.CertificateAuthority) -> None:
    with pytest.raises(ca.CAError, match="CA certificate PEM could not be decoded"):
        ca.CertificateAuthority.load(b"nope", authority.key_pem)


def test_serving_certificate(authority: ca.CertificateAuthority) -> None:
    cert_pem, key_pem = authority.issue_serving(
        hosts=["hub.example.com", "127.0.0.1", "::1", "localhost"], valid_for=YEAR, now=NOW
    )

    cert = _cert(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "hub.example.com"
    sans = _ext(cert, x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["hub.example.com", "localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    assert list(_ext(cert, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert not _ext(cert, x509.BasicConstraints).value.ca
    ca_ski = _ext(authority.certificate, x509.SubjectKeyIdentifier).value.digest
    assert _ext(cert, x509.AuthorityKeyIdentifier).value.key_identifier == ca_ski
    assert keys.fingerprint(keys.load_private_key(key_pem).public_key()) == keys.fingerprint(
        cert.public_key()
    )
    assert cert.not_valid_before_utc == NOW - timedelta(minutes=5)
    assert cert.not_valid_after_utc == NOW + YEAR
    cert.verify_directly_issued_by(authority.certificate)


def test_serving_certificate_needs_a_host(authority: ca.CertificateAuthority) -> None:
    with pytest.raises(ValueError, match="at least one host"):
        authority.issue_serving(hosts=[], valid_for=YEAR)


def test_client_certificate_round_trips_through_verification(
    authority: ca.CertificateAuthority,
) -> None:
    cert_pem, _ = authority.issue_client(
        common_name="system:open-cluster-management:c1:agent",
        organizations=[
            "system:open-cluster-management:c1",
            "system:open-cluster-management:managed-clusters",
        ],
        valid_for=YEAR,
        now=NOW,
    )

    identity = authority.verify_client(cert_pem, now=NOW)

    assert identity == ca.ClientIdentity(
        user="system:open-cluster-management:c1:agent",
        groups=(
            "system:open-cluster-management:c1",
            "system:open-cluster-management:managed-clusters",
        ),
        not_after=NOW + YEAR,
    )
    cert = _cert(cert_pem)
    assert list(_ext(cert, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_verify_accepts_der_and_parsed_certificates(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_client(common_name="admin", valid_for=YEAR, now=NOW)
    cert = _cert(cert_pem)

    from_der = authority.verify_client(cert.public_bytes(serialization.Encoding.DER), now=NOW)
    from_object = authority.verify_client(cert, now=NOW)

    assert from_der.user == from_object.user == "admin"
    assert from_der.groups == ()


def test_certificate_from_another_ca_is_refused(
    authority: ca.CertificateAuthority, other_authority: ca.CertificateAuthority
) -> None:
    cert_pem, _ = other_authority.issue_client(common_name="intruder", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.VerificationError) as caught:
        authority.verify_client(cert_pem, now=NOW)

    assert str(caught.value) == "x509: certificate signed by unknown authority"


def test_forged_signature_with_the_same_issuer_name_is_refused(
    authority: ca.CertificateAuthority,
) -> None:
    impostor = ca.CertificateAuthority.create("pyocm-test-ca", valid_for=YEAR, now=NOW)
    cert_pem, _ = impostor.issue_client(common_name="intruder", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.VerificationError, match="signed by unknown authority"):
        authority.verify_client(cert_pem, now=NOW)


def test_expired_certificate_is_refused(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_client(common_name="u", valid_for=timedelta(hours=1), now=NOW)
    later = NOW + timedelta(hours=1, seconds=1)

    with pytest.raises(ca.VerificationError) as caught:
        authority.verify_client(cert_pem, now=later)

    assert str(caught.value) == (
        "x509: certificate has expired or is not yet valid: "
        "current time 2026-11-22T13:00:01Z is after 2026-11-22T13:00:00Z"
    )


def test_certificate_is_valid_at_its_last_second(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_client(common_name="u", valid_for=timedelta(hours=1), now=NOW)

    assert authority.verify_client(cert_pem, now=NOW + timedelta(hours=1)).user == "u"


def test_not_yet_valid_certificate_is_refused(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_client(common_name="u", valid_for=YEAR, now=NOW)
    earlier = NOW - timedelta(minutes=6)

    with pytest.raises(ca.VerificationError) as caught:
        authority.verify_client(cert_pem, now=earlier)

    assert str(caught.value) == (
        "x509: certificate has expired or is not yet valid: "
        "current time 2026-11-22T11:54:00Z is before 2026-11-22T11:55:00Z"
    )


def test_expired_ca_is_refused() -> None:
    short = ca.CertificateAuthority.create("short", valid_for=timedelta(days=1), now=NOW)
    cert_pem, _ = short.issue_client(common_name="u", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.VerificationError, match="is after 2026-11-23T12:00:00Z"):
        short.verify_client(cert_pem, now=NOW + timedelta(days=2))


def test_server_auth_only_certificate_is_refused(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_serving(hosts=["hub"], valid_for=YEAR, now=NOW)

    with pytest.raises(ca.VerificationError) as caught:
        authority.verify_client(cert_pem, now=NOW)

    assert str(caught.value) == "x509: certificate specifies an incompatible key usage"


def _leaf_builder(
    subject: x509.Name, usages: list[x509.ObjectIdentifier] | None
) -> x509.CertificateBuilder:
    key = keys.generate_private_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - timedelta(minutes=1))
        .not_valid_after(NOW + YEAR)
    )
    if usages is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    return builder


@pytest.mark.parametrize(
    "usages",
    [
        pytest.param(None, id="no-eku-extension"),
        pytest.param([ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE], id="any-usage"),
        pytest.param([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH], id="both"),
    ],
)
def test_eku_accepted_like_go(
    authority: ca.CertificateAuthority, usages: list[x509.ObjectIdentifier] | None
) -> None:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "u")])
    cert = authority.sign(_leaf_builder(subject, usages))

    assert authority.verify_client(cert, now=NOW).user == "u"


def test_certificate_without_common_name_is_refused(authority: ca.CertificateAuthority) -> None:
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "g")])
    cert = authority.sign(_leaf_builder(subject, [ExtendedKeyUsageOID.CLIENT_AUTH]))

    with pytest.raises(ca.VerificationError, match="no common name"):
        authority.verify_client(cert, now=NOW)


def test_last_common_name_wins_like_go(authority: ca.CertificateAuthority) -> None:
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "first"),
            x509.NameAttribute(NameOID.COMMON_NAME, "last"),
        ]
    )
    cert = authority.sign(_leaf_builder(subject, None))

    assert authority.verify_client(cert, now=NOW).user == "last"


def test_sign_without_subject_key_identifier_adds_no_aki() -> None:
    key = keys.generate_private_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bare-ca")])
    bare = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(NOW - YEAR)
        .not_valid_after(NOW + YEAR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    authority = ca.CertificateAuthority(certificate=bare, key=key)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "u")])

    cert = authority.sign(_leaf_builder(subject, None))

    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    assert authority.verify_client(cert, now=NOW).user == "u"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\x30\x03\x02\x01\x01", id="bad-der"),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", id="bad-pem"
        ),
    ],
)
def test_malformed_certificate_is_refused(authority: ca.CertificateAuthority, data: bytes) -> None:
    with pytest.raises(ca.VerificationError, match="x509: malformed certificate"):
        authority.verify_client(data, now=NOW)


def test_bundle_verifies_against_every_ca(
    authority: ca.CertificateAuthority, other_authority: ca.CertificateAuthority
) -> None:
    bundle = ca.CABundle.from_pem(authority.cert_pem + other_authority.cert_pem)
    old_pem, _ = authority.issue_client(common_name="old", valid_for=YEAR, now=NOW)
    new_pem, _ = other_authority.issue_client(common_name="new", valid_for=YEAR, now=NOW)

    assert bundle.verify_client(old_pem, now=NOW).user == "old"
    assert bundle.verify_client(new_pem, now=NOW).user == "new"
    assert bundle.pem == authority.cert_pem + other_authority.cert_pem


def test_bundle_refuses_a_ca_outside_it(
    authority: ca.CertificateAuthority, other_authority: ca.CertificateAuthority
) -> None:
    third = ca.CertificateAuthority.create("third", valid_for=YEAR, now=NOW)
    bundle = ca.CABundle([authority.certificate, other_authority.certificate])
    cert_pem, _ = third.issue_client(common_name="u", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.VerificationError, match="signed by unknown authority"):
        bundle.verify_client(cert_pem, now=NOW)


@pytest.mark.parametrize(
    ("pem", "message"),
    [
        pytest.param(b"", "a CA bundle needs at least one certificate", id="empty"),
        pytest.param(b"garbage", "CA bundle PEM could not be decoded", id="garbage"),
    ],
)
def test_bundle_from_pem_refuses(pem: bytes, message: str) -> None:
    with pytest.raises(ca.CAError, match=message):
        ca.CABundle.from_pem(pem)


def test_bundle_refuses_leaf_certificates(authority: ca.CertificateAuthority) -> None:
    cert_pem, _ = authority.issue_client(common_name="u", valid_for=YEAR, now=NOW)

    with pytest.raises(ca.CAError, match="not a CA"):
        ca.CABundle.from_pem(authority.cert_pem + cert_pem)
