"""ECDSA P-256 private keys: generation, PEM encoding and public-key fingerprints.

pyocm uses P-256 for every key it makes (CAs, serving and client certificates, CSRs,
service-account token signing): generation is ~3000x faster than RSA-2048 and ES256 is
what the JWT module signs with. Loading refuses any other key type so a misconfigured
file is caught at startup rather than at the first signature.

Nothing here puts key bytes into exception messages or logs.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

PrivateKey = ec.EllipticCurvePrivateKey
PublicKey = ec.EllipticCurvePublicKey

# The PEM labels a P-256 private key may carry: PKCS#8 (what we write) and SEC1 (what
# openssl ecparam, kubeadm and client-go's keyutil write).
_PRIVATE_KEY_LABELS = (b"-----BEGIN PRIVATE KEY-----", b"-----BEGIN EC PRIVATE KEY-----")


class KeyFormatError(ValueError):
    """Raised when bytes are not a PEM-encoded ECDSA P-256 key."""


def generate_private_key() -> PrivateKey:
    """Return a fresh ECDSA P-256 private key."""
    return ec.generate_private_key(ec.SECP256R1())


def private_key_to_pem(key: PrivateKey) -> bytes:
    """Encode ``key`` as an unencrypted PKCS#8 ``PRIVATE KEY`` PEM block."""
    return key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )


def load_private_key(pem: bytes | str) -> PrivateKey:
    """Decode a PKCS#8 ``PRIVATE KEY`` or SEC1 ``EC PRIVATE KEY`` PEM block.

    Raises :class:`KeyFormatError` for anything else: other PEM labels, encrypted keys,
    RSA keys, or curves other than P-256.
    """
    data = pem.encode() if isinstance(pem, str) else pem
    if not any(label in data for label in _PRIVATE_KEY_LABELS):
        raise KeyFormatError("data does not contain a PRIVATE KEY or EC PRIVATE KEY PEM block")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as err:
        # The library's message can quote the offending bytes, so it is not passed on.
        raise KeyFormatError("private key PEM could not be decoded") from err
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not _is_p256(key.curve):
        raise KeyFormatError("private key is not an ECDSA P-256 key")
    return key


def public_key_to_pem(key: PublicKey) -> bytes:
    """Encode ``key`` as a ``PUBLIC KEY`` (SubjectPublicKeyInfo) PEM block."""
    return key.public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )


def load_public_key(pem: bytes | str) -> PublicKey:
    """Decode a ``PUBLIC KEY`` PEM block holding an ECDSA P-256 key.

    Raises :class:`KeyFormatError` for anything else.
    """
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as err:
        raise KeyFormatError("public key PEM could not be decoded") from err
    if not isinstance(key, ec.EllipticCurvePublicKey) or not _is_p256(key.curve):
        raise KeyFormatError("public key is not an ECDSA P-256 key")
    return key


def public_key_der(key: PublicKeyTypes) -> bytes:
    """Return the DER SubjectPublicKeyInfo of any public key (the bytes fingerprints hash)."""
    return key.public_bytes(
        encoding=serialization.Encoding.DER,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )


def fingerprint(key: PublicKeyTypes) -> str:
    """Return the lowercase hex SHA-256 of the key's DER SubjectPublicKeyInfo.

    Accepts any public key type, because CSRs sent by other clients may carry RSA keys
    and callers still need to compare them (for example to spot a reused key).
    """
    return hashlib.sha256(public_key_der(key)).hexdigest()


def _is_p256(curve: ec.EllipticCurve) -> bool:
    return isinstance(curve, ec.SECP256R1)
