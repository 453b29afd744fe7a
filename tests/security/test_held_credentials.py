"""Bad credentials are refused, never taken for anonymous: certificates the hub's CA did
not sign or that are out of date, and bearer tokens that are malformed, wrong, expired,
revoked or forged. Every bad token is tried on ``kube-public/cluster-info``, which an
anonymous caller may read: a 200 there would mean the credential fell back to anonymous."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.x509.oid import NameOID

from pyocm.pki import jwt, keys
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration import bootstraptoken
from pyocm.testing import Client, HubProcess
from tests.security.conftest import TLS_FAILURES, Caller, is_unauthorized

CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
SECRETS = "/api/v1/namespaces/kube-system/secrets"
REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW_BODY = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
ISSUER = "https://kubernetes.default.svc.cluster.local"
MASTERS = ("system:masters",)

# ---------------------------------------------------------------- client certificates


def _write(folder: Path, name: str, cert: bytes, key: bytes) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.crt").write_bytes(cert)
    (folder / f"{name}.key").write_bytes(key)
    return folder / f"{name}.crt", folder / f"{name}.key"


def _impostor_ca(hub: HubProcess) -> CertificateAuthority:
    """A CA with the hub CA's very subject name and a key of its own."""
    real = x509.load_pem_x509_certificate(hub.ca_pem)
    name = real.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return CertificateAuthority.create(str(name), valid_for=timedelta(days=1))


def _bad_certificate(hub: HubProcess, case: str) -> tuple[bytes, bytes]:
    now = datetime.now(UTC)
    if case == "unknown CA":
        ca = CertificateAuthority.create("someone-else", valid_for=timedelta(days=1))
        return ca.issue_client(common_name="admin", organizations=MASTERS, valid_for=timedelta(hours=1))
    if case == "CA with the hub CA's name":
        return _impostor_ca(hub).issue_client(
            common_name="admin", organizations=MASTERS, valid_for=timedelta(hours=1)
        )
    if case == "expired":
        return hub.ca().issue_client(
            common_name="admin",
            organizations=MASTERS,
            valid_for=timedelta(hours=1),
            now=now - timedelta(days=2),
        )
    if case == "not yet valid":
        return hub.ca().issue_client(
            common_name="admin",
            organizations=MASTERS,
            valid_for=timedelta(hours=1),
            now=now + timedelta(days=2),
        )
    if case == "the hub's serving certificate":
        pki = hub.data_dir / "pki"
        return (pki / "serving.crt").read_bytes(), (pki / "serving.key").read_bytes()
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "unknown CA",
        "CA with the hub CA's name",
        "expired",
        "not yet valid",
        "the hub's serving certificate",
    ],
)
async def test_a_bad_client_certificate_is_never_served(
    hub: HubProcess, tmp_path: Path, case: str
) -> None:
    """Refused at the TLS layer or with 401; either way no data, and never anonymous."""
    cert, key = _bad_certificate(hub, case)
    caller = Caller(hub, cert=_write(tmp_path, "bad", cert, key))
    try:
        for path in (SECRETS, CLUSTER_INFO):
            try:
                code, body = await caller.request("GET", path)
            except TLS_FAILURES:
                continue
            assert is_unauthorized(code, body), (path, code, body)
    finally:
        await caller.close()


def _self_signed_admin() -> tuple[bytes, bytes]:
    """A self-signed client certificate naming the hub's admin: no CA at all."""
    key = keys.generate_private_key()
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, MASTERS[0]),
            x509.NameAttribute(NameOID.COMMON_NAME, "admin"),
        ]
    )
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), keys.private_key_to_pem(key)


def _untrusted_certificate(hub: HubProcess, case: str) -> tuple[bytes, bytes]:
    if case == "self-signed":
        return _self_signed_admin()
    return _bad_certificate(hub, case)


@pytest.mark.parametrize(
    "case", ["expired", "not yet valid", "unknown CA", "CA with the hub CA's name", "self-signed"]
)
async def test_an_untrusted_certificate_gets_401_not_a_reset_handshake(
    hub: HubProcess, tmp_path: Path, case: str
) -> None:
    """As kube-apiserver, which requests the certificate and verifies it in its x509
    authenticator: the handshake completes and every request is answered Unauthorized,
    never with data and never as anonymous (cluster-info and /version are public). An
    agent can tell it must bootstrap again, where a reset only says EOF."""
    cert, key = _untrusted_certificate(hub, case)
    caller = Caller(hub, cert=_write(tmp_path, "stranger", cert, key))
    try:
        for path in (SECRETS, CLUSTER_INFO, "/version"):
            code, body = await caller.request("GET", path)
            if path == "/version":
                assert code == 401, (path, code, body)
            else:
                assert is_unauthorized(code, body), (path, code, body)
        code, body = await caller.request("POST", REVIEW, body=REVIEW_BODY)
        assert is_unauthorized(code, body), (code, body)
    finally:
        await caller.close()


@pytest.mark.parametrize("case", ["unknown CA", "CA with the hub CA's name", "expired"])
async def test_a_failed_certificate_with_a_valid_token_is_the_token_user(
    hub: HubProcess, admin: Client, tmp_path: Path, unique: str, case: str
) -> None:
    """kube's union of authenticators: the certificate fails, the bearer token then
    authenticates the request; never the certificate's user."""
    await _service_account(admin, f"union-{unique}")
    token = await _requested_token(admin, f"union-{unique}")
    cert, key = _bad_certificate(hub, case)
    caller = Caller(hub, cert=_write(tmp_path, "stranger", cert, key), authorization=f"Bearer {token}")
    try:
        code, body = await caller.request("POST", REVIEW, body=REVIEW_BODY)
        assert code == 201, (code, body)
        assert body["status"]["userInfo"]["username"] == f"system:serviceaccount:default:union-{unique}"
        assert "system:masters" not in body["status"]["userInfo"].get("groups", [])
    finally:
        await caller.close()


async def test_a_good_certificate_from_the_hub_ca_authenticates(
    hub: HubProcess, tmp_path: Path
) -> None:
    """The control for the cases above: the same request with a valid certificate is
    authenticated (and, for a user nobody bound, forbidden)."""
    cert, key = hub.ca().issue_client(common_name="nobody-special", valid_for=timedelta(hours=1))
    caller = Caller(hub, cert=_write(tmp_path, "good", cert, key))
    try:
        code, body = await caller.request("POST", REVIEW, body=REVIEW_BODY)
        assert code == 201 and body["status"]["userInfo"]["username"] == "nobody-special"
        assert (await caller.request("GET", SECRETS))[0] == 403
    finally:
        await caller.close()


# ---------------------------------------------------------------- bearer tokens

TokenMaker = Callable[[HubProcess, Client, str], Awaitable[str]]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_json(value: Any) -> str:
    return _b64url(json.dumps(value, separators=(",", ":")).encode())


async def _bootstrap(admin: Client, **changes: Any) -> bootstraptoken.BootstrapToken:
    """A bootstrap token whose Secret is created with ``changes`` (None drops a key)."""
    token = bootstraptoken.generate()
    secret = bootstraptoken.token_secret(token, now=datetime.now(UTC))
    namespace = changes.pop("namespace", "kube-system")
    secret["metadata"]["namespace"] = namespace
    if "type" in changes:
        secret["type"] = changes.pop("type")
    for key, value in changes.items():
        if value is None:
            secret["stringData"].pop(key)
        else:
            secret["stringData"][key] = value
    code, out = await admin.post(f"/api/v1/namespaces/{namespace}/secrets", secret)
    assert code == 201, out
    return token


async def _service_account(admin: Client, name: str) -> str:
    """Create service account ``default/<name>``; answer its uid."""
    code, sa = await admin.post("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": name}})
    assert code == 201, sa
    return str(sa["metadata"]["uid"])


async def _requested_token(admin: Client, name: str) -> str:
    code, answer = await admin.post(
        f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    assert code == 201, answer
    return str(answer["status"]["token"])


def _hub_key(hub: HubProcess) -> keys.PrivateKey:
    return keys.load_private_key((hub.data_dir / "pki" / "sa.key").read_bytes())


def _signed(hub: HubProcess, uid: str, name: str, **overrides: Any) -> str:
    """A token as TokenRequest would issue it, with ``overrides`` to the signing call."""
    args: dict[str, Any] = {
        "issuer": ISSUER,
        "namespace": "default",
        "name": name,
        "uid": uid,
        "audiences": [ISSUER],
        "expiration_seconds": 3600,
        "now": datetime.now(UTC),
    }
    args.update(overrides)
    key = args.pop("key", None) or _hub_key(hub)
    return jwt.issue_token(key, **args)


async def _wrong_secret(hub: HubProcess, admin: Client, unique: str) -> str:
    token = await _bootstrap(admin)
    return f"{token.id}.{'x' * 16}"


async def _expired_bootstrap(hub: HubProcess, admin: Client, unique: str) -> str:
    past = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(await _bootstrap(admin, expiration=past))


async def _deleted_bootstrap(hub: HubProcess, admin: Client, unique: str) -> str:
    token = await _bootstrap(admin)
    async with Client(hub.token_kubeconfig(f"bt-{unique}", str(token))) as client:
        assert (await client.post(REVIEW, REVIEW_BODY))[0] == 201, "valid until deleted"
    code, _ = await admin.delete(f"{SECRETS}/{token.secret_name}")
    assert code == 200
    return str(token)


async def _not_for_authentication(hub: HubProcess, admin: Client, unique: str) -> str:
    return str(await _bootstrap(admin, **{"usage-bootstrap-authentication": None}))


async def _masters_extra_group(hub: HubProcess, admin: Client, unique: str) -> str:
    """kube refuses a bootstrap token whose extra groups leave ``system:bootstrappers:``."""
    return str(await _bootstrap(admin, **{"auth-extra-groups": "system:masters"}))


async def _secret_elsewhere(hub: HubProcess, admin: Client, unique: str) -> str:
    return str(await _bootstrap(admin, namespace="default"))


async def _not_a_bootstrap_secret(hub: HubProcess, admin: Client, unique: str) -> str:
    return str(await _bootstrap(admin, type="Opaque"))


async def _deleted_service_account(hub: HubProcess, admin: Client, unique: str) -> str:
    await _service_account(admin, unique)
    token = await _requested_token(admin, unique)
    async with Client(hub.token_kubeconfig(f"sa-{unique}", token)) as client:
        assert (await client.post(REVIEW, REVIEW_BODY))[0] == 201, "valid until deleted"
    assert (await admin.delete(f"/api/v1/namespaces/default/serviceaccounts/{unique}"))[0] == 200
    return token


async def _recreated_service_account(hub: HubProcess, admin: Client, unique: str) -> str:
    """The old token names the old uid; a new account of the same name is someone else."""
    token = await _deleted_service_account(hub, admin, unique)
    await _service_account(admin, unique)
    fresh = await _requested_token(admin, unique)
    async with Client(hub.token_kubeconfig(f"sa2-{unique}", fresh)) as client:
        assert (await client.post(REVIEW, REVIEW_BODY))[0] == 201, "the new account's token works"
    return token


async def _another_key(hub: HubProcess, admin: Client, unique: str) -> str:
    uid = await _service_account(admin, unique)
    return _signed(hub, uid, unique, key=keys.generate_private_key())


async def _alg_none(hub: HubProcess, admin: Client, unique: str) -> str:
    uid = await _service_account(admin, unique)
    genuine = _signed(hub, uid, unique)
    _, payload, _ = genuine.split(".")
    return f"{_b64url_json({'alg': 'none', 'typ': 'JWT'})}.{payload}."


async def _hs256_with_public_key(hub: HubProcess, admin: Client, unique: str) -> str:
    """The key-confusion attack: HMAC keyed with the public verification key."""
    uid = await _service_account(admin, unique)
    _, payload, _ = _signed(hub, uid, unique).split(".")
    header = _b64url_json({"alg": "HS256", "typ": "JWT"})
    mac = hmac.HMAC(keys.public_key_to_pem(_hub_key(hub).public_key()), hashes.SHA256())
    mac.update(f"{header}.{payload}".encode())
    return f"{header}.{payload}.{_b64url(mac.finalize())}"


async def _tampered_payload(hub: HubProcess, admin: Client, unique: str) -> str:
    """A genuine signature over one account's claims, with the claims swapped for another's."""
    await _service_account(admin, unique)
    genuine = await _requested_token(admin, unique)
    header, payload, signature = genuine.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "system:serviceaccount:kube-system:default"
    claims["kubernetes.io"]["namespace"] = "kube-system"
    return f"{header}.{_b64url_json(claims)}.{signature}"


async def _expired_jwt(hub: HubProcess, admin: Client, unique: str) -> str:
    uid = await _service_account(admin, unique)
    return _signed(
        hub, uid, unique, now=datetime.now(UTC) - timedelta(hours=3), expiration_seconds=3600
    )


async def _other_issuer(hub: HubProcess, admin: Client, unique: str) -> str:
    uid = await _service_account(admin, unique)
    return _signed(hub, uid, unique, issuer="https://somewhere.else.example")


async def _uid_of_nobody(hub: HubProcess, admin: Client, unique: str) -> str:
    await _service_account(admin, unique)
    return _signed(hub, "00000000-0000-0000-0000-000000000000", unique)


BAD_TOKENS: dict[str, TokenMaker] = {
    "bootstrap token with a wrong secret": _wrong_secret,
    "expired bootstrap token": _expired_bootstrap,
    "bootstrap token whose secret was deleted": _deleted_bootstrap,
    "bootstrap token not for authentication": _not_for_authentication,
    "bootstrap token claiming system:masters": _masters_extra_group,
    "bootstrap secret outside kube-system": _secret_elsewhere,
    "bootstrap secret of another type": _not_a_bootstrap_secret,
    "service-account token of a deleted account": _deleted_service_account,
    "service-account token of a recreated account": _recreated_service_account,
    "JWT signed by another key": _another_key,
    "JWT with alg none": _alg_none,
    "JWT HS256 keyed with the public key": _hs256_with_public_key,
    "JWT with a swapped payload": _tampered_payload,
    "expired JWT signed by the hub": _expired_jwt,
    "JWT from another issuer signed by the hub": _other_issuer,
    "JWT for a uid that does not exist": _uid_of_nobody,
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
async def test_a_bad_token_is_401_never_anonymous(
    hub: HubProcess, admin: Client, unique: str, case: str
) -> None:
    token = await BAD_TOKENS[case](hub, admin, unique)
    await _assert_refused(hub, f"Bearer {token}")


MALFORMED = [
    "Bearer",
    "Bearer ",
    "Bearer not-a-token",
    "Bearer a.b.c",
    "Bearer ..",
    "Bearer abcdef.0123456789abcdef",
    "Bearer ABCDEF.0123456789ABCDEF",
    "Bearer " + "x" * 8000,
    "Basic YWRtaW46YWRtaW4=",
    "Token abcdef.0123456789abcdef",
]


@pytest.mark.parametrize("authorization", MALFORMED, ids=lambda a: a[:30])
async def test_a_malformed_authorization_header_is_401(hub: HubProcess, authorization: str) -> None:
    await _assert_refused(hub, authorization)


async def _assert_refused(hub: HubProcess, authorization: str) -> None:
    caller = Caller(hub, authorization=authorization)
    try:
        for method, path, body in (
            ("GET", CLUSTER_INFO, None),
            ("GET", SECRETS, None),
            ("POST", REVIEW, REVIEW_BODY),
        ):
            code, answer = await caller.request(method, path, body=body)
            assert is_unauthorized(code, answer), (method, path, code, answer)
    finally:
        await caller.close()
