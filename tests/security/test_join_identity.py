"""Joining cannot be turned against another cluster (issue 17, items 1 and 4).

A cluster's agent must not get another cluster's certificate approved, neither by the
admin's ``pyocm accept`` nor by the hub's own approvers; and the shared bootstrap
credential may only do what upstream's ``open-cluster-management:bootstrap`` role allows:
create and read ManagedClusters and CSRs, never rewrite them. Everything runs against
real hub processes with real client certificates and bootstrap tokens."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.pki.csr import build_csr
from pyocm.pki.keys import generate_private_key
from pyocm.registration import bootstraptoken
from pyocm.registration.hub import rbac
from pyocm.registration.hub.accept import AcceptError, accept_cluster
from pyocm.runtime.client import Api
from pyocm.testing import Client, HubProcess, Identity
from tests.cli import pyocm
from tests.support import eventually

Obj = dict[str, Any]
CLUSTERS = "/apis/cluster.open-cluster-management.io/v1/managedclusters"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


@pytest_asyncio.fixture
async def token(api: Api) -> str:
    """A fresh bootstrap token, as ``pyocm get token`` makes it."""
    made = bootstraptoken.generate()
    await api.create(kinds.SECRET, bootstraptoken.token_secret(made, now=datetime.now(UTC)))
    return str(made)


@pytest_asyncio.fixture
async def with_token(hub: HubProcess, token: str, unique: str) -> AsyncIterator[Api]:
    """The runtime client as a joining cluster holding the shared bootstrap token."""
    async with Api.from_kubeconfig(hub.token_kubeconfig(f"bootstrap-{unique}", token)) as client:
        yield client


def agent_of(cluster: str) -> str:
    return f"{rbac.SUBJECT_PREFIX}{cluster}:agent1"


def groups_of(cluster: str) -> tuple[str, ...]:
    return (f"{rbac.SUBJECT_PREFIX}{cluster}", rbac.MANAGED_CLUSTERS_GROUP)


def csr_body(name: str, *, cluster: str, common_name: str) -> Obj:
    """An agent's CSR for ``cluster``: its two groups, the given CN."""
    request = build_csr(
        generate_private_key(), common_name=common_name, organizations=list(groups_of(cluster))
    )
    return {
        "metadata": {"name": name, "labels": {wellknown.CLUSTER_NAME_LABEL: cluster}},
        "spec": {
            "request": base64.b64encode(request).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "key encipherment", "client auth"],
        },
    }


async def accepted_agent(hub: HubProcess, api: Api, cluster: str) -> Identity:
    """Cluster ``cluster``, accepted, and a certificate for its agent: agent A."""
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": cluster}, "spec": {"hubAcceptsClient": True}}
    )
    await eventually(
        lambda: api.get(
            kinds.ROLE_BINDING, rbac.registration_binding_name(cluster), namespace=cluster
        )
    )
    return hub.identity(agent_of(cluster), groups_of(cluster))


async def decision(api: Api, name: str) -> list[Obj]:
    return list((await api.get(kinds.CSR, name)).get("status", {}).get("conditions") or [])


async def test_accept_refuses_a_csr_that_another_clusters_agent_made(
    hub: HubProcess, api: Api, with_token: Api, unique: str, tmp_path: Path
) -> None:
    thief, victim = f"ca-{unique}", f"cb-{unique}"
    identity = await accepted_agent(hub, api, thief)
    await with_token.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": victim}, "spec": {"hubAcceptsClient": False}}
    )
    stolen = f"{victim}-zzzz0000"
    async with Api.from_kubeconfig(identity.kubeconfig) as as_thief:
        # Creating a CSR is every accepted agent's right (renewals); approving it is not.
        await as_thief.create(
            kinds.CSR,
            csr_body(stolen, cluster=victim, common_name=f"{rbac.SUBJECT_PREFIX}{victim}:stolen"),
        )
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}
    refused = pyocm("accept", "--clusters", victim, "--kubeconfig", str(hub.kubeconfig), env=env)
    assert refused.returncode == 1, refused.stdout
    assert f"CSR {stolen}" in refused.stderr and identity.user in refused.stderr, refused.stderr
    assert "not a bootstrap identity" in refused.stderr
    assert await decision(api, stolen) == [], "the stolen CSR stays undecided"
    cluster = await api.get(ocm.MANAGED_CLUSTER, victim)
    assert cluster["spec"]["hubAcceptsClient"] is False, "nothing to accept the cluster for"


async def test_accept_approves_the_bootstrap_csr_and_names_the_one_it_skips(
    hub: HubProcess, api: Api, with_token: Api, unique: str
) -> None:
    thief, victim = f"ca-{unique}", f"cb-{unique}"
    identity = await accepted_agent(hub, api, thief)
    await with_token.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": victim}, "spec": {"hubAcceptsClient": False}}
    )
    own, stolen = f"{victim}-own", f"{victim}-stolen"
    await with_token.create(kinds.CSR, csr_body(own, cluster=victim, common_name=agent_of(victim)))
    async with Api.from_kubeconfig(identity.kubeconfig) as as_thief:
        await as_thief.create(
            kinds.CSR, csr_body(stolen, cluster=victim, common_name=agent_of(victim))
        )
    skipped: list[str] = []
    approved = await accept_cluster(api, victim, on_refusal=skipped.append)
    assert approved == [own]
    assert len(skipped) == 1 and stolen in skipped[0] and identity.user in skipped[0]
    assert await decision(api, stolen) == []


async def test_accept_refuses_pending_csrs_of_different_agents(
    hub: HubProcess, api: Api, with_token: Api, unique: str
) -> None:
    """Two agents asking for one cluster name: upstream's clusteradm approves neither."""
    name = f"two-{unique}"
    await with_token.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": False}}
    )
    for agent in ("agent1", "agent2"):
        await with_token.create(
            kinds.CSR,
            csr_body(
                f"{name}-{agent}", cluster=name, common_name=f"{rbac.SUBJECT_PREFIX}{name}:{agent}"
            ),
        )
    with pytest.raises(AcceptError, match="different agents") as raised:
        await accept_cluster(api, name)
    assert f"{name}-agent1" in str(raised.value) and f"{name}-agent2" in str(raised.value)
    for agent in ("agent1", "agent2"):
        assert await decision(api, f"{name}-{agent}") == []
    assert (await api.get(ocm.MANAGED_CLUSTER, name))["spec"]["hubAcceptsClient"] is False


async def test_the_renewal_approver_renews_only_a_clusters_own_agent(
    hub: HubProcess, api: Api, unique: str
) -> None:
    """A renewal is the requester asking for its own name, in its own cluster's group."""
    thief, victim = f"ca-{unique}", f"cb-{unique}"
    identity = await accepted_agent(hub, api, thief)
    await accepted_agent(hub, api, victim)
    # A certificate whose CN names cb's agent but whose group is ca's (the hub never
    # issues one; a CA misused elsewhere could): still not cb's renewal.
    mixed = hub.identity(agent_of(victim) + "-mixed", groups_of(thief))
    async with Api.from_kubeconfig(identity.kubeconfig) as as_thief:
        await as_thief.create(
            kinds.CSR,
            csr_body(f"{victim}-by-ca", cluster=victim, common_name=agent_of(victim)),
        )
    async with Api.from_kubeconfig(mixed.kubeconfig) as as_mixed:
        await as_mixed.create(
            kinds.CSR,
            csr_body(f"{victim}-mixed", cluster=victim, common_name=mixed.user),
        )
    for name, requester in ((f"{victim}-by-ca", identity.user), (f"{victim}-mixed", mixed.user)):
        line = await eventually(_logged(hub, f"not approving CSR {name}:"))
        assert requester in line
        assert await decision(api, name) == []
    # The cluster's own agent still renews.
    own = hub.identity(agent_of(victim), groups_of(victim))
    async with Api.from_kubeconfig(own.kubeconfig) as as_own:
        await as_own.create(
            kinds.CSR, csr_body(f"{victim}-renew", cluster=victim, common_name=own.user)
        )

    async def renewed() -> bool:
        return conditions.is_true(await decision(api, f"{victim}-renew"), "Approved")

    await eventually(renewed)


def _logged(hub: HubProcess, text: str) -> Callable[[], Awaitable[str | None]]:
    """A check for ``eventually``: the hub's log line holding ``text``, once written."""

    async def line() -> str | None:
        return next((found for found in hub.log().splitlines() if text in found), None)

    return line


async def test_the_bootstrap_token_cannot_rewrite_clusters_or_csrs(
    hub: HubProcess, api: Api, token: str, unique: str
) -> None:
    pending, accepted = f"pend-{unique}", f"acc-{unique}"
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": pending}, "spec": {}})
    await accepted_agent(hub, api, accepted)
    async with Client(hub.token_kubeconfig(f"raw-{unique}", token)) as joiner:
        code, cluster = await joiner.get(f"{CLUSTERS}/{pending}")
        assert code == 200, cluster
        cluster["spec"]["hubAcceptsClient"] = False
        code, answer = await joiner.put(f"{CLUSTERS}/{pending}", cluster)
        assert code == 403, answer
        code, cluster = await joiner.get(f"{CLUSTERS}/{accepted}")
        cluster["spec"]["leaseDurationSeconds"] = 100000
        code, answer = await joiner.put(f"{CLUSTERS}/{accepted}", cluster)
        assert code == 403, answer
        code, answer = await joiner.patch(
            f"{CLUSTERS}/{accepted}", {"spec": {"leaseDurationSeconds": 100000}}
        )
        assert code == 403, answer
        code, answer = await joiner.post(
            CSRS, csr_body(f"{pending}-join", cluster=pending, common_name=agent_of(pending))
        )
        assert code == 201, answer
        answer["metadata"]["labels"]["extra"] = "x"
        code, answer = await joiner.put(f"{CSRS}/{pending}-join", answer)
        assert code == 403, answer
        code, answer = await joiner.get("/api/v1/namespaces/kube-system/configmaps/any")
        assert code == 403, answer
        # What upstream's agent does with the bootstrap credential stays allowed.
        code, answer = await joiner.get(f"{CLUSTERS}?watch=true&timeoutSeconds=1")
        assert code == 200, answer
        code, answer = await joiner.get(f"{CSRS}?watch=true&timeoutSeconds=1")
        assert code == 200, answer
    assert (await api.get(ocm.MANAGED_CLUSTER, accepted))["spec"].get(
        "leaseDurationSeconds"
    ) != 100000


def _verbs(rules: list[Obj]) -> dict[tuple[str, str], list[str]]:
    return {
        (group, resource): sorted(rule["verbs"])
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }


#: Upstream's bootstrap ClusterRole (the cluster-manager chart's, and clusteradm init's),
#: verbs by resource (pyocm names the ConfigMaps and the set).
UPSTREAM_BOOTSTRAP = {
    ("", "configmaps"): ["get"],
    ("certificates.k8s.io", "certificatesigningrequests"): ["create", "get", "list", "watch"],
    (wellknown.CLUSTER_GROUP, "managedclusters"): ["create", "get", "list", "watch"],
    (wellknown.CLUSTER_GROUP, "managedclustersets/join"): ["create"],
}


async def test_a_hub_restarted_over_the_old_wide_role_narrows_it(tmp_path: Path) -> None:
    process = HubProcess(tmp_path / "hub").start()
    try:
        async with Api.from_kubeconfig(process.kubeconfig) as admin:
            role = await eventually(lambda: admin.get(kinds.CLUSTER_ROLE, rbac.BOOTSTRAP_ROLE))
            assert _verbs(role["rules"]) == UPSTREAM_BOOTSTRAP
            configmaps = next(r for r in role["rules"] if r["resources"] == ["configmaps"])
            assert configmaps["resourceNames"] == ["cluster-info", "ca-bundle-configmap"], (
                "what clusteradm join reads, not every ConfigMap on the hub"
            )
            # What earlier pyocm hubs stored: update on every ManagedCluster and CSR.
            role["rules"] = [
                {
                    "apiGroups": ["certificates.k8s.io"],
                    "resources": ["certificatesigningrequests"],
                    "verbs": ["create", "get", "list", "update", "watch"],
                },
                {
                    "apiGroups": [wellknown.CLUSTER_GROUP],
                    "resources": ["managedclusters"],
                    "verbs": ["create", "get", "list", "update"],
                },
            ]
            await admin.update(kinds.CLUSTER_ROLE, role)
        assert process.stop() == 0
        process.start()
        async with Api.from_kubeconfig(process.kubeconfig) as admin:

            async def narrowed() -> bool:
                found = await admin.get(kinds.CLUSTER_ROLE, rbac.BOOTSTRAP_ROLE)
                return _verbs(found["rules"]) == UPSTREAM_BOOTSTRAP

            await eventually(narrowed, timeout=60)
    finally:
        assert process.stop() == 0
