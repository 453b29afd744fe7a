"""CustomSigner signing from a TLS Secret CA: the certificate upstream issues, the key
formats pyocm accepts, and every broken CA refused with a message (never its bytes)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyocm.addon.registration.sign import (
    SigningCA,
    ca_from_secret,
    ca_secret_signer,
    sign_csr,
)
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.pki.csr import build_csr
from pyocm.pki.signer import SIGNER_VALIDATION_FAILURE, SigningRefused

NOW = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
USER = "system:open-cluster-management:cluster:c1:addon:hello:agent:hello"
GROUPS = (
    "system:open-cluster-management:cluster:c1:addon:hello",
    "system:open-cluster-management:addon:hello",
)
SIGNER = "example.com/hello"

Key = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


def ca_cert(key: Key, *, valid_for: timedelta = timedelta(days=365), now: datetime = NOW) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hello-signer")])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(7)
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + valid_for)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    digest = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(key, digest).public_bytes(serialization.Encoding.PEM)


def key_pem(key: Key, fmt: serialization.PrivateFormat) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())


def request() -> bytes:
    return build_csr(
        keys.generate_private_key(),
        common_name=USER,
        organizations=GROUPS,
        dns_names=("hello.addon.open-cluster-management.io",),
    )


RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
P256 = ec.generate_private_key(ec.SECP256R1())
P384 = ec.generate_private_key(ec.SECP384R1())
PKCS1 = serialization.PrivateFormat.TraditionalOpenSSL  # RSA PRIVATE KEY / EC PRIVATE KEY
PKCS8 = serialization.PrivateFormat.PKCS8

FORMATS = {
    "rsa-pkcs1": (RSA, PKCS1, b"RSA PRIVATE KEY"),
    "rsa-pkcs8": (RSA, PKCS8, b"BEGIN PRIVATE KEY"),
    "ec-sec1": (P256, PKCS1, b"EC PRIVATE KEY"),
    "ec-pkcs8": (P256, PKCS8, b"BEGIN PRIVATE KEY"),
    "p384-pkcs8": (P384, PKCS8, b"BEGIN PRIVATE KEY"),
}


def verify(issued: x509.Certificate, key: Key) -> None:
    public = key.public_key()
    assert issued.signature_hash_algorithm is not None
    if isinstance(public, rsa.RSAPublicKey):
        public.verify(
            issued.signature,
            issued.tbs_certificate_bytes,
            padding.PKCS1v15(),
            issued.signature_hash_algorithm,
        )
    else:
        assert isinstance(public, ec.EllipticCurvePublicKey)
        public.verify(
            issued.signature,
            issued.tbs_certificate_bytes,
            ec.ECDSA(issued.signature_hash_algorithm),
        )


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_signs_with_each_key_format_as_upstream_issues(name: str) -> None:
    key, fmt, label = FORMATS[name]
    pem = key_pem(key, fmt)
    assert label in pem
    csr = request()
    issued = x509.load_pem_x509_certificate(
        sign_csr(SigningCA.load(ca_cert(key), pem), csr, now=NOW)
    )
    asked = x509.load_pem_x509_csr(csr)
    assert issued.subject == asked.subject
    assert issued.issuer.rfc4514_string() == "CN=hello-signer"
    assert keys.public_key_der(issued.public_key()) == keys.public_key_der(asked.public_key())
    sans = issued.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["hello.addon.open-cluster-management.io"]
    usage = issued.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and usage.value.key_encipherment
    assert not usage.value.key_cert_sign
    eku = issued.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    assert issued.not_valid_before_utc == NOW
    assert issued.not_valid_after_utc == NOW + timedelta(hours=24)
    assert 0 < issued.serial_number < 1 << 128
    verify(issued, key)


def test_serials_are_random() -> None:
    ca = SigningCA.load(ca_cert(P256), key_pem(P256, PKCS8))
    serials = {
        x509.load_pem_x509_certificate(sign_csr(ca, request(), now=NOW)).serial_number
        for _ in range(3)
    }
    assert len(serials) == 3


def test_lifetime_is_capped_at_the_ca_expiry() -> None:
    ca = SigningCA.load(ca_cert(P256, valid_for=timedelta(hours=2)), key_pem(P256, PKCS8))
    issued = x509.load_pem_x509_certificate(sign_csr(ca, request(), now=NOW))
    assert issued.not_valid_after_utc == NOW + timedelta(hours=2)


def test_an_expired_ca_is_refused() -> None:
    ca = SigningCA.load(
        ca_cert(P256, valid_for=timedelta(hours=1), now=NOW - timedelta(hours=3)),
        key_pem(P256, PKCS8),
    )
    with pytest.raises(SigningRefused) as refused:
        sign_csr(ca, request(), now=NOW)
    assert refused.value.reason == SIGNER_VALIDATION_FAILURE
    assert (
        refused.value.message == "signer has expired, expired time: 2030-01-02 01:04:05 +0000 UTC"
    )


def test_an_unsupported_key_type_is_refused() -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    with pytest.raises(SigningRefused, match="unsupported ca key type"):
        SigningCA.load(ca_cert(key), key_pem(key, PKCS8))


def test_a_malformed_key_is_refused_without_quoting_it() -> None:
    good = key_pem(RSA, PKCS1)
    lines = good.splitlines()
    broken = b"\n".join([lines[0], lines[1][:20] + b"AAAA" + lines[1][24:], *lines[2:]])
    with pytest.raises(SigningRefused) as refused:
        SigningCA.load(ca_cert(RSA), broken)
    assert refused.value.message == "failed to parse ca key as PKCS#1, PKCS#8 or SEC1 PEM"
    assert lines[1][:16].decode() not in str(refused.value)


def test_an_encrypted_key_is_refused() -> None:
    encrypted = P256.private_bytes(
        serialization.Encoding.PEM, PKCS8, serialization.BestAvailableEncryption(b"secret")
    )
    with pytest.raises(SigningRefused, match="encrypted"):
        SigningCA.load(ca_cert(P256), encrypted)


def test_a_key_of_another_certificate_is_refused() -> None:
    with pytest.raises(SigningRefused, match="does not belong"):
        SigningCA.load(ca_cert(P256), key_pem(P384, PKCS8))


def test_a_malformed_certificate_is_refused() -> None:
    with pytest.raises(SigningRefused, match="failed to decode ca cert"):
        SigningCA.load(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", b"")


def test_an_unreadable_request_is_refused() -> None:
    ca = SigningCA.load(ca_cert(P256), key_pem(P256, PKCS8))
    with pytest.raises(SigningRefused, match="failed to parse csr"):
        sign_csr(ca, b"not a request", now=NOW)


def secret(**data: bytes) -> dict[str, Any]:
    return {
        "type": "kubernetes.io/tls",
        "data": {k.replace("_", "."): base64.b64encode(v).decode() for k, v in data.items()},
    }


def test_a_secret_without_its_key_is_refused() -> None:
    with pytest.raises(SigningRefused, match=r"no tls\.key"):
        ca_from_secret(secret(tls_crt=ca_cert(P256)))


class Hub:
    """Answers ``get`` with the Secret it holds, 404 for any other."""

    def __init__(self, held: dict[str, Any] | None) -> None:
        self.held, self.asked = held, []

    async def get(self, kind: Any, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        self.asked.append((kind.kind, namespace, name))
        if self.held is None:
            raise ApiError(code=404, reason="NotFound", message=f"secrets {name} not found")
        return self.held


def csr(signer: str = SIGNER) -> dict[str, Any]:
    return {
        "metadata": {"name": "addon-c1-hello-1"},
        "spec": {"signerName": signer, "request": base64.b64encode(request()).decode()},
    }


async def sign_with(hub: Hub, obj: dict[str, Any], **options: Any) -> bytes:
    sign = ca_secret_signer(signer_name=SIGNER, secret="hello-ca", clock=FakeClock(NOW), **options)
    return await sign(hub, {}, {}, obj)  # type: ignore[arg-type,typeddict-item]


async def test_the_secret_signer_reads_the_ca_in_the_hub_namespace_by_default() -> None:
    hub = Hub(secret(tls_crt=ca_cert(RSA), tls_key=key_pem(RSA, PKCS1)))
    issued = x509.load_pem_x509_certificate(await sign_with(hub, csr()))
    assert hub.asked == [("Secret", "open-cluster-management-hub", "hello-ca")]
    assert issued.not_valid_after_utc == NOW + timedelta(hours=24)
    verify(issued, RSA)


async def test_the_secret_signer_reads_the_named_namespace() -> None:
    hub = Hub(secret(tls_crt=ca_cert(P256), tls_key=key_pem(P256, PKCS8)))
    await sign_with(hub, csr(), namespace="hello-system")
    assert hub.asked == [("Secret", "hello-system", "hello-ca")]


async def test_the_secret_signer_leaves_other_signers_alone() -> None:
    hub = Hub(secret(tls_crt=ca_cert(P256), tls_key=key_pem(P256, PKCS8)))
    assert await sign_with(hub, csr("example.com/other")) == b""
    assert hub.asked == []


async def test_the_secret_signer_refuses_a_missing_secret() -> None:
    with pytest.raises(SigningRefused) as refused:
        await sign_with(Hub(None), csr())
    assert refused.value.message == (
        "get custom signer ca open-cluster-management-hub/hello-ca failed: not found"
    )


async def test_the_secret_signer_names_the_secret_it_could_not_use() -> None:
    hub = Hub(secret(tls_crt=ca_cert(P256), tls_key=b"garbage"))
    with pytest.raises(SigningRefused) as refused:
        await sign_with(hub, csr())
    assert refused.value.message == (
        "get ca open-cluster-management-hub/hello-ca data failed: "
        "failed to parse ca key as PKCS#1, PKCS#8 or SEC1 PEM"
    )
