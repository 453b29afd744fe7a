"""Service-account tokens are only as good as what they were issued for: a token minted
for another audience does not authenticate to the hub, and a token bound to an object
stops working once that object is gone, replaced or being deleted (kube-apiserver's
``--api-audiences`` and ``serviceaccount.validator``)."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from pyocm.apiserver.authentication.authenticator import Authenticator
from pyocm.apiserver.registry import codec
from pyocm.apiserver.storage.backends import open_backend
from pyocm.apiserver.storage.interface import Backend
from pyocm.kube import status, timefmt
from pyocm.pki import jwt, keys
from pyocm.registration import bootstraptoken
from pyocm.testing import Client, HubProcess
from tests.security.conftest import Caller, is_unauthorized

ISSUER = "https://kubernetes.default.svc.cluster.local"
REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW_BODY = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SECRETS = "/api/v1/namespaces/default/secrets"
NODES = "/api/v1/nodes"


def kubectl(
    hub: HubProcess, *args: str, kubeconfig: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/usr/bin/kubectl", f"--kubeconfig={kubeconfig or hub.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def create_token(hub: HubProcess, account: str, *options: str) -> str:
    done = kubectl(hub, "create", "token", account, *options)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def whoami(hub: HubProcess, token: str) -> subprocess.CompletedProcess[str]:
    """``kubectl auth whoami`` with nothing but the token and the hub's CA."""
    return kubectl(
        hub,
        f"--server={hub.url}",
        f"--certificate-authority={hub.data_dir / 'pki' / 'ca.crt'}",
        f"--token={token}",
        "auth",
        "whoami",
        "-o",
        "json",
        kubeconfig=Path("/dev/null"),
    )


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


async def authenticates(hub: HubProcess, token: str) -> bool:
    """True when the hub takes ``token`` for its service account; False on a 401."""
    caller = Caller(hub, authorization=f"Bearer {token}")
    try:
        code, body = await caller.request("POST", REVIEW, body=REVIEW_BODY)
    finally:
        await caller.close()
    if code == 201:
        return True
    assert is_unauthorized(code, body), (code, body)
    return False


async def request_token(admin: Client, account: str, spec: dict[str, Any]) -> tuple[int, Any]:
    return await admin.post(
        f"/api/v1/namespaces/default/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
    )


async def token_review(admin: Client, token: str, audiences: list[str] | None = None) -> Any:
    spec: dict[str, Any] = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    code, review = await admin.post(
        TOKEN_REVIEWS,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec},
    )
    assert code == 201, review
    return review["status"]


async def create_account(admin: Client, name: str) -> None:
    code, out = await admin.post(
        "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": name}}
    )
    assert code == 201, out


async def create_secret(admin: Client, name: str, **metadata: Any) -> str:
    code, out = await admin.post(SECRETS, {"metadata": {"name": name, **metadata}})
    assert code == 201, out
    return str(out["metadata"]["uid"])


async def create_node(admin: Client, name: str) -> str:
    code, out = await admin.post(NODES, {"metadata": {"name": name}})
    assert code == 201, out
    return str(out["metadata"]["uid"])


# ------------------------------------------------------------------------ audiences


async def test_a_token_for_another_audience_is_refused(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    """The reported reproduction: a token minted for Vault is no key to the hub."""
    assert kubectl(hub, "create", "serviceaccount", unique).returncode == 0
    token = create_token(hub, unique, "--audience", "vault")
    assert claims_of(token)["aud"] == ["vault"]
    refused = whoami(hub, token)
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr, refused.stdout
    assert not await authenticates(hub, token)


async def test_tokens_for_the_api_audience_are_accepted(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    """No audience means the API's; naming the API among others is enough."""
    await create_account(admin, unique)
    code, answer = await request_token(admin, unique, {})
    assert code == 201, answer
    assert answer["spec"]["audiences"] == [ISSUER]
    default = answer["status"]["token"]
    assert claims_of(default)["aud"] == [ISSUER]
    shared = create_token(hub, unique, "--audience", "vault", "--audience", ISSUER)
    for token in (default, shared):
        accepted = whoami(hub, token)
        assert accepted.returncode == 0, accepted.stderr
        user = json.loads(accepted.stdout)["status"]["userInfo"]
        assert user["username"] == f"system:serviceaccount:default:{unique}"


async def test_token_review_checks_the_audiences_it_is_asked_about(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    """As kube's TokenReview: the reviewer's audiences (default: the API's) must meet the
    token's, and the answer names the audiences they share."""
    await create_account(admin, unique)
    vault = create_token(hub, unique, "--audience", "vault")
    api = create_token(hub, unique)
    assert (await token_review(admin, vault))["authenticated"] is False
    reviewed = await token_review(admin, vault, ["vault", "other"])
    assert reviewed["authenticated"] is True and reviewed["audiences"] == ["vault"]
    assert reviewed["user"]["username"] == f"system:serviceaccount:default:{unique}"
    assert (await token_review(admin, api, ["vault"]))["authenticated"] is False
    reviewed = await token_review(admin, api)
    assert reviewed["authenticated"] is True and reviewed["audiences"] == [ISSUER]


async def test_bootstrap_tokens_have_only_the_api_audience(hub: HubProcess, admin: Client) -> None:
    token = bootstraptoken.generate()
    secret = bootstraptoken.token_secret(token, now=datetime.now(UTC), ttl=timedelta(hours=1))
    code, out = await admin.post("/api/v1/namespaces/kube-system/secrets", secret)
    assert code == 201, out
    assert (await token_review(admin, str(token), ["vault"]))["authenticated"] is False
    reviewed = await token_review(admin, str(token), [ISSUER])
    assert reviewed["authenticated"] is True and reviewed["audiences"] == [ISSUER]


# -------------------------------------------------------------------- bound objects


async def test_a_secret_bound_token_dies_with_the_secret(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    """The reported reproduction, then the same name recreated (a new uid)."""
    await create_account(admin, unique)
    uid = await create_secret(admin, unique)
    token = create_token(
        hub,
        unique,
        "--bound-object-kind",
        "Secret",
        "--bound-object-name",
        unique,
        "--bound-object-uid",
        uid,
    )
    assert claims_of(token)["kubernetes.io"]["secret"] == {"name": unique, "uid": uid}
    assert whoami(hub, token).returncode == 0
    assert (await admin.delete(f"{SECRETS}/{unique}"))[0] == 200
    refused = whoami(hub, token)
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr
    await create_secret(admin, unique)
    assert not await authenticates(hub, token)


async def test_binding_without_a_uid_binds_to_the_current_object(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    await create_account(admin, unique)
    uid = await create_secret(admin, unique)
    code, answer = await request_token(
        admin, unique, {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": unique}}
    )
    assert code == 201, answer
    assert answer["spec"]["boundObjectRef"] == {
        "kind": "Secret",
        "apiVersion": "v1",
        "name": unique,
    }
    token = answer["status"]["token"]
    assert claims_of(token)["kubernetes.io"]["secret"] == {"name": unique, "uid": uid}
    assert await authenticates(hub, token)
    assert (await admin.delete(f"{SECRETS}/{unique}"))[0] == 200
    assert not await authenticates(hub, token)


async def test_a_secret_being_deleted_keeps_its_tokens_for_the_leeway(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    """kube counts an object as gone once its deletionTimestamp is a minute old (see the
    unit-level test below); a fresh deletion does not cut tokens off at once."""
    await create_account(admin, unique)
    await create_secret(admin, unique, finalizers=["example.com/hold"])
    token = create_token(
        hub, unique, "--bound-object-kind", "Secret", "--bound-object-name", unique
    )
    assert (await admin.delete(f"{SECRETS}/{unique}"))[0] == 200
    assert await authenticates(hub, token)
    code, out = await admin.patch(f"{SECRETS}/{unique}", {"metadata": {"finalizers": None}})
    assert code == 200, out
    assert not await authenticates(hub, token)


async def test_a_node_bound_token_dies_with_the_node(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    await create_account(admin, unique)
    uid = await create_node(admin, unique)
    # kubectl before 1.33 offers only Pod and Secret for --bound-object-kind.
    code, answer = await request_token(
        admin,
        unique,
        {"boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": unique, "uid": uid}},
    )
    assert code == 201, answer
    token = answer["status"]["token"]
    assert claims_of(token)["kubernetes.io"]["node"] == {"name": unique, "uid": uid}
    assert await authenticates(hub, token)
    assert (await admin.delete(f"{NODES}/{unique}"))[0] == 200
    assert not await authenticates(hub, token)


async def test_binding_to_a_missing_object_is_not_found(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    await create_account(admin, unique)
    for kind, resource in (("Secret", "secrets"), ("Node", "nodes")):
        code, out = await request_token(
            admin, unique, {"boundObjectRef": {"kind": kind, "apiVersion": "v1", "name": "absent"}}
        )
        assert code == 404, out
        assert out["reason"] == "NotFound" and out["message"] == f'{resource} "absent" not found'


async def test_binding_to_a_replaced_object_is_a_conflict(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    await create_account(admin, unique)
    await create_secret(admin, unique)
    stale = "0c2f7c55-2a0b-4c0e-9c77-0d3c1b7f9a11"
    code, out = await request_token(
        admin,
        unique,
        {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": unique, "uid": stale}},
    )
    assert code == 409, out
    assert out["reason"] == "Conflict"
    assert out["message"] == (
        f'Operation cannot be fulfilled on Secret "{unique}": the UID in the bound object '
        f"reference ({stale}) does not match the UID in record. The object might have been "
        "deleted and then recreated"
    )
    assert out["details"] == {"name": unique, "kind": "Secret"}


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        # The hub serves no Pods: a token can never be bound to one.
        ({"kind": "Pod", "apiVersion": "v1", "name": "p"}, "/v1, Kind=Pod"),
        ({"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}, "/v1, Kind=ConfigMap"),
        (
            {"kind": "Secret", "apiVersion": "example.com/v1", "name": "s"},
            "example.com/v1, Kind=Secret",
        ),
    ],
    ids=["pod", "configmap", "secret-of-another-group"],
)
async def test_binding_to_an_unsupported_kind_is_a_bad_request(
    hub: HubProcess, admin: Client, unique: str, ref: dict[str, str], message: str
) -> None:
    await create_account(admin, unique)
    code, out = await request_token(admin, unique, {"boundObjectRef": ref})
    assert code == 400, out
    assert out["reason"] == "BadRequest"
    assert out["message"] == f"cannot bind token to object of type {message}"


# ------------------------------------------------- the validator, at chosen moments


@pytest_asyncio.fixture
async def backend() -> AsyncIterator[Backend]:
    store = open_backend("memory://")
    await store.start()
    yield store
    await store.close()


async def _put(backend: Backend, key: str, name: str, uid: str, deleted: datetime | None) -> None:
    metadata: dict[str, Any] = {"name": name, "uid": uid}
    if deleted is not None:
        metadata["deletionTimestamp"] = timefmt.format_time(deleted)
        metadata["finalizers"] = ["example.com/hold"]
    await backend.create(key, codec.encode({"metadata": metadata}))


@pytest.mark.parametrize(
    ("what", "ago", "accepted"),
    [
        ("secret", timedelta(seconds=30), True),
        ("secret", timedelta(minutes=2), False),
        ("service account", timedelta(seconds=30), True),
        ("service account", timedelta(minutes=2), False),
    ],
)
async def test_objects_deleted_over_a_minute_ago_invalidate_tokens(
    backend: Backend, what: str, ago: timedelta, accepted: bool
) -> None:
    key = keys.generate_private_key()
    now = datetime.now(UTC)
    authenticator = Authenticator(backend=backend, sa_public_key=key.public_key(), issuer=ISSUER)
    deleted = now - ago
    await _put(
        backend,
        "/registry/core/serviceaccounts/default/robot",
        "robot",
        "sa-uid",
        deleted if what == "service account" else None,
    )
    await _put(
        backend,
        "/registry/core/secrets/default/s",
        "s",
        "secret-uid",
        deleted if what == "secret" else None,
    )
    token = jwt.issue_token(
        key,
        issuer=ISSUER,
        namespace="default",
        name="robot",
        uid="sa-uid",
        audiences=[ISSUER],
        expiration_seconds=3600,
        now=now,
        bound_object=jwt.BoundObject(kind="Secret", name="s", uid="secret-uid"),
    )
    if accepted:
        user = await authenticator.authenticate_token(token)
        assert user.name == "system:serviceaccount:default:robot"
    else:
        with pytest.raises(status.ApiError) as refused:
            await authenticator.authenticate_token(token)
        assert refused.value.code == 401


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Name parameter required."),
        ("a/b", "Name parameter invalid: \"a/b\": may not contain '/'"),
        ("..", "Name parameter invalid: \"..\": may not be '..'"),
    ],
    ids=["empty", "slash", "dot-dot"],
)
async def test_a_bound_name_must_be_one_path_segment(
    hub: HubProcess, admin: Client, unique: str, name: str, message: str
) -> None:
    await create_account(admin, unique)
    code, out = await request_token(
        admin, unique, {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": name}}
    )
    assert (code, out["reason"], out["message"]) == (400, "BadRequest", message)


async def test_a_bound_object_reference_of_the_wrong_type_is_a_bad_request(
    hub: HubProcess, admin: Client, unique: str
) -> None:
    await create_account(admin, unique)
    code, out = await request_token(admin, unique, {"boundObjectRef": "Secret/s"})
    assert (code, out["reason"]) == (400, "BadRequest"), out
    assert out["message"] == (
        'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
        "unmarshal string into Go struct field TokenRequestSpec.spec.boundObjectRef of type "
        "v1.BoundObjectReference"
    )
