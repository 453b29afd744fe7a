from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyocm.pki import ca, csr, keys, signer

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
MAX_TTL = signer.DEFAULT_MAX_TTL
ALL_USAGES = ["digital signature", "key encipherment", "client auth"]


@pytest.fixture(scope="module")
def authority() -> ca.CertificateAuthority:
    return ca.CertificateAuthority.create(
        "signer-ca", valid_for=timedelta(days=3650), now=NOW - timedelta(days=1)
    )


@pytest.fixture(scope="module")
def agent_csr() -> bytes:
    return csr.build_csr(
        keys.generate_private_key(),
        common_name="system:open-cluster-management:c1:agent",
        organizations=["system:open-cluster-management:c1"],
    )


def _sign(
    authority: ca.CertificateAuthority,
    csr_pem: bytes,
    *,
    usages: Sequence[str] = ALL_USAGES,
    expiration_seconds: int | None = None,
    max_ttl: timedelta = MAX_TTL,
    now: datetime = NOW,
) -> x509.Certificate:
    pem = signer.sign_client_csr(
        authority,
        csr_pem=csr_pem,
        usages=usages,
        expiration_seconds=expiration_seconds,
        max_ttl=max_ttl,
        now=now,
    )
    assert pem.startswith(b"-----BEGIN CERTIFICATE-----\n")
    return x509.load_pem_x509_certificate(pem)


@pytest.mark.parametrize(
    ("expiration_seconds", "max_ttl", "lifetime"),
    [
        pytest.param(None, MAX_TTL, MAX_TTL - timedelta(minutes=5), id="default-is-max-ttl"),
        pytest.param(600, MAX_TTL, timedelta(seconds=600), id="lower-bound-exact"),
        pytest.param(599, MAX_TTL, timedelta(seconds=600), id="below-lower-bound"),
        pytest.param(1, MAX_TTL, timedelta(seconds=600), id="far-below-lower-bound"),
        pytest.param(601, MAX_TTL, timedelta(seconds=601), id="just-above-lower-bound"),
        pytest.param(3600, MAX_TTL, timedelta(hours=1), id="one-hour-not-backdated"),
        pytest.param(8 * 3600 - 1, MAX_TTL, timedelta(seconds=8 * 3600 - 1), id="just-short-lived"),
        pytest.param(
            8 * 3600, MAX_TTL, timedelta(hours=8) - timedelta(minutes=5), id="eight-hours-backdated"
        ),
        pytest.param(
            100 * 3600,
            timedelta(hours=24),
            timedelta(hours=24) - timedelta(minutes=5),
            id="capped-at-max-ttl",
        ),
        pytest.param(
            24 * 3600,
            timedelta(hours=24),
            timedelta(hours=24) - timedelta(minutes=5),
            id="equal-to-max-ttl",
        ),
        pytest.param(None, timedelta(hours=1), timedelta(hours=1), id="short-max-ttl"),
        pytest.param(
            60, timedelta(minutes=5), timedelta(minutes=10), id="lower-bound-beats-tiny-max-ttl"
        ),
    ],
)
def test_ttl_and_dates(
    authority: ca.CertificateAuthority,
    agent_csr: bytes,
    expiration_seconds: int | None,
    max_ttl: timedelta,
    lifetime: timedelta,
) -> None:
    cert = _sign(authority, agent_csr, expiration_seconds=expiration_seconds, max_ttl=max_ttl)

    assert cert.not_valid_before_utc == NOW - timedelta(minutes=5)
    assert cert.not_valid_after_utc == NOW + lifetime


def test_now_is_truncated_to_seconds(authority: ca.CertificateAuthority, agent_csr: bytes) -> None:
    cert = _sign(
        authority, agent_csr, expiration_seconds=3600, now=NOW + timedelta(microseconds=500_000)
    )

    assert cert.not_valid_after_utc == NOW + timedelta(hours=1)


def test_not_after_is_truncated_to_the_ca(agent_csr: bytes) -> None:
    short_ca = ca.CertificateAuthority.create(
        "short", valid_for=timedelta(hours=2), now=NOW - timedelta(hours=1)
    )

    cert = _sign(short_ca, agent_csr, expiration_seconds=4 * 3600)

    assert cert.not_valid_after_utc == short_ca.not_after == NOW + timedelta(hours=1)
    assert cert.not_valid_before_utc == NOW - timedelta(minutes=5)


@pytest.mark.parametrize(
    ("ca_expires", "message"),
    [
        pytest.param(
            NOW - timedelta(minutes=5),
            "the signer has expired: NotAfter=2026-11-22 11:55:00 +0000 UTC",
            id="expired-before-backdated-start",
        ),
        pytest.param(
            NOW - timedelta(minutes=1),
            "refusing to sign a certificate that expired in the past: "
            "NotAfter=2026-11-22 11:59:00 +0000 UTC",
            id="expired-within-backdate",
        ),
        pytest.param(
            NOW,
            "refusing to sign a certificate that expired in the past: "
            "NotAfter=2026-11-22 12:00:00 +0000 UTC",
            id="expires-now",
        ),
    ],
)
def test_expired_ca_cannot_sign(agent_csr: bytes, ca_expires: datetime, message: str) -> None:
    old_ca = ca.CertificateAuthority.create(
        "old", valid_for=timedelta(days=1), now=ca_expires - timedelta(days=1)
    )

    with pytest.raises(signer.SigningError) as caught:
        _sign(old_ca, agent_csr, expiration_seconds=3600)

    assert str(caught.value) == message


def test_certificate_contents(authority: ca.CertificateAuthority, agent_csr: bytes) -> None:
    cert = _sign(authority, agent_csr)

    request = x509.load_pem_x509_csr(agent_csr)
    assert cert.subject == request.subject
    assert cert.issuer == authority.certificate.subject
    assert keys.fingerprint(cert.public_key()) == keys.fingerprint(request.public_key())
    constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and not constraints.value.ca
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.digital_signature and usage.value.key_encipherment
    assert not usage.value.key_cert_sign
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    ca_ski = authority.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ca_ski.value.digest
    cert.verify_directly_issued_by(authority.certificate)


def test_signed_certificate_authenticates(
    authority: ca.CertificateAuthority, agent_csr: bytes
) -> None:
    cert = _sign(authority, agent_csr, expiration_seconds=3600)

    identity = authority.verify_client(cert, now=NOW)

    assert identity.user == "system:open-cluster-management:c1:agent"
    assert identity.groups == ("system:open-cluster-management:c1",)


def test_client_auth_alone_gives_no_key_usage_extension(
    authority: ca.CertificateAuthority, agent_csr: bytes
) -> None:
    cert = _sign(authority, agent_csr, usages=["client auth"])

    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.KeyUsage)


def test_digital_signature_alone_sets_only_that_bit(
    authority: ca.CertificateAuthority, agent_csr: bytes
) -> None:
    cert = _sign(authority, agent_csr, usages=["digital signature", "client auth"])

    usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and not usage.key_encipherment


def _request_with(
    subject: x509.Name, extensions: Sequence[tuple[x509.ExtensionType, bool]]
) -> bytes:
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    request = builder.sign(keys.generate_private_key(), hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


def test_sans_are_copied_in_go_order_and_other_extensions_dropped(
    authority: ca.CertificateAuthority,
) -> None:
    sans = x509.SubjectAlternativeName(
        [
            x509.UniformResourceIdentifier("spiffe://c1/agent"),
            x509.IPAddress(ipaddress.ip_address("10.0.0.7")),
            x509.DirectoryName(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dir")])),
            x509.RFC822Name("agent@example.com"),
            x509.DNSName("agent.c1"),
        ]
    )
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent")])
    request = _request_with(
        subject,
        [(sans, False), (x509.BasicConstraints(ca=True, path_length=None), True)],
    )

    cert = _sign(authority, request)

    copied = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert not copied.critical
    assert list(copied.value) == [
        x509.DNSName("agent.c1"),
        x509.RFC822Name("agent@example.com"),
        x509.IPAddress(ipaddress.ip_address("10.0.0.7")),
        x509.UniformResourceIdentifier("spiffe://c1/agent"),
    ]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    oids = [extension.oid for extension in cert.extensions]
    assert len(oids) == len(set(oids))


def test_sans_are_critical_when_the_subject_is_empty(authority: ca.CertificateAuthority) -> None:
    sans = x509.SubjectAlternativeName([x509.DNSName("only.san")])
    request = _request_with(x509.Name([]), [(sans, False)])

    cert = _sign(authority, request)

    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).critical


def test_no_san_extension_without_requested_sans(
    authority: ca.CertificateAuthority, agent_csr: bytes
) -> None:
    cert = _sign(authority, agent_csr)

    with pytest.raises(x509.ExtensionNotFound):
        cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)


@pytest.mark.parametrize(
    ("usages", "message"),
    [
        pytest.param(
            ["digital signature", "server auth", "client auth"],
            "invalid usage for client certificate: server auth",
            id="server-auth",
        ),
        pytest.param(
            ["client auth", "cert sign"],
            "invalid usage for client certificate: cert sign",
            id="cert-sign",
        ),
        pytest.param(
            ["bogus", "client auth"], "invalid usage for client certificate: bogus", id="unknown"
        ),
        pytest.param(
            ["digital signature", "key encipherment"],
            "missing required usage for client certificate: client auth",
            id="no-client-auth",
        ),
        pytest.param([], "missing required usage for client certificate: client auth", id="none"),
    ],
)
def test_bad_usages_are_refused(
    authority: ca.CertificateAuthority, agent_csr: bytes, usages: list[str], message: str
) -> None:
    with pytest.raises(signer.SigningRefused) as caught:
        _sign(authority, agent_csr, usages=usages)

    assert caught.value.reason == "SignerValidationFailure"
    assert caught.value.message == message
    assert str(caught.value) == message


def test_unparseable_csr_is_a_retryable_error(authority: ca.CertificateAuthority) -> None:
    with pytest.raises(signer.SigningError) as caught:
        _sign(authority, b"junk")

    assert str(caught.value) == "unable to parse csr: PEM block type must be CERTIFICATE REQUEST"


def test_csr_with_bad_signature_is_not_signed(
    authority: ca.CertificateAuthority, agent_csr: bytes
) -> None:
    request = x509.load_pem_x509_csr(agent_csr)
    der = bytearray(request.public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0x01
    tampered = x509.load_der_x509_csr(bytes(der)).public_bytes(serialization.Encoding.PEM)

    with pytest.raises(signer.SigningError, match="unable to verify certificate request signature"):
        _sign(authority, tampered)


@pytest.mark.parametrize(
    ("organizations", "expected"),
    [
        pytest.param(["system:masters"], True, id="masters"),
        pytest.param(["team", "system:masters"], True, id="masters-among-others"),
        pytest.param(["system:masters-ish"], False, id="lookalike"),
        pytest.param([], False, id="no-groups"),
    ],
)
def test_csr_subject_has_masters(organizations: list[str], expected: bool) -> None:
    pem = csr.build_csr(
        keys.generate_private_key(), common_name="system:masters", organizations=organizations
    )

    assert signer.csr_subject_has_masters(pem) is expected


def test_masters_check_refuses_garbage() -> None:
    with pytest.raises(csr.CsrError):
        signer.csr_subject_has_masters("junk")


def test_masters_message_is_kubernetes_wording() -> None:
    assert signer.MASTERS_FORBIDDEN_MESSAGE == (
        "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )
