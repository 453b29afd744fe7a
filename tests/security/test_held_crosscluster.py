"""The cross-cluster matrix: with two accepted clusters, each one's agent identity can do
what its own role allows and nothing to the other cluster, nor grant itself more.

Clusters are accepted by the hub's own controllers (the ``ocm_hub`` fixture), which write
their RBAC and leases; each agent acts with a client certificate from the hub's CA bearing
exactly the subject a joined agent's certificate has (CN
``system:open-cluster-management:<c>:<agent>``, O ``system:open-cluster-management:<c>`` and
the managed-clusters group), as ``tests/e2e/test_registration_hub.py`` does. The second
cluster's name extends the first's, so a check by prefix would be caught; the matrix runs
in both directions.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.pki.csr import build_csr
from pyocm.pki.keys import generate_private_key
from pyocm.registration.agent import certs
from pyocm.registration.hub import rbac
from pyocm.runtime.client import Api
from pyocm.testing import Client, HubProcess, Identity
from tests.support import eventually

Obj = dict[str, Any]
CLUSTERS = "/apis/cluster.open-cluster-management.io/v1/managedclusters"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RBAC_API = "/apis/rbac.authorization.k8s.io/v1"
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"}}
WORKS = "/apis/work.open-cluster-management.io/v1/namespaces/{ns}/manifestworks"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
SECRETS = "/api/v1/namespaces/{ns}/secrets"
LEASE = "managed-cluster-lease"
_modules = itertools.count()


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's registration controllers."""
    return ocm_hub


@dataclass
class World:
    hub: HubProcess
    #: cluster name -> the agent identity of that cluster
    agents: dict[str, Identity] = field(default_factory=dict)
    #: cluster name -> the name of a CSR its agent created
    csrs: dict[str, str] = field(default_factory=dict)


def _agent(hub: HubProcess, cluster: str) -> Identity:
    subject = certs.Subject(cluster=cluster, agent="agent1")
    return hub.identity(subject.common_name, tuple(subject.organizations))


async def _accepted(api: Api, hub: HubProcess, world: World, name: str) -> None:
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}}
    )
    await eventually(
        lambda: api.get(kinds.ROLE_BINDING, rbac.registration_binding_name(name), namespace=name)
    )
    await eventually(lambda: api.get(kinds.ROLE_BINDING, rbac.work_binding_name(name), namespace=name))
    await eventually(lambda: api.get(kinds.CLUSTER_ROLE_BINDING, rbac.cluster_role_name(name)))
    await eventually(lambda: api.get(kinds.LEASE, LEASE, namespace=name))
    await api.create(
        ocm.MANIFEST_WORK,
        {
            "metadata": {"name": "work", "namespace": name},
            # One manifest: the hub's work admission refuses a work without any.
            "spec": {"workload": {"manifests": [CONFIGMAP]}},
        },
    )
    await api.create(
        kinds.SECRET, {"metadata": {"name": "hush", "namespace": name}, "stringData": {"k": "v"}}
    )
    await api.create(kinds.SERVICE_ACCOUNT, {"metadata": {"name": "robot", "namespace": name}})
    world.agents[name] = _agent(hub, name)
    async with Api.from_kubeconfig(world.agents[name].kubeconfig) as as_agent:
        csr = certs.csr_object(certs.Subject(cluster=name, agent="agent1"), generate_private_key())
        made = await as_agent.create(kinds.CSR, csr)
    world.csrs[name] = made["metadata"]["name"]


@pytest.fixture(scope="module")
def world(hub: HubProcess) -> Iterator[World]:
    """Two accepted clusters, ``held<n>`` and ``held<n>x``, each with a lease, a
    ManifestWork, a Secret and a ServiceAccount in its namespace and a CSR of its agent."""
    base = f"held{os.getpid() % 10000}m{next(_modules)}"
    world = World(hub)

    async def build() -> None:
        async with Api.from_kubeconfig(hub.kubeconfig) as api:
            for name in (base, f"{base}x"):
                await _accepted(api, hub, world, name)

    asyncio.run(build())
    yield world


PAIRS = [("first", "second"), ("second", "first")]


def _names(world: World, who: str, whom: str) -> tuple[str, str]:
    ordered = sorted(world.agents, key=len)
    pick = {"first": ordered[0], "second": ordered[1]}
    return pick[who], pick[whom]


@dataclass(frozen=True)
class Attempt:
    method: str
    path: str
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)
    patch: bool = False
    headers: dict[str, str] = field(default_factory=dict)


MERGE = {"metadata": {"labels": {"pwned": "yes"}}}


def _attempts(me: str, other: str, csr: str) -> dict[str, Attempt]:
    """What ``me``'s agent tries against cluster ``other``; each must be 403."""
    cluster, lease = f"{CLUSTERS}/{other}", f"{LEASES.format(ns=other)}/{LEASE}"
    works, secrets = WORKS.format(ns=other), SECRETS.format(ns=other)
    whole_cluster = {"metadata": {"name": other}, "spec": {"hubAcceptsClient": False}}
    named = {"fieldSelector": f"metadata.name={other}"}
    attempts = {
        # the other ManagedCluster, its status
        "get cluster": Attempt("GET", cluster),
        "list cluster by name": Attempt("GET", CLUSTERS, params=named),
        "watch cluster by name": Attempt("GET", CLUSTERS, params={**named, "watch": "true"}),
        "list all clusters": Attempt("GET", CLUSTERS),
        "watch all clusters": Attempt("GET", CLUSTERS, params={"watch": "true"}),
        "update cluster": Attempt("PUT", cluster, whole_cluster),
        "patch cluster": Attempt("PATCH", cluster, {"spec": {"hubAcceptsClient": False}}, patch=True),
        "delete cluster": Attempt("DELETE", cluster),
        "get cluster status": Attempt("GET", f"{cluster}/status"),
        "update cluster status": Attempt("PUT", f"{cluster}/status", whole_cluster),
        "patch cluster status": Attempt(
            "PATCH", f"{cluster}/status", {"status": {"clusterClaims": []}}, patch=True
        ),
        # the other cluster's lease
        "get lease": Attempt("GET", lease),
        "list leases": Attempt("GET", LEASES.format(ns=other)),
        "watch leases": Attempt("GET", LEASES.format(ns=other), params={"watch": "true"}),
        "update lease": Attempt("PUT", lease, {"metadata": {"name": LEASE}, "spec": {}}),
        "patch lease": Attempt("PATCH", lease, MERGE, patch=True),
        "delete lease": Attempt("DELETE", lease),
        "create lease": Attempt("POST", LEASES.format(ns=other), {"metadata": {"name": "mine"}}),
        # secrets of the other cluster's namespace
        "get secret": Attempt("GET", f"{secrets}/hush"),
        "list secrets": Attempt("GET", secrets),
        "watch secrets": Attempt("GET", secrets, params={"watch": "true"}),
        "create secret": Attempt("POST", secrets, {"metadata": {"name": "mine"}}),
        "delete secret": Attempt("DELETE", f"{secrets}/hush"),
        # ManifestWorks of the other cluster
        "get work": Attempt("GET", f"{works}/work"),
        "list works": Attempt("GET", works),
        "watch works": Attempt("GET", works, params={"watch": "true"}),
        "create work": Attempt("POST", works, {"metadata": {"name": "mine"}, "spec": {}}),
        "update work": Attempt("PUT", f"{works}/work", {"metadata": {"name": "work"}, "spec": {}}),
        "patch work": Attempt("PATCH", f"{works}/work", MERGE, patch=True),
        "patch work status": Attempt("PATCH", f"{works}/work/status", MERGE, patch=True),
        "delete work": Attempt("DELETE", f"{works}/work"),
        # the other cluster's CSR
        "get csr": Attempt("GET", f"{CSRS}/{csr}"),
        "approve csr": Attempt("PUT", f"{CSRS}/{csr}/approval", {"metadata": {"name": csr}}),
        "patch csr": Attempt("PATCH", f"{CSRS}/{csr}", MERGE, patch=True),
        "delete csr": Attempt("DELETE", f"{CSRS}/{csr}"),
        # a token for a service account in the other namespace
        "request token": Attempt(
            "POST",
            f"/api/v1/namespaces/{other}/serviceaccounts/robot/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        ),
        # impersonation does not lift the agent's limits
        "get cluster impersonating the admin": Attempt(
            "GET",
            cluster,
            headers={"Impersonate-User": "admin", "Impersonate-Group": "system:masters"},
        ),
    }
    return attempts


def _masters_csr(me: str) -> Obj:
    """A CSR of ``me``'s agent that also asks for group ``system:masters``."""
    subject = certs.Subject(cluster=me, agent="agent2")
    csr = certs.csr_object(subject, generate_private_key())
    request = build_csr(
        generate_private_key(),
        common_name=subject.common_name,
        organizations=[*subject.organizations, "system:masters"],
    )
    csr["spec"]["request"] = base64.b64encode(request).decode()  # type: ignore[index]
    return csr


def _escalations(me: str, own_csr: str) -> dict[str, Attempt]:
    """Ways for ``me``'s agent to grant itself more; each must be 403."""
    group = f"system:open-cluster-management:{me}"
    subjects = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]

    def ref(kind: str, name: str) -> Obj:
        return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}

    everything = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    own_role = f"{RBAC_API}/clusterroles/{rbac.cluster_role_name(me)}"
    return {
        "bind cluster-admin in its namespace": Attempt(
            "POST",
            f"{RBAC_API}/namespaces/{me}/rolebindings",
            {"metadata": {"name": "up"}, "roleRef": ref("ClusterRole", "cluster-admin"), "subjects": subjects},
        ),
        "bind its own registration role again": Attempt(
            "POST",
            f"{RBAC_API}/namespaces/{me}/rolebindings",
            {"metadata": {"name": "again"}, "roleRef": ref("ClusterRole", rbac.REGISTRATION_ROLE), "subjects": subjects},
        ),
        "bind cluster-admin cluster-wide": Attempt(
            "POST",
            f"{RBAC_API}/clusterrolebindings",
            {"metadata": {"name": f"{me}-up"}, "roleRef": ref("ClusterRole", "cluster-admin"), "subjects": subjects},
        ),
        "create a ClusterRole with everything": Attempt(
            "POST", f"{RBAC_API}/clusterroles", {"metadata": {"name": f"{me}-all"}, "rules": everything}
        ),
        "create a Role in its namespace": Attempt(
            "POST", f"{RBAC_API}/namespaces/{me}/roles", {"metadata": {"name": "all"}, "rules": everything}
        ),
        "widen its own ClusterRole": Attempt(
            "PATCH", own_role, {"rules": everything}, patch=True
        ),
        "delete its own ClusterRoleBinding": Attempt(
            "DELETE", f"{RBAC_API}/clusterrolebindings/{rbac.cluster_role_name(me)}"
        ),
        "create another ManagedCluster": Attempt(
            "POST", CLUSTERS, {"metadata": {"name": f"{me}-twin"}, "spec": {"hubAcceptsClient": True}}
        ),
        "delete its own ManagedCluster": Attempt("DELETE", f"{CLUSTERS}/{me}"),
        "move itself into another cluster set": Attempt(
            "PATCH",
            f"{CLUSTERS}/{me}",
            {"metadata": {"labels": {"cluster.open-cluster-management.io/clusterset": "elsewhere"}}},
            patch=True,
        ),
        "read secrets in its own namespace": Attempt("GET", SECRETS.format(ns=me)),
        "read bootstrap token secrets": Attempt("GET", SECRETS.format(ns="kube-system")),
        "read secrets in default": Attempt("GET", SECRETS.format(ns="default")),
        "read secrets everywhere": Attempt("GET", "/api/v1/secrets"),
        "list namespaces": Attempt("GET", "/api/v1/namespaces"),
        "approve its own CSR": Attempt(
            "PUT", f"{CSRS}/{own_csr}/approval", {"metadata": {"name": own_csr}}
        ),
        "ask for a system:masters certificate": Attempt("POST", CSRS, _masters_csr(me)),
    }


async def _send(client: Client, attempt: Attempt) -> tuple[int, Any]:
    kind = "application/merge-patch+json" if attempt.patch else "application/json"
    return await client.request(
        attempt.method,
        attempt.path,
        body=attempt.body,
        content_type=kind,
        params=attempt.params or None,
        headers=attempt.headers or None,
    )


ATTEMPTS = list(_attempts("a", "b", "c"))
ESCALATIONS = list(_escalations("a", "c"))


@pytest.mark.parametrize(("who", "whom"), PAIRS, ids=["first-to-second", "second-to-first"])
@pytest.mark.parametrize("attempt", ATTEMPTS)
async def test_an_agent_cannot_touch_the_other_cluster(
    world: World, who: str, whom: str, attempt: str
) -> None:
    me, other = _names(world, who, whom)
    tried = _attempts(me, other, world.csrs[other])[attempt]
    async with Client(world.agents[me].kubeconfig) as client:
        code, body = await _send(client, tried)
    assert code == 403, (tried, code, body)
    assert body["reason"] == "Forbidden"


@pytest.mark.parametrize("who", ["first", "second"])
@pytest.mark.parametrize("attempt", ESCALATIONS)
async def test_an_agent_cannot_grant_itself_more(world: World, who: str, attempt: str) -> None:
    me, _ = _names(world, who, who)
    tried = _escalations(me, world.csrs[me])[attempt]
    async with Client(world.agents[me].kubeconfig) as client:
        code, body = await _send(client, tried)
    assert code == 403, (tried, code, body)
    assert body["reason"] == "Forbidden"


async def test_an_agent_sees_only_its_own_csrs(world: World) -> None:
    """Upstream's role lets an agent list every CSR; the hub scopes reads to the agent's
    cluster: a list or a watch, with or without the other's label, shows only its own."""
    for me, other in itertools.permutations(world.agents):
        async with Client(world.agents[me].kubeconfig) as client:
            for params in ({}, {"labelSelector": f"{wellknown.CLUSTER_NAME_LABEL}={other}"}):
                code, listed = await client.get(CSRS, params=params)
                assert code == 200, listed
                names = {c["metadata"]["name"] for c in listed["items"]}
                assert world.csrs[other] not in names
                if not params:
                    assert world.csrs[me] in names
                events = await _initial_events(client, params)
                assert world.csrs[other] not in {e["object"]["metadata"]["name"] for e in events}
                if not params:
                    assert world.csrs[me] in {e["object"]["metadata"]["name"] for e in events}


async def _initial_events(client: Client, params: dict[str, str]) -> list[Obj]:
    """The ADDED events of a watch's initial state, read up to its end-of-initial bookmark."""
    query = {
        **params,
        "watch": "true",
        "sendInitialEvents": "true",
        "allowWatchBookmarks": "true",
        "resourceVersionMatch": "NotOlderThan",
        "resourceVersion": "",
    }
    added: list[Obj] = []
    async with client.session.get(CSRS, params=query, ssl=client._ssl) as resp:
        assert resp.status == 200, await resp.text()
        async for line in resp.content:
            if not line.strip():
                continue
            event = orjson.loads(line)
            if event["type"] == "BOOKMARK":
                annotations = event["object"]["metadata"].get("annotations") or {}
                if annotations.get("k8s.io/initial-events-end") == "true":
                    return added
                continue
            assert event["type"] == "ADDED", event
            added.append(event)
    raise AssertionError("the watch ended before its initial events did")


@pytest.mark.parametrize("who", ["first", "second"])
async def test_an_agent_keeps_what_its_own_role_allows(world: World, who: str) -> None:
    """The other half of the matrix: the same identity renews its own lease, reports its
    own status, and reads and reports on its own ManifestWorks."""
    me, _ = _names(world, who, who)
    async with Client(world.agents[me].kubeconfig) as client:
        code, cluster = await client.get(f"{CLUSTERS}/{me}")
        assert code == 200 and cluster["metadata"]["name"] == me
        code, listed = await client.get(CLUSTERS, params={"fieldSelector": f"metadata.name={me}"})
        assert code == 200 and [c["metadata"]["name"] for c in listed["items"]] == [me]
        code, _ = await client.patch(
            f"{CLUSTERS}/{me}/status",
            {"status": {"version": {"kubernetes": "v1.30.0"}}},
        )
        assert code == 200
        lease_path = f"{LEASES.format(ns=me)}/{LEASE}"
        code, lease = await client.get(lease_path)
        assert code == 200
        lease["spec"]["renewTime"] = "2030-01-01T00:00:00.000000Z"
        code, renewed = await client.put(lease_path, lease)
        assert code == 200, renewed
        code, works = await client.get(WORKS.format(ns=me))
        assert code == 200 and [w["metadata"]["name"] for w in works["items"]] == ["work"]
        code, _ = await client.patch(
            f"{WORKS.format(ns=me)}/work/status", {"status": {"conditions": []}}
        )
        assert code == 200


async def test_every_attempt_names_something_real(world: World) -> None:
    """The control for the two matrices above: the admin, sending each request as a dry
    run, meets neither 403 nor 404, so every refusal above is the agent's own limit, not a
    wrong path. (A CSR asking for system:masters is refused to everyone.)"""
    me, other = _names(world, "first", "second")
    tried = {**_attempts(me, other, world.csrs[other]), **_escalations(me, world.csrs[me])}
    answers = {}
    async with Client(world.hub.kubeconfig) as admin:
        for name, attempt in tried.items():
            # a watch is checked as the list of the same path; writes are dry runs
            params = {k: v for k, v in attempt.params.items() if k != "watch"}
            params = params if attempt.method == "GET" else {"dryRun": "All"}
            answers[name] = (await _send(admin, Attempt(**{**attempt.__dict__, "params": params})))[0]
    assert answers.pop("ask for a system:masters certificate") == 403
    assert {name: code for name, code in answers.items() if code in (403, 404)} == {}
