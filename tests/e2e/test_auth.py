"""Authentication and authorization on a real hub: certificates, tokens, RBAC, escalation."""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime, timedelta

from pyocm.testing import Client, HubProcess

CM = "/api/v1/namespaces/default/configmaps"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def test_anonymous_gets_401_except_health_and_cluster_info(hub: HubProcess) -> None:
    import ssl

    import aiohttp

    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cadata=hub.ca_pem.decode())
    async with aiohttp.ClientSession(base_url=hub.url) as session:
        for path in ("/healthz", "/livez", "/readyz", "/version"):
            async with session.get(path, ssl=ctx) as resp:
                assert resp.status == 200, path
        async with session.get("/api/v1/namespaces", ssl=ctx) as resp:
            body = await resp.json()
            assert resp.status == 401 and body["reason"] == "Unauthorized"
        async with session.get("/api/v1/namespaces/kube-public/configmaps/cluster-info", ssl=ctx) as resp:
            assert resp.status == 200, "joining clusters read cluster-info before they have any credential"
        async with session.get("/api/v1/namespaces/kube-public/configmaps", ssl=ctx) as resp:
            assert resp.status == 401, "only that one object is open to anonymous callers"
        async with session.get("/api/v1/namespaces", ssl=ctx, headers={"Authorization": "Bearer nope.nope"}) as resp:
            assert resp.status == 401, "a presented but invalid credential is never anonymous"


async def test_user_without_bindings_is_forbidden_with_kube_message(hub: HubProcess) -> None:
    bob = hub.identity("bob", ("team-a",))
    async with Client(bob.kubeconfig) as client:
        code, status = await client.get("/apis/cluster.open-cluster-management.io/v1/managedclusters/c1")
        assert code == 403
        assert status["message"] == (
            'managedclusters.cluster.open-cluster-management.io "c1" is forbidden: User "bob" cannot get resource '
            '"managedclusters" in API group "cluster.open-cluster-management.io" at the cluster scope'
        )
        code, status = await client.get(CM)
        assert code == 403 and 'in the namespace "default"' in status["message"]
        # discovery and self-review are open to every authenticated user
        code, _ = await client.get("/apis")
        assert code == 200


async def test_role_binding_grants_only_in_its_namespace_and_revokes_at_once(hub: HubProcess, admin: Client, unique: str) -> None:
    carol = hub.identity(f"carol-{unique}", (f"group-{unique}",))
    role = {"metadata": {"name": unique}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}
    assert (await admin.post(f"{RBAC}/namespaces/default/roles", role))[0] == 201
    binding = {"metadata": {"name": unique}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": unique},
               "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": f"group-{unique}"}]}
    assert (await admin.post(f"{RBAC}/namespaces/default/rolebindings", binding))[0] == 201
    async with Client(carol.kubeconfig) as client:
        assert (await client.get(CM))[0] == 200
        assert (await client.get("/api/v1/namespaces/kube-system/configmaps"))[0] == 403
        assert (await client.post(CM, {"metadata": {"name": unique}}))[0] == 403
        await admin.delete(f"{RBAC}/namespaces/default/rolebindings/{unique}")
        assert (await client.get(CM))[0] == 403


async def test_resource_names_apply_to_list_through_field_selector(hub: HubProcess, admin: Client, unique: str) -> None:
    dave = hub.identity(f"dave-{unique}")
    role = {"metadata": {"name": unique}, "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                                     "resourceNames": [unique], "verbs": ["get", "list", "watch"]}]}
    await admin.post(f"{RBAC}/namespaces/default/roles", role)
    binding = {"metadata": {"name": unique}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": unique},
               "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": f"dave-{unique}"}]}
    await admin.post(f"{RBAC}/namespaces/default/rolebindings", binding)
    await admin.post(CM, {"metadata": {"name": unique}})
    async with Client(dave.kubeconfig) as client:
        assert (await client.get(f"{CM}/{unique}"))[0] == 200
        assert (await client.get(CM, params={"fieldSelector": f"metadata.name={unique}"}))[0] == 200
        assert (await client.get(CM))[0] == 403
        assert (await client.get(f"{CM}/other"))[0] == 403


async def test_escalation_is_prevented(hub: HubProcess, admin: Client, unique: str) -> None:
    erin = hub.identity(f"erin-{unique}")
    role = {"metadata": {"name": unique}, "rules": [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
    ]}
    await admin.post(f"{RBAC}/namespaces/default/roles", role)
    binding = {"metadata": {"name": unique}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": unique},
               "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": f"erin-{unique}"}]}
    await admin.post(f"{RBAC}/namespaces/default/rolebindings", binding)
    async with Client(erin.kubeconfig) as client:
        held = {"metadata": {"name": f"{unique}-ok"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
        assert (await client.post(f"{RBAC}/namespaces/default/roles", held))[0] == 201
        more = {"metadata": {"name": f"{unique}-bad"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["delete"]}]}
        code, status = await client.post(f"{RBAC}/namespaces/default/roles", more)
        assert code == 403 and "attempting to grant RBAC permissions not currently held" in status["message"]


async def test_self_subject_access_review(hub: HubProcess, unique: str) -> None:
    frank = hub.identity(f"frank-{unique}")
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "configmaps"}}}
    async with Client(frank.kubeconfig) as client:
        code, out = await client.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
        assert code == 201 and out["status"]["allowed"] is False


async def test_subject_access_review_uses_given_groups(admin: Client) -> None:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "someone", "groups": ["system:masters"],
                       "resourceAttributes": {"verb": "renew", "group": "register.open-cluster-management.io",
                                              "resource": "managedclusters", "subresource": "clientcertificates"}}}
    code, out = await admin.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert code == 201 and out["status"]["allowed"] is True
    review["spec"]["groups"] = ["system:authenticated"]
    code, out = await admin.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert out["status"]["allowed"] is False
    del review["spec"]["user"]
    del review["spec"]["groups"]
    code, _ = await admin.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert code == 422


def bootstrap_secret(token_id: str, secret: str, *, expiration: datetime | None = None) -> dict:
    data = {"token-id": token_id, "token-secret": secret, "usage-bootstrap-authentication": "true",
            "auth-extra-groups": "system:bootstrappers:managedcluster"}
    if expiration is not None:
        data["expiration"] = expiration.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
            "type": "bootstrap.kubernetes.io/token", "stringData": data}


def _token_parts() -> tuple[str, str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(6)), "".join(secrets.choice(alphabet) for _ in range(16))


async def test_bootstrap_token_authenticates_until_expired_or_deleted(hub: HubProcess, admin: Client) -> None:
    token_id, secret = _token_parts()
    code, created = await admin.post("/api/v1/namespaces/kube-system/secrets", bootstrap_secret(token_id, secret))
    assert code == 201 and "stringData" not in created
    assert base64.b64decode(created["data"]["token-id"]).decode() == token_id
    path = hub.token_kubeconfig(f"bootstrap-{token_id}", f"{token_id}.{secret}")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    async with Client(path) as client:
        code, out = await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", review)
        assert code == 201
        assert out["status"]["userInfo"]["username"] == f"system:bootstrap:{token_id}"
        assert "system:bootstrappers:managedcluster" in out["status"]["userInfo"]["groups"]
        await admin.delete(f"/api/v1/namespaces/kube-system/secrets/bootstrap-token-{token_id}")
        code, _ = await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", review)
        assert code == 401
    token_id, secret = _token_parts()
    past = datetime.now(UTC) - timedelta(minutes=1)
    await admin.post("/api/v1/namespaces/kube-system/secrets", bootstrap_secret(token_id, secret, expiration=past))
    async with Client(hub.token_kubeconfig(f"expired-{token_id}", f"{token_id}.{secret}")) as client:
        assert (await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", review))[0] == 401
    async with Client(hub.token_kubeconfig("wrong", f"{token_id}.{'x' * 16}")) as client:
        assert (await client.get("/api/v1/namespaces"))[0] == 401


async def test_service_account_token_request(hub: HubProcess, admin: Client, unique: str) -> None:
    await admin.post("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": unique}})
    code, tr = await admin.post(f"/api/v1/namespaces/default/serviceaccounts/{unique}/token",
                                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})
    assert code == 201 and tr["status"]["token"].count(".") == 2
    async with Client(hub.token_kubeconfig(f"sa-{unique}", tr["status"]["token"])) as client:
        code, out = await client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                      {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        assert code == 201 and out["status"]["userInfo"]["username"] == f"system:serviceaccount:default:{unique}"
        await admin.delete(f"/api/v1/namespaces/default/serviceaccounts/{unique}")
        assert (await client.get("/api/v1/namespaces"))[0] == 401


async def test_cluster_role_aggregation_follows_its_sources(admin: Client, unique: str) -> None:
    """An aggregating ClusterRole gathers the rules of the roles its selector picks, and
    follows them as they are created, changed, relabelled and deleted; roles it does not
    select change nothing."""
    from tests.support import eventually

    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    label = {f"{unique}.io/aggregate": "true"}

    def rule(resource: str) -> dict:
        return {"verbs": ["get"], "apiGroups": [""], "resources": [resource]}

    await admin.post(roles, {
        "metadata": {"name": f"{unique}-agg"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": label}]},
    })

    async def rules_are(*resources: str) -> bool:
        _, role = await admin.get(f"{roles}/{unique}-agg")
        return (role.get("rules") or []) == [rule(r) for r in resources]

    await admin.post(roles, {"metadata": {"name": f"{unique}-a", "labels": label}, "rules": [rule("pods")]})
    await admin.post(roles, {"metadata": {"name": f"{unique}-other"}, "rules": [rule("secrets")]})
    await eventually(lambda: rules_are("pods"))
    await admin.patch(f"{roles}/{unique}-a", {"rules": [rule("pods"), rule("configmaps")]})
    await eventually(lambda: rules_are("pods", "configmaps"))
    await admin.patch(f"{roles}/{unique}-other", {"metadata": {"labels": label}})
    await eventually(lambda: rules_are("pods", "configmaps", "secrets"))
    await admin.delete(f"{roles}/{unique}-a")
    await eventually(lambda: rules_are("secrets"))
    await admin.patch(f"{roles}/{unique}-other", {"metadata": {"labels": {f"{unique}.io/aggregate": None}}})
    await eventually(lambda: rules_are())
