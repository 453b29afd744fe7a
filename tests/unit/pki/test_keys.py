from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from pyocm.pki import keys


def test_generated_key_is_p256() -> None:
    key = keys.generate_private_key()

    assert isinstance(key.curve, ec.SECP256R1)


def test_private_key_pem_is_pkcs8_and_round_trips() -> None:
    key = keys.generate_private_key()

    pem = keys.private_key_to_pem(key)

    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    loaded = keys.load_private_key(pem)
    assert loaded.private_numbers() == key.private_numbers()


def test_sec1_ec_private_key_is_accepted() -> None:
    key = keys.generate_private_key()
    sec1 = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    assert sec1.startswith(b"-----BEGIN EC PRIVATE KEY-----")

    loaded = keys.load_private_key(sec1.decode())

    assert loaded.private_numbers() == key.private_numbers()


def _rsa_pem() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _p384_pem() -> bytes:
    key = ec.generate_private_key(ec.SECP384R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _encrypted_pem() -> bytes:
    return keys.generate_private_key().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )


@pytest.mark.parametrize(
    ("make_pem", "message"),
    [
        pytest.param(
            lambda: b"garbage",
            "data does not contain a PRIVATE KEY or EC PRIVATE KEY PEM block",
            id="not-pem",
        ),
        pytest.param(
            lambda: b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            "private key PEM could not be decoded",
            id="corrupt-body",
        ),
        pytest.param(_rsa_pem, "private key is not an ECDSA P-256 key", id="rsa"),
        pytest.param(_p384_pem, "private key is not an ECDSA P-256 key", id="p384"),
        pytest.param(
            _encrypted_pem,
            "data does not contain a PRIVATE KEY or EC PRIVATE KEY PEM block",
            id="encrypted",
        ),
    ],
)
def test_load_private_key_refuses(make_pem: Callable[[], bytes], message: str) -> None:
    with pytest.raises(keys.KeyFormatError) as caught:
        keys.load_private_key(make_pem())

    assert str(caught.value) == message


def test_key_material_never_appears_in_errors() -> None:
    pem = _rsa_pem()
    body = pem.decode().splitlines()[1]

    with pytest.raises(keys.KeyFormatError) as caught:
        keys.load_private_key(pem)

    assert body not in str(caught.value)
    assert caught.value.__cause__ is None or body not in str(caught.value.__cause__)


def test_public_key_pem_round_trips() -> None:
    public = keys.generate_private_key().public_key()

    pem = keys.public_key_to_pem(public)

    assert pem.startswith(b"-----BEGIN PUBLIC KEY-----")
    assert keys.load_public_key(pem).public_numbers() == public.public_numbers()


def test_load_public_key_refuses_garbage() -> None:
    with pytest.raises(keys.KeyFormatError, match="public key PEM could not be decoded"):
        keys.load_public_key("nope")


def test_fingerprint_is_sha256_of_der_spki() -> None:
    public = keys.generate_private_key().public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )

    assert keys.fingerprint(public) == hashlib.sha256(der).hexdigest()
    assert len(keys.fingerprint(public)) == 64


def test_fingerprints_differ_between_keys() -> None:
    first = keys.generate_private_key().public_key()
    second = keys.generate_private_key().public_key()

    assert keys.fingerprint(first) != keys.fingerprint(second)
