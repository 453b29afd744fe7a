"""Impersonation (``Impersonate-*`` headers, ``kubectl --as``) on a real hub.

Before issue 17 the hub ignored these headers and served every request as the caller, so
a client dropping privileges with ``--as`` kept its full rights. Now, as kube-apiserver,
each thing asked for needs the ``impersonate`` verb for the caller, and the request then
runs, end to end, as the impersonated identity.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import orjson

from pyocm.pki.csr import build_csr
from pyocm.pki.keys import generate_private_key
from pyocm.runtime.client import Api
from pyocm.testing import Client, HubProcess
from tests.security.conftest import Caller
from tests.support import eventually, grant, subject

AUTHN = "authentication.k8s.io"
WHOAMI = f"/apis/{AUTHN}/v1/selfsubjectreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
REVIEW = {"apiVersion": f"{AUTHN}/v1", "kind": "SelfSubjectReview"}

Headers = list[tuple[str, str]]


def kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def send(
    client: Client, method: str, path: str, headers: Headers, body: Any = None
) -> tuple[int, Any]:
    """One request with ``headers`` as given: a header may repeat (Impersonate-Group)."""
    sent = list(headers)
    data = None
    if body is not None:
        data = orjson.dumps(body)
        sent.append(("Content-Type", "application/json"))
    async with client.session.request(
        method, path, data=data, headers=sent, ssl=client._ssl
    ) as resp:
        return resp.status, orjson.loads(await resp.read())


async def whoami(client: Client, headers: Headers) -> tuple[int, Any]:
    return await send(client, "POST", WHOAMI, headers, REVIEW)


def impersonate(verb_rules: list[tuple[str, str, list[str]]]) -> list[dict[str, Any]]:
    """ClusterRole rules granting ``impersonate`` on (group, resource, resourceNames)."""
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": ["impersonate"]}
        | ({"resourceNames": names} if names else {})
        for group, resource, names in verb_rules
    ]


# --- kubectl --as, as the admin (system:masters may impersonate anyone) ---------------


async def test_admin_as_nobody_runs_as_nobody(hub: HubProcess, admin: Client, unique: str) -> None:
    done = await asyncio.to_thread(
        kubectl, hub.kubeconfig, "--as", "nobody", "create", "namespace", unique
    )
    assert done.returncode != 0
    assert (
        'namespaces is forbidden: User "nobody" cannot create resource "namespaces" '
        'in API group "" at the cluster scope'
    ) in done.stderr
    assert (await admin.get(f"/api/v1/namespaces/{unique}"))[0] == 404


def test_can_i_answers_for_the_impersonated_user(hub: HubProcess) -> None:
    done = kubectl(
        hub.kubeconfig, "auth", "can-i", "delete", "secrets", "-n", "kube-system", "--as=lowpriv"
    )
    assert (done.returncode, done.stdout.strip()) == (1, "no")
    done = kubectl(hub.kubeconfig, "auth", "can-i", "delete", "secrets", "-n", "kube-system")
    assert (done.returncode, done.stdout.strip()) == (0, "yes")


def test_whoami_reports_the_impersonated_user_and_groups(hub: HubProcess) -> None:
    done = kubectl(hub.kubeconfig, "auth", "whoami", "--as=alice", "--as-group=g1", "-o", "json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)["status"]["userInfo"]
    assert info == {"username": "alice", "groups": ["g1", "system:authenticated"]}


def test_the_audit_log_names_both_users(hub: HubProcess, unique: str) -> None:
    done = kubectl(hub.kubeconfig, "--as", f"audited-{unique}", "get", "configmaps")
    assert done.returncode != 0
    line = next((line for line in hub.log().splitlines() if f'"audited-{unique}"' in line), "")
    assert "pyocm.apiserver.audit" in line and " INFO " in line
    assert '"pyocm-admin"' in line, line
    assert "/api/v1/namespaces/default/configmaps" in line


# --- who may impersonate whom ---------------------------------------------------------


async def test_without_a_grant_impersonation_is_forbidden_with_kube_message(
    hub: HubProcess, unique: str
) -> None:
    alice = hub.identity(f"alice-{unique}")
    async with Client(alice.kubeconfig) as client:
        code, status = await whoami(client, [("Impersonate-User", "nobody")])
    assert code == 403 and status["reason"] == "Forbidden"
    assert status["message"] == (
        f'users "nobody" is forbidden: User "alice-{unique}" cannot impersonate resource '
        '"users" in API group "" at the cluster scope'
    )
    assert status["details"] == {"name": "nobody", "kind": "users"}


async def test_resource_names_limit_whom_one_may_impersonate(
    hub: HubProcess, api: Api, unique: str
) -> None:
    bob = hub.identity(f"bob-{unique}")
    await grant(
        api, unique, subject("User", bob.user), impersonate([("", "users", [f"x-{unique}"])])
    )
    async with Client(bob.kubeconfig) as client:
        code, review = await eventually(
            lambda: _allowed(whoami(client, [("Impersonate-User", f"x-{unique}")]))
        )
        assert review["status"]["userInfo"] == {
            "username": f"x-{unique}",
            "groups": ["system:authenticated"],
        }
        code, status = await whoami(client, [("Impersonate-User", f"y-{unique}")])
        assert code == 403
        assert status["message"].startswith(f'users "y-{unique}" is forbidden: User "{bob.user}"')


async def _allowed(call: Any) -> tuple[int, Any] | None:
    code, body = await call
    assert code == 201, body
    return code, body


async def test_groups_uid_and_extras_each_need_their_grant(
    hub: HubProcess, api: Api, unique: str
) -> None:
    carol = hub.identity(f"carol-{unique}")
    await grant(api, unique, subject("User", carol.user), impersonate([("", "users", [])]))
    user = ("Impersonate-User", "dave")
    async with Client(carol.kubeconfig) as client:
        await eventually(lambda: _allowed(whoami(client, [user])))
        code, status = await whoami(client, [user, ("Impersonate-Group", "g1")])
        assert (code, status["message"]) == (
            403,
            f'groups "g1" is forbidden: User "{carol.user}" cannot impersonate resource '
            '"groups" in API group "" at the cluster scope',
        )
        code, status = await whoami(client, [user, ("Impersonate-Uid", "u-1")])
        assert (code, status["message"]) == (
            403,
            f'uids.authentication.k8s.io "u-1" is forbidden: User "{carol.user}" cannot '
            'impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
        )
        code, status = await whoami(
            client, [user, ("Impersonate-Extra-Example.com%2fScopes", "s1")]
        )
        assert (code, status["message"]) == (
            403,
            f'userextras.authentication.k8s.io "s1" is forbidden: User "{carol.user}" cannot '
            'impersonate resource "userextras/example.com/scopes" in API group '
            '"authentication.k8s.io" at the cluster scope',
        )


async def test_granted_groups_uid_and_extras_make_the_identity(
    hub: HubProcess, api: Api, unique: str
) -> None:
    erin = hub.identity(f"erin-{unique}")
    rules = impersonate(
        [
            ("", "users", []),
            ("", "groups", []),
            (AUTHN, "uids", []),
            (AUTHN, "userextras/example.com/scopes", []),
        ]
    )
    await grant(api, unique, subject("User", erin.user), rules)
    headers = [
        ("Impersonate-User", "frank"),
        ("Impersonate-Group", "g1"),
        ("Impersonate-Group", "g2"),
        ("Impersonate-Uid", "u-1"),
        ("Impersonate-Extra-Example.com%2fScopes", "s1"),
        ("Impersonate-Extra-Example.com%2fScopes", "s2"),
    ]
    async with Client(erin.kubeconfig) as client:
        _, review = await eventually(lambda: _allowed(whoami(client, headers)))
    assert review["status"]["userInfo"] == {
        "username": "frank",
        "uid": "u-1",
        "groups": ["g1", "g2", "system:authenticated"],
        "extra": {"example.com/scopes": ["s1", "s2"]},
    }


async def test_group_uid_or_extra_without_a_user_is_bad_request(admin: Client) -> None:
    code, status = await whoami(admin, [("Impersonate-Group", "g1")])
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == "requested [{Group  g1    }] without impersonating a user"
    code, status = await whoami(admin, [("Impersonate-Extra-Scopes", "s1")])
    assert (code, status["message"]) == (
        400,
        "requested [{UserExtra  s1  authentication.k8s.io/v1  scopes}] without impersonating a user",
    )
    code, status = await whoami(admin, [("Impersonate-Uid", "u-1")])
    assert (code, status["message"]) == (
        400,
        "requested [{UID  u-1  authentication.k8s.io/v1  }] without impersonating a user",
    )


# --- what the impersonated identity is --------------------------------------------------


async def test_service_accounts_are_checked_as_serviceaccounts(
    hub: HubProcess, api: Api, unique: str
) -> None:
    gina = hub.identity(f"gina-{unique}")
    sa = f"system:serviceaccount:ns-{unique}:robot"
    async with Client(gina.kubeconfig) as client:
        code, status = await whoami(client, [("Impersonate-User", sa)])
        assert (code, status["message"]) == (
            403,
            f'serviceaccounts "robot" is forbidden: User "{gina.user}" cannot impersonate '
            f'resource "serviceaccounts" in API group "" in the namespace "ns-{unique}"',
        )
        await grant(
            api, unique, subject("User", gina.user), impersonate([("", "serviceaccounts", [])])
        )
        _, review = await eventually(lambda: _allowed(whoami(client, [("Impersonate-User", sa)])))
        assert review["status"]["userInfo"] == {
            "username": sa,
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:ns-{unique}",
                "system:authenticated",
            ],
        }
        # A user name that is not a valid service account name is just a user.
        code, status = await whoami(client, [("Impersonate-User", "system:serviceaccount:a:b:c")])
        assert code == 403 and status["details"]["kind"] == "users"


async def test_anonymous_is_unauthenticated(admin: Client) -> None:
    anonymous = [("Impersonate-User", "system:anonymous")]
    cluster_info = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
    code, _ = await send(admin, "GET", cluster_info, anonymous)
    assert code in (200, 404), "system:unauthenticated may read cluster-info"
    code, status = await whoami(admin, anonymous)
    assert code == 403
    assert (
        'User "system:anonymous" cannot create resource "selfsubjectreviews"' in status["message"]
    )
    # Named groups do not stop the implied one for the anonymous user (unlike others).
    code, review = await whoami(admin, [*anonymous, ("Impersonate-Group", "system:authenticated")])
    assert code == 201
    assert review["status"]["userInfo"] == {
        "username": "system:anonymous",
        "groups": ["system:authenticated", "system:unauthenticated"],
    }


async def test_access_and_rules_reviews_answer_for_the_impersonated_user(admin: Client) -> None:
    ask = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {"verb": "list", "resource": "secrets", "namespace": "default"}
        },
    }
    as_low = [("Impersonate-User", "lowpriv")]
    code, review = await send(admin, "POST", SSAR, as_low, ask)
    assert code == 201 and review["status"]["allowed"] is False
    code, review = await send(admin, "POST", SSAR, [], ask)
    assert code == 201 and review["status"]["allowed"] is True
    rules = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    code, review = await send(admin, "POST", SSRR, as_low, rules)
    assert code == 201
    granted = review["status"]["resourceRules"]
    assert not any("*" in rule["verbs"] and "*" in rule["resources"] for rule in granted)


async def test_csr_records_the_impersonated_requester(admin: Client, unique: str) -> None:
    request = build_csr(generate_private_key(), common_name=unique)
    body = {
        "metadata": {"name": unique},
        "spec": {
            "request": base64.b64encode(request).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
            "username": "forged",
        },
    }
    # The group lets henry create CSRs at all; the server then records him, not the admin.
    headers = [("Impersonate-User", "henry"), ("Impersonate-Group", "system:masters")]
    code, created = await send(admin, "POST", CSRS, headers, body)
    assert code == 201, created
    assert created["spec"]["username"] == "henry"
    assert created["spec"]["groups"] == ["system:masters", "system:authenticated"]


async def test_an_anonymous_caller_cannot_impersonate(anonymous: Caller) -> None:
    cluster_info = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
    code, status = await anonymous.request(
        "GET", cluster_info, headers={"Impersonate-User": "pyocm-admin"}
    )
    assert (code, status["message"]) == (
        403,
        'users "pyocm-admin" is forbidden: User "system:anonymous" cannot impersonate '
        'resource "users" in API group "" at the cluster scope',
    )
    code, _ = await anonymous.request(
        "GET", "/api/v1/namespaces", headers={"Impersonate-User": "pyocm-admin"}
    )
    assert code == 401, "no credential: refused before impersonation is considered"


async def test_headers_naming_no_one_serve_the_caller_as_itself(
    hub: HubProcess, admin: Client, anonymous: Caller, unique: str
) -> None:
    """An unknown ``Impersonate-*`` header or an empty ``Impersonate-User`` asks for no
    one: kube serves the caller as itself. Before, the request ran as user "" with no
    check at all (and the audit log said so)."""
    for headers in ([("Impersonate-Foo", unique)], [("Impersonate-User", "")]):
        code, review = await whoami(admin, [*headers, ("X-Probe", unique)])
        assert code == 201, review
        assert review["status"]["userInfo"]["username"] == "pyocm-admin", headers
    cluster_info = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
    for anonymous_headers in ({"Impersonate-Foo": unique}, {"Impersonate-User": ""}):
        code, _ = await anonymous.request("GET", cluster_info, headers=anonymous_headers)
        assert code == 200
        code, _ = await anonymous.request("GET", CSRS, headers=anonymous_headers)
        assert code == 401, "still anonymous: refused as before"
    impersonating = [line for line in hub.log().splitlines() if 'impersonating user ""' in line]
    assert impersonating == []
