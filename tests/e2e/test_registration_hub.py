"""The hub's registration controllers, running inside a real ``pyocm hub``, acting on
ManagedClusters created through the API: accept, deny, delete, leases, taints, renewal CSRs."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki.csr import build_csr
from pyocm.pki.keys import generate_private_key
from pyocm.registration.hub import rbac
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


async def missing(api: Api, kind: kinds.Kind, name: str, namespace: str | None = None) -> bool:
    try:
        await api.get(kind, name, namespace=namespace)
    except ApiError as err:
        return err.code == 404
    return False


def condition(cluster: Obj, type: str) -> Obj | None:
    return conditions.find((cluster.get("status") or {}).get("conditions"), type)


async def cleanup_finalizer(api: Api, name: str) -> bool:
    """Whether the resource-cleanup controller has put its finalizer on cluster ``name``."""
    cluster = await api.get(ocm.MANAGED_CLUSTER, name)
    return wellknown.RESOURCE_CLEANUP_FINALIZER in cluster["metadata"].get("finalizers", [])


async def test_accept_grants_access_deny_revokes_it_delete_cleans_up(api: Api, unique: str) -> None:
    name = f"c-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": False}}
    )

    # Not accepted: the taint controller marks it unreachable, and nothing is granted.
    async def tainted() -> bool:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        taints = cluster["spec"].get("taints") or []
        return [(t["key"], t["effect"]) for t in taints] == [
            (wellknown.TAINT_UNREACHABLE, "NoSelect")
        ]

    await eventually(tainted)
    assert await missing(api, kinds.CLUSTER_ROLE, rbac.cluster_role_name(name))
    assert await missing(api, kinds.NAMESPACE, name)

    await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": True}})

    async def accepted() -> Obj | None:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        found = condition(cluster, wellknown.CLUSTER_HUB_ACCEPTED)
        return cluster if found and found["status"] == "True" else None

    cluster = await eventually(accepted)
    hub_accepted = condition(cluster, wellknown.CLUSTER_HUB_ACCEPTED) or {}
    assert hub_accepted["reason"] == "HubClusterAdminAccepted"
    assert hub_accepted["message"] == "Accepted by hub cluster admin"
    assert wellknown.API_RESOURCE_CLEANUP_FINALIZER in cluster["metadata"]["finalizers"]
    await eventually(lambda: cleanup_finalizer(api, name))
    namespace = await api.get(kinds.NAMESPACE, name)
    assert namespace["metadata"]["labels"][wellknown.CLUSTER_NAME_LABEL] == name
    role = await api.get(kinds.CLUSTER_ROLE, rbac.cluster_role_name(name))
    assert len(role["rules"]) == 4 and {"renew"} in [set(r["verbs"]) for r in role["rules"]]
    binding = await api.get(kinds.CLUSTER_ROLE_BINDING, rbac.cluster_role_name(name))
    assert [s["name"] for s in binding["subjects"]] == [
        f"system:open-cluster-management:{name}",
        f"open-cluster-management:{name}",
    ]
    await api.get(kinds.ROLE_BINDING, rbac.registration_binding_name(name), namespace=name)
    work = await api.get(kinds.ROLE_BINDING, rbac.work_binding_name(name), namespace=name)
    assert work["metadata"]["finalizers"] == [wellknown.MANIFEST_WORK_CLEANUP_FINALIZER]
    for common in (rbac.REGISTRATION_ROLE, rbac.WORK_ROLE):
        await api.get(kinds.CLUSTER_ROLE, common)
    lease = await eventually(lambda: api.get(kinds.LEASE, "managed-cluster-lease", namespace=name))
    assert lease["spec"]["holderIdentity"] == "managed-cluster-lease"

    # The acceptance is on record as an Event about the cluster (cluster-scoped: "default").
    async def accepted_event() -> bool:
        listed = await api.list(kinds.EVENT, namespace="default", fields=f"regarding.name={name}")
        return "ManagedClusterAccepted" in [e["reason"] for e in listed["items"]]

    await eventually(accepted_event)

    # A deleted RoleBinding comes back: the controller watches what it owns.
    await api.delete(kinds.ROLE_BINDING, rbac.registration_binding_name(name), namespace=name)
    await eventually(
        lambda: api.get(kinds.ROLE_BINDING, rbac.registration_binding_name(name), namespace=name)
    )

    # Deny: back to read-only on its own ManagedCluster, bindings gone, namespace kept.
    await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": False}})

    async def denied() -> bool:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        found = condition(cluster, wellknown.CLUSTER_HUB_ACCEPTED) or {}
        return found.get("status") == "False" and found.get("reason") == "HubClusterAdminDenied"

    await eventually(denied)
    role = await api.get(kinds.CLUSTER_ROLE, rbac.cluster_role_name(name))
    assert [r["verbs"] for r in role["rules"]] == [["get", "list", "watch"]]
    assert await missing(api, kinds.ROLE_BINDING, rbac.work_binding_name(name), name)
    assert await missing(api, kinds.ROLE_BINDING, rbac.registration_binding_name(name), name)
    await api.get(kinds.NAMESPACE, name)

    # Delete: finalizers run, the cluster and its RBAC go; the namespace stays.
    await api.delete(ocm.MANAGED_CLUSTER, name)
    await eventually(lambda: missing(api, ocm.MANAGED_CLUSTER, name))
    assert await missing(api, kinds.CLUSTER_ROLE, rbac.cluster_role_name(name))
    assert await missing(api, kinds.CLUSTER_ROLE_BINDING, rbac.cluster_role_name(name))
    await api.get(kinds.NAMESPACE, name)


async def test_removal_deletes_manifestworks_before_letting_the_cluster_go(
    api: Api, unique: str
) -> None:
    name = f"gc-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}}
    )
    await eventually(lambda: api.get(kinds.NAMESPACE, name))
    work = {
        "metadata": {"name": "w", "namespace": name, "finalizers": ["test.example.com/hold"]},
        # One manifest: the hub's work admission refuses a work without any.
        "spec": {
            "workload": {
                "manifests": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "cm", "namespace": "default"},
                    }
                ]
            }
        },
    }
    await api.create(ocm.MANIFEST_WORK, work)
    # The resource-cleanup controller adds its finalizer in its own time (a backlog of
    # other clusters can delay it); a cluster deleted before that is not its to clean.
    await eventually(lambda: cleanup_finalizer(api, name))
    await api.delete(ocm.MANAGED_CLUSTER, name)

    async def remaining() -> bool:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        found = condition(cluster, wellknown.CLUSTER_DELETING) or {}
        return found.get("reason") == "ResourceRemaining"

    await eventually(remaining)

    async def asked_to_go() -> bool:
        held = await api.get(ocm.MANIFEST_WORK, "w", namespace=name)
        return bool(held["metadata"].get("deletionTimestamp"))

    await eventually(asked_to_go)
    await api.patch(ocm.MANIFEST_WORK, "w", {"metadata": {"finalizers": None}}, namespace=name)
    await eventually(lambda: missing(api, ocm.MANAGED_CLUSTER, name), timeout=30)


async def test_renewal_csr_is_approved_only_for_the_accepted_cluster_agent(
    hub: HubProcess, api: Api, unique: str
) -> None:
    name = f"r-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}}
    )
    await eventually(
        lambda: api.get(kinds.ROLE_BINDING, rbac.registration_binding_name(name), namespace=name)
    )
    agent = f"system:open-cluster-management:{name}:agent1"
    groups = (f"system:open-cluster-management:{name}", rbac.MANAGED_CLUSTERS_GROUP)
    identity = hub.identity(agent, groups)

    def csr_body(csr_name: str, common_name: str) -> Obj:
        request = build_csr(
            generate_private_key(), common_name=common_name, organizations=list(groups)
        )
        return {
            "metadata": {"name": csr_name, "labels": {wellknown.CLUSTER_NAME_LABEL: name}},
            "spec": {
                "request": base64.b64encode(request).decode(),
                "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["digital signature", "key encipherment", "client auth"],
            },
        }

    async with Api.from_kubeconfig(identity.kubeconfig) as as_agent:
        await as_agent.create(kinds.CSR, csr_body(f"{name}-renew", agent))
        # Same agent, but asking for another agent's name: not a renewal, left alone.
        await as_agent.create(
            kinds.CSR, csr_body(f"{name}-other", f"system:open-cluster-management:{name}:agent2")
        )

    async def approved(csr_name: str) -> Obj | None:
        csr = await api.get(kinds.CSR, csr_name)
        return (
            csr
            if conditions.is_true((csr.get("status") or {}).get("conditions"), "Approved")
            else None
        )

    csr = await eventually(lambda: approved(f"{name}-renew"))
    approval = conditions.find(csr["status"]["conditions"], "Approved") or {}
    assert approval["reason"] == "AutoApprovedByHubCSRApprovingController"
    assert await eventually(lambda: _issued(api, f"{name}-renew")), (
        "the hub signs approved client CSRs"
    )
    await asyncio.sleep(0.5)
    assert not await approved(f"{name}-other")


async def _issued(api: Api, name: str) -> bool:
    csr = await api.get(kinds.CSR, name)
    return bool((csr.get("status") or {}).get("certificate"))
