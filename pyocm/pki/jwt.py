"""Service-account tokens as the TokenRequest API issues them: ES256-signed JWTs.

Tokens carry ``iss``, ``sub`` (``system:serviceaccount:<ns>:<name>``), ``aud`` (always a
list), ``exp``, ``iat``, ``nbf``, ``jti`` and the private ``kubernetes.io`` claim with the
namespace, the service account's name and uid, and optionally the Pod, Secret or Node
the token is bound to. Claims are serialised with sorted keys, as go-jose does, and the
header is ``{"alg":"ES256","kid":...}`` where the key id is the unpadded base64url
SHA-256 of the signing key's DER SubjectPublicKeyInfo, as the kube-apiserver derives it.

Verification follows the kube-apiserver: signature (ES256 only), then issuer, then the
time claims with go-jose's one-minute leeway, then the ``kubernetes.io`` claims, then
(optionally) the audiences. Each failure raises :class:`TokenError` with a ``kind`` the
authenticator can branch on and Kubernetes' message where Kubernetes has one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

from pyocm.pki import keys

ALGORITHM = "ES256"
LEEWAY = timedelta(minutes=1)
"""go-jose's ``jwt.DefaultLeeway``, which the kube-apiserver validates with."""

BOUND_KINDS = ("Pod", "Secret", "Node")

_COORDINATE_BYTES = 32
_BASE64URL = re.compile(r"^[A-Za-z0-9_-]*$")

FailureKind = Literal[
    "malformed",
    "algorithm",
    "signature",
    "issuer",
    "expired",
    "not_yet_valid",
    "issued_in_future",
    "claims",
    "audience",
]


class TokenError(Exception):
    """A token was refused; ``kind`` says which check failed."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind


@dataclass(frozen=True)
class BoundObject:
    """The object a token is bound to (TokenRequest ``spec.boundObjectRef``)."""

    kind: str
    name: str
    uid: str


@dataclass(frozen=True)
class TokenClaims:
    """The verified claims of a service-account token."""

    issuer: str
    subject: str
    audiences: tuple[str, ...]
    expires_at: datetime | None
    issued_at: datetime | None
    not_before: datetime | None
    token_id: str | None
    namespace: str
    service_account_name: str
    service_account_uid: str
    bound_object: BoundObject | None = None


def service_account_username(namespace: str, name: str) -> str:
    """The user name Kubernetes gives a service account."""
    return f"system:serviceaccount:{namespace}:{name}"


def key_id(public_key: keys.PublicKey) -> str:
    """The ``kid`` header for tokens signed by the matching private key."""
    return _b64encode(hashlib.sha256(keys.public_key_der(public_key)).digest())


def issue_token(
    key: keys.PrivateKey,
    *,
    issuer: str,
    namespace: str,
    name: str,
    uid: str,
    audiences: Sequence[str],
    expiration_seconds: int,
    now: datetime,
    bound_object: BoundObject | None = None,
) -> str:
    """Return a signed token valid from ``now`` for ``expiration_seconds``.

    The caller applies TokenRequest's own rules first (at least 600 seconds, the
    server's default audiences when the request names none).
    """
    if expiration_seconds <= 0:
        raise ValueError("expiration_seconds must be positive")
    if not audiences:
        raise ValueError("a token needs at least one audience")
    issued = int(_aware(now).timestamp())
    claims = {
        "aud": list(audiences),
        "exp": issued + expiration_seconds,
        "iat": issued,
        "iss": issuer,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": _private_claims(
            namespace=namespace, name=name, uid=uid, bound_object=bound_object
        ),
        "nbf": issued,
        "sub": service_account_username(namespace, name),
    }
    return _sign(key, claims)


def peek_issuer(token: str) -> str | None:
    """The unverified ``iss`` of a token, or None when it does not look like a JWT.

    The kube-apiserver uses this to decide whether a bearer token is a service-account
    token at all before spending a signature check on it.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = _decode_json(parts[1])
    except TokenError:
        return None
    issuer = payload.get("iss")
    return issuer if isinstance(issuer, str) else None


def verify_token(
    public_key: keys.PublicKey,
    token: str,
    *,
    issuer: str,
    now: datetime,
    audiences: Sequence[str] | None = None,
) -> TokenClaims:
    """Check ``token`` and return its claims, or raise :class:`TokenError`.

    When ``audiences`` is given the token must name at least one of them.
    """
    moment = _aware(now)
    payload = _verified_payload(public_key, token)
    if payload.get("iss") != issuer:
        raise TokenError("issuer", f"token issuer {_go_quote(payload.get('iss'))} is invalid")
    claims = _claims(payload)
    _check_times(claims, moment)
    _check_service_account(claims)
    if audiences is not None and not set(audiences) & set(claims.audiences):
        raise TokenError(
            "audience",
            f"token audiences {_go_list(claims.audiences)} is invalid for the target "
            f"audiences {_go_list(audiences)}",
        )
    return claims


def _private_claims(
    *, namespace: str, name: str, uid: str, bound_object: BoundObject | None
) -> dict[str, Any]:
    private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
    if bound_object is not None:
        if bound_object.kind not in BOUND_KINDS:
            raise ValueError(f"tokens cannot be bound to a {bound_object.kind}")
        private[bound_object.kind.lower()] = {"name": bound_object.name, "uid": bound_object.uid}
    return private


def _sign(key: keys.PrivateKey, claims: Mapping[str, Any]) -> str:
    """Compact JWS: the DER ECDSA signature becomes the fixed-width r||s JOSE wants."""
    header = {"alg": ALGORITHM, "kid": key_id(key.public_key())}
    signing_input = f"{_encode_json(header)}.{_encode_json(claims)}"
    der = key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
    r, s = utils.decode_dss_signature(der)
    raw = r.to_bytes(_COORDINATE_BYTES, "big") + s.to_bytes(_COORDINATE_BYTES, "big")
    return f"{signing_input}.{_b64encode(raw)}"


def _verified_payload(public_key: keys.PublicKey, token: str) -> Mapping[str, Any]:
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("malformed", "token is not a compact JWS (three dot-separated parts)")
    header = _decode_json(parts[0])
    algorithm = header.get("alg")
    if algorithm != ALGORITHM:
        raise TokenError(
            "algorithm",
            f'unexpected signature algorithm {_go_quote(algorithm)}; expected ["{ALGORITHM}"]',
        )
    payload = _decode_json(parts[1])
    raw = _b64decode(parts[2])
    if len(raw) != 2 * _COORDINATE_BYTES:
        raise TokenError("signature", "invalid signature")
    r = int.from_bytes(raw[:_COORDINATE_BYTES], "big")
    s = int.from_bytes(raw[_COORDINATE_BYTES:], "big")
    signing_input = f"{parts[0]}.{parts[1]}".encode("ascii")
    try:
        public_key.verify(
            utils.encode_dss_signature(r, s), signing_input, ec.ECDSA(hashes.SHA256())
        )
    except InvalidSignature:
        raise TokenError("signature", "invalid signature") from None
    return payload


def _claims(payload: Mapping[str, Any]) -> TokenClaims:
    private = payload.get("kubernetes.io")
    private = private if isinstance(private, Mapping) else {}
    account = private.get("serviceaccount")
    account = account if isinstance(account, Mapping) else {}
    return TokenClaims(
        issuer=str(payload.get("iss")),
        subject=_string(payload, "sub"),
        audiences=_audiences(payload.get("aud")),
        expires_at=_numeric_date(payload, "exp"),
        issued_at=_numeric_date(payload, "iat"),
        not_before=_numeric_date(payload, "nbf"),
        token_id=_string(payload, "jti") or None,
        namespace=_string(private, "namespace"),
        service_account_name=_string(account, "name"),
        service_account_uid=_string(account, "uid"),
        bound_object=_bound_object(private),
    )


def _check_times(claims: TokenClaims, now: datetime) -> None:
    """go-jose's ``ValidateWithLeeway`` order, with the kube-apiserver's messages."""
    if claims.not_before is not None and now + LEEWAY < claims.not_before:
        raise TokenError("not_yet_valid", "service account token is not valid yet")
    if claims.expires_at is not None and now - LEEWAY > claims.expires_at:
        raise TokenError("expired", "service account token has expired")
    if claims.issued_at is not None and now + LEEWAY < claims.issued_at:
        raise TokenError("issued_in_future", "service account token is issued in the future")


def _check_service_account(claims: TokenClaims) -> None:
    if not claims.subject:
        raise TokenError("claims", "sub claim is missing")
    if not claims.namespace:
        raise TokenError("claims", "namespace claim is missing")
    if not claims.service_account_name or not claims.service_account_uid:
        raise TokenError("claims", "serviceaccount claim is missing")
    expected = service_account_username(claims.namespace, claims.service_account_name)
    if claims.subject != expected:
        raise TokenError("claims", "sub claim is invalid")


def _bound_object(private: Mapping[str, Any]) -> BoundObject | None:
    for kind in BOUND_KINDS:
        reference = private.get(kind.lower())
        if isinstance(reference, Mapping):
            return BoundObject(
                kind=kind, name=_string(reference, "name"), uid=_string(reference, "uid")
            )
    return None


def _string(claims: Mapping[str, Any], name: str) -> str:
    value = claims.get(name, "")
    if not isinstance(value, str):
        raise TokenError("malformed", f"claim {name} is not a string")
    return value


def _audiences(value: object) -> tuple[str, ...]:
    # go-jose accepts a single string as well as a list for "aud".
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise TokenError("malformed", "claim aud is not a string or a list of strings")


def _numeric_date(claims: Mapping[str, Any], name: str) -> datetime | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenError("malformed", f"claim {name} is not a number")
    return datetime.fromtimestamp(int(value), UTC)


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("now must be a timezone-aware datetime")
    return now


def _encode_json(value: Mapping[str, Any]) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return _b64encode(text.encode("utf-8"))


def _decode_json(part: str) -> Mapping[str, Any]:
    try:
        value = json.loads(_b64decode(part))
    except (UnicodeDecodeError, ValueError):
        raise TokenError("malformed", "token segment is not valid JSON") from None
    if not isinstance(value, dict):
        raise TokenError("malformed", "token segment is not a JSON object")
    return value


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(part: str) -> bytes:
    """Strict unpadded base64url, as Go's ``RawURLEncoding`` reads it."""
    if not _BASE64URL.match(part) or len(part) % 4 == 1:
        raise TokenError("malformed", "token segment is not unpadded base64url")
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        raise TokenError("malformed", "token segment is not unpadded base64url") from None


def _go_quote(value: object) -> str:
    """A value as Go's ``%q`` prints a string (absent values print as "")."""
    return json.dumps(value if isinstance(value, str) else "")


def _go_list(values: Sequence[str]) -> str:
    """A list of strings as Go's ``%q`` prints a ``[]string``."""
    return "[" + " ".join(json.dumps(value) for value in values) + "]"
