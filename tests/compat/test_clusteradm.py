"""clusteradm's requests against a pyocm hub, replayed as clusteradm (v1.x, 2026) sends them.

There is no clusteradm binary here (it is Go): each test makes the same requests, with
the same verbs, paths, selectors and order, as clusteradm's source does
(open-cluster-management-io/clusteradm: pkg/helpers/client.go GetBootstrapTokenFromSA,
GetBootstrapSecret; pkg/cmd/delete/clusterset/exec.go runWithClient).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

import pytest_asyncio

from pyocm.testing import Client, HubProcess
from tests.cli import pyocm

SETS = "/apis/cluster.open-cluster-management.io/v1beta2/managedclustersets"
BINDINGS = "/apis/cluster.open-cluster-management.io/v1beta2/managedclustersetbindings"


@pytest_asyncio.fixture
async def hub_admin(ocm_hub: HubProcess) -> AsyncIterator[Client]:
    """A hub with its controllers (they create the bootstrap ServiceAccount)."""
    async with Client(ocm_hub.kubeconfig) as client:
        yield client


async def _eventually_created(admin: Client, path: str) -> dict:
    for _ in range(300):  # up to 30 s: the hub may be busy (a parallel suite)
        code, found = await admin.get(path)
        if code == 200:
            return dict(found)
        await asyncio.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


async def test_get_token_asks_the_agent_registration_bootstrap_service_account(
    ocm_hub: HubProcess, hub_admin: Client, unique: str
) -> None:
    """``clusteradm get token``: a TokenRequest for open-cluster-management/
    agent-registration-bootstrap (expirationSeconds 3600), whose token may then join."""
    sa = "/api/v1/namespaces/open-cluster-management/serviceaccounts/agent-registration-bootstrap"
    await _eventually_created(hub_admin, sa)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    code, answer = await hub_admin.post(f"{sa}/token", request)
    assert code == 201, answer
    token = answer["status"]["token"]
    # The chart's bindings of the bootstrap role, by their names (the hub's controllers
    # make them beside the ServiceAccount, maybe a moment after it).
    rbac = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    by_sa = await _eventually_created(
        hub_admin, f"{rbac}/open-cluster-management:bootstrap:agent-registration"
    )
    assert by_sa["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": "agent-registration-bootstrap",
            "namespace": "open-cluster-management",
        }
    ]
    by_group = await _eventually_created(
        hub_admin, f"{rbac}/open-cluster-management:bootstrap:managedcluster"
    )
    assert by_group["subjects"][0]["name"] == "system:bootstrappers:managedcluster"
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {
                "verb": "create",
                "group": "cluster.open-cluster-management.io",
                "resource": "managedclusters",
            }
        },
    }
    path = ocm_hub.token_kubeconfig(f"clusteradm-{unique}", token)
    async with Client(path) as joining:
        code, out = await joining.post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review
        )
    assert code == 201 and out["status"]["allowed"] is True, out


async def test_get_token_use_bootstrap_token_finds_pyocms_newest_token(
    ocm_hub: HubProcess, hub_admin: Client
) -> None:
    """``clusteradm get token --use-bootstrap-token``: list kube-system Secrets with
    ``labelSelector=app = cluster-manager``, take the newest ``bootstrap-token-*``."""
    made = pyocm("get", "token", "--kubeconfig", str(ocm_hub.kubeconfig), env={"KUBECONFIG": ""})
    assert made.returncode == 0, made.stderr
    printed = made.stdout.split("--hub-token ")[1].split()[0]
    code, listed = await hub_admin.get(
        "/api/v1/namespaces/kube-system/secrets", params={"labelSelector": "app = cluster-manager"}
    )
    assert code == 200, listed
    tokens = [s for s in listed["items"] if s["metadata"]["name"].startswith("bootstrap-token-")]
    # clusteradm joins with the newest one's token-id.token-secret: pyocm's, just made
    # (timestamps are whole seconds: another test's token may share the second).
    assert tokens, "no bootstrap token Secret has upstream's label app=cluster-manager"
    newest = max(s["metadata"]["creationTimestamp"] for s in tokens)

    def joined_with(secret: dict) -> str:
        data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
        return f"{data['token-id']}.{data['token-secret']}"

    assert printed in [
        joined_with(s) for s in tokens if s["metadata"]["creationTimestamp"] == newest
    ]


async def test_delete_clusterset_watch_sees_deleted(hub_admin: Client, unique: str) -> None:
    """``clusteradm delete clusterset X``: GET X; LIST bindings in all namespaces with
    ``fieldSelector=metadata.name=X``; then a watch with that selector and no
    resourceVersion, started alongside the DELETE, returning on DELETED. Its watch was
    seen reaching the server just after the DELETE: kube-apiserver's watch cache still
    holds the set then, so the watch gets ADDED and DELETED, and clusteradm returns.
    The watch is sent after the DELETE's answer here, the order that hung on pyocm."""
    name = f"adm-{unique}"
    body = {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": name},
    }
    assert (await hub_admin.post(SETS, body))[0] == 201
    assert (await hub_admin.get(f"{SETS}/{name}"))[0] == 200
    code, bindings = await hub_admin.get(
        BINDINGS, params={"fieldSelector": f"metadata.name={name}"}
    )
    assert code == 200 and bindings["items"] == []
    params = {"fieldSelector": f"metadata.name={name}"}
    assert (await hub_admin.delete(f"{SETS}/{name}"))[0] == 200
    events = await hub_admin.watch_lines(SETS, params=params, limit=2, timeout=10)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", name),
        ("DELETED", name),
    ]
    # A list is a consistent read: the set is gone from it at once.
    code, listed = await hub_admin.get(SETS, params=params)
    assert code == 200 and listed["items"] == []
