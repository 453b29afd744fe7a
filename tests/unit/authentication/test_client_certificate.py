"""A presented client certificate authenticates only if the hub's client CA signed it:
the TLS layer may let an unknown CA's certificate through (tlsdefer), so that it is
answered 401; here it must never name a user."""

from __future__ import annotations

import ssl
import time
from datetime import timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from pyocm.apiserver.authentication import authenticator
from pyocm.kube import status
from pyocm.pki.ca import CertificateAuthority

HUB = CertificateAuthority.create("hub-ca", valid_for=timedelta(days=1))


def _peer(cert_pem: bytes) -> tuple[dict, bytes]:
    """What ``getpeercert()`` and ``getpeercert(binary_form=True)`` give."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    der = cert.public_bytes(serialization.Encoding.DER)
    subject = tuple(
        (
            (
                {"CN": "commonName", "O": "organizationName"}[a.rfc4514_attribute_name],
                str(a.value),
            ),
        )
        for a in cert.subject
    )
    fmt = "%b %d %H:%M:%S %Y GMT"
    return {
        "subject": subject,
        "notBefore": cert.not_valid_before_utc.strftime(fmt),
        "notAfter": cert.not_valid_after_utc.strftime(fmt),
    }, der


def _issued(ca: CertificateAuthority) -> tuple[dict, bytes]:
    cert, _ = ca.issue_client(
        common_name="admin", organizations=["system:masters"], valid_for=timedelta(hours=1)
    )
    return _peer(cert)


def _same_name_other_key() -> CertificateAuthority:
    name = HUB.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return CertificateAuthority.create(str(name), valid_for=timedelta(days=1))


def test_the_hub_cas_certificate_names_its_user() -> None:
    peercert, der = _issued(HUB)
    found = authenticator.client_certificate(peercert, der, issuer=HUB.certificate)
    assert found is not None and found.valid_at(time.time())
    assert found.user is not None and found.user.name == "admin"
    assert ssl.cert_time_to_seconds(peercert["notAfter"]) == found.not_after


@pytest.mark.parametrize(
    "ca",
    [
        CertificateAuthority.create("someone-else", valid_for=timedelta(days=1)),
        _same_name_other_key(),
    ],
    ids=["unknown CA", "CA with the hub CA's name"],
)
def test_another_cas_certificate_names_nobody_and_never_passes(ca: CertificateAuthority) -> None:
    peercert, der = _issued(ca)
    found = authenticator.client_certificate(peercert, der, issuer=HUB.certificate)
    assert found is authenticator.UNTRUSTED
    assert found.user is None and not found.valid_at(time.time())


def test_without_the_binary_form_a_certificate_is_untrusted() -> None:
    peercert, _ = _issued(HUB)
    assert (
        authenticator.client_certificate(peercert, None, issuer=HUB.certificate)
        is authenticator.UNTRUSTED
    )
    assert (
        authenticator.client_certificate(peercert, b"junk", issuer=HUB.certificate)
        is authenticator.UNTRUSTED
    )
    assert authenticator.client_certificate(None, None, issuer=HUB.certificate) is None


async def test_an_untrusted_certificate_is_401_never_anonymous() -> None:
    auth = authenticator.Authenticator(backend=None, sa_public_key=None, issuer="x")  # type: ignore[arg-type]
    with pytest.raises(status.ApiError) as err:
        await auth.authenticate(certificate=authenticator.UNTRUSTED, authorization=None)
    assert err.value.code == 401
