from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

from pyocm.pki import jwt, keys

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
ISSUER = "https://kubernetes.default.svc"
KEY = keys.generate_private_key()


def _b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


ES256_HEADER = _b64url(b'{"alg":"ES256"}')


def _issue(**overrides: Any) -> str:
    options: dict[str, Any] = {
        "issuer": ISSUER,
        "namespace": "open-cluster-management",
        "name": "cluster-bootstrap",
        "uid": "3f1c6a8e-0000-4000-8000-000000000001",
        "audiences": [ISSUER],
        "expiration_seconds": 3600,
        "now": NOW,
    }
    options.update(overrides)
    return jwt.issue_token(KEY, **options)


def _forge(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """Sign arbitrary parts with an independent ES256 implementation."""
    signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    r, s = utils.decode_dss_signature(KEY.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{_b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def _claims(**overrides: Any) -> dict[str, Any]:
    base = int(NOW.timestamp())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "system:serviceaccount:ns:sa",
        "aud": ["api"],
        "exp": base + 3600,
        "iat": base,
        "nbf": base,
        "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "u1"}},
    }
    claims.update(overrides)
    return {key: value for key, value in claims.items() if value is not None}


def test_token_layout() -> None:
    token = _issue()

    header_part, payload_part, _ = token.split(".")
    header = json.loads(_b64url_decode(header_part))
    spki = keys.public_key_der(KEY.public_key())
    assert header == {"alg": "ES256", "kid": _b64url(hashlib.sha256(spki).digest())}
    assert jwt.key_id(KEY.public_key()) == header["kid"]
    payload_json = _b64url_decode(payload_part).decode()
    payload = json.loads(payload_json)
    assert list(payload) == sorted(payload)
    assert " " not in payload_json
    jti = payload.pop("jti")
    assert len(jti) == 36
    assert payload == {
        "aud": [ISSUER],
        "exp": int(NOW.timestamp()) + 3600,
        "iat": int(NOW.timestamp()),
        "iss": ISSUER,
        "kubernetes.io": {
            "namespace": "open-cluster-management",
            "serviceaccount": {
                "name": "cluster-bootstrap",
                "uid": "3f1c6a8e-0000-4000-8000-000000000001",
            },
        },
        "nbf": int(NOW.timestamp()),
        "sub": "system:serviceaccount:open-cluster-management:cluster-bootstrap",
    }
    assert "=" not in token


def test_signature_is_raw_r_and_s() -> None:
    token = _issue()
    header_part, payload_part, signature_part = token.split(".")

    raw = _b64url_decode(signature_part)

    assert len(raw) == 64
    der = utils.encode_dss_signature(
        int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
    )
    KEY.public_key().verify(
        der, f"{header_part}.{payload_part}".encode(), ec.ECDSA(hashes.SHA256())
    )


def test_round_trip() -> None:
    token = _issue(audiences=[ISSUER, "pyocm"])

    claims = jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert claims == jwt.TokenClaims(
        issuer=ISSUER,
        subject="system:serviceaccount:open-cluster-management:cluster-bootstrap",
        audiences=(ISSUER, "pyocm"),
        expires_at=NOW + timedelta(hours=1),
        issued_at=NOW,
        not_before=NOW,
        token_id=claims.token_id,
        namespace="open-cluster-management",
        service_account_name="cluster-bootstrap",
        service_account_uid="3f1c6a8e-0000-4000-8000-000000000001",
        bound_object=None,
    )
    assert claims.token_id is not None


def test_tokens_get_distinct_ids() -> None:
    first = jwt.verify_token(KEY.public_key(), _issue(), issuer=ISSUER, now=NOW)
    second = jwt.verify_token(KEY.public_key(), _issue(), issuer=ISSUER, now=NOW)

    assert first.token_id != second.token_id


def test_bound_object_round_trip() -> None:
    pod = jwt.BoundObject(kind="Pod", name="agent-0", uid="pod-uid")
    token = _issue(bound_object=pod)

    payload = json.loads(_b64url_decode(token.split(".")[1]))
    assert payload["kubernetes.io"]["pod"] == {"name": "agent-0", "uid": "pod-uid"}
    claims = jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)
    assert claims.bound_object == pod


@pytest.mark.parametrize(
    ("offset", "kind", "message"),
    [
        pytest.param(
            timedelta(hours=1, seconds=61),
            "expired",
            "service account token has expired",
            id="expired-beyond-leeway",
        ),
        pytest.param(
            -timedelta(seconds=61),
            "not_yet_valid",
            "service account token is not valid yet",
            id="not-yet-valid-beyond-leeway",
        ),
    ],
)
def test_time_failures(offset: timedelta, kind: str, message: str) -> None:
    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), _issue(), issuer=ISSUER, now=NOW + offset)

    assert caught.value.kind == kind
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(timedelta(hours=1, seconds=60), id="expiry-within-leeway"),
        pytest.param(-timedelta(seconds=60), id="not-before-within-leeway"),
    ],
)
def test_one_minute_leeway_like_go_jose(offset: timedelta) -> None:
    claims = jwt.verify_token(KEY.public_key(), _issue(), issuer=ISSUER, now=NOW + offset)

    assert claims.namespace == "open-cluster-management"


def test_issued_in_the_future() -> None:
    future = int(NOW.timestamp()) + 120
    token = _forge({"alg": "ES256"}, _claims(iat=future, nbf=None))

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert caught.value.kind == "issued_in_future"
    assert str(caught.value) == "service account token is issued in the future"


def test_signature_from_another_key_is_refused() -> None:
    other = keys.generate_private_key()
    token = jwt.issue_token(
        other,
        issuer=ISSUER,
        namespace="ns",
        name="sa",
        uid="u",
        audiences=["api"],
        expiration_seconds=600,
        now=NOW,
    )

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert (caught.value.kind, str(caught.value)) == ("signature", "invalid signature")


def test_tampered_payload_is_refused() -> None:
    header, _, signature = _issue().split(".")
    payload = _b64url(json.dumps(_claims(sub="system:serviceaccount:ns:admin")).encode())

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(
            KEY.public_key(), f"{header}.{payload}.{signature}", issuer=ISSUER, now=NOW
        )

    assert caught.value.kind == "signature"


def test_truncated_signature_is_refused() -> None:
    header, payload, signature = _issue().split(".")
    short = _b64url(_b64url_decode(signature)[:63])

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), f"{header}.{payload}.{short}", issuer=ISSUER, now=NOW)

    assert caught.value.kind == "signature"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        pytest.param(
            {"alg": "HS256"},
            'unexpected signature algorithm "HS256"; expected ["ES256"]',
            id="hs256",
        ),
        pytest.param(
            {"alg": "none"}, 'unexpected signature algorithm "none"; expected ["ES256"]', id="none"
        ),
        pytest.param({}, 'unexpected signature algorithm ""; expected ["ES256"]', id="missing"),
    ],
)
def test_wrong_algorithm_is_refused(header: dict[str, Any], message: str) -> None:
    token = _forge(header, _claims())

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert (caught.value.kind, str(caught.value)) == ("algorithm", message)


def test_wrong_issuer_is_refused() -> None:
    token = _issue(issuer="https://elsewhere")

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert caught.value.kind == "issuer"
    assert str(caught.value) == 'token issuer "https://elsewhere" is invalid'


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("", id="empty"),
        pytest.param("a.b", id="two-parts"),
        pytest.param("a.b.c.d", id="four-parts"),
        pytest.param("!!!.e30.AAAA", id="bad-base64"),
        pytest.param("e30=.e30.AAAA", id="padded-base64"),
        pytest.param(f"{_b64url(b'not json')}.e30.AAAA", id="header-not-json"),
        pytest.param(f"{_b64url(b'[1]')}.e30.AAAA", id="header-not-object"),
        pytest.param(f"{ES256_HEADER}.é30.AAAA", id="payload-not-ascii"),
        pytest.param(f"{ES256_HEADER}.e30.A", id="signature-bad-length"),
    ],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert caught.value.kind == "malformed"


@pytest.mark.parametrize(
    ("claims", "kind", "message"),
    [
        pytest.param(_claims(exp="soon"), "malformed", "claim exp is not a number", id="exp-text"),
        pytest.param(_claims(exp=True), "malformed", "claim exp is not a number", id="exp-bool"),
        pytest.param(
            _claims(aud=[1]),
            "malformed",
            "claim aud is not a string or a list of strings",
            id="aud",
        ),
        pytest.param(_claims(sub=None), "claims", "sub claim is missing", id="no-sub"),
        pytest.param(
            _claims(**{"kubernetes.io": {"serviceaccount": {"name": "sa", "uid": "u1"}}}),
            "claims",
            "namespace claim is missing",
            id="no-namespace",
        ),
        pytest.param(
            _claims(**{"kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa"}}}),
            "claims",
            "serviceaccount claim is missing",
            id="no-uid",
        ),
        pytest.param(
            _claims(sub="system:serviceaccount:ns:other"),
            "claims",
            "sub claim is invalid",
            id="sub-mismatch",
        ),
    ],
)
def test_bad_claims_are_refused(claims: dict[str, Any], kind: str, message: str) -> None:
    token = _forge({"alg": "ES256"}, claims)

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW)

    assert (caught.value.kind, str(caught.value)) == (kind, message)


def test_single_string_audience_is_accepted() -> None:
    token = _forge({"alg": "ES256", "kid": "x"}, _claims(aud="api"))

    claims = jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW, audiences=["api"])

    assert claims.audiences == ("api",)


def test_audience_mismatch_is_refused() -> None:
    token = _issue(audiences=["a"])

    with pytest.raises(jwt.TokenError) as caught:
        jwt.verify_token(KEY.public_key(), token, issuer=ISSUER, now=NOW, audiences=["b", "c"])

    assert caught.value.kind == "audience"
    assert (
        str(caught.value) == 'token audiences ["a"] is invalid for the target audiences ["b" "c"]'
    )


def test_peek_issuer() -> None:
    assert jwt.peek_issuer(_issue(issuer="https://x")) == "https://x"
    assert jwt.peek_issuer("opaque-token") is None
    assert jwt.peek_issuer("a.!!!.c") is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"expiration_seconds": 0}, "must be positive", id="zero-expiry"),
        pytest.param({"audiences": []}, "at least one audience", id="no-audience"),
        pytest.param(
            {"bound_object": jwt.BoundObject(kind="ConfigMap", name="c", uid="u")},
            "cannot be bound to a ConfigMap",
            id="bad-bound-kind",
        ),
        pytest.param({"now": datetime(2026, 1, 1)}, "timezone-aware", id="naive-now"),
    ],
)
def test_issue_refuses(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _issue(**overrides)
