"""The hub's OCM admission rules, through a real server: taint timestamps, the default
cluster set, names and URLs, the accept and join permissions, bindings, and the
``id.k8s.io`` claim that keeps a second cluster from taking a registered name."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import cluster_set, exclusive_label, grant, subject

Obj = dict[str, Any]
SET_LABEL = "cluster.open-cluster-management.io/clusterset"


def denied(webhook: str) -> str:
    """How kube-apiserver relays a webhook's denial, with upstream's webhook names."""
    return f'admission webhook "{webhook}.admission.cluster.open-cluster-management.io" denied the request: '


MUTATOR = denied("managedclustermutators")
VALIDATOR = denied("managedclustervalidators")
SET_VALIDATOR = denied("managedclustersetvalidators")
BINDING_VALIDATOR = denied("managedclustersetbindingvalidators")


async def refused(call: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await call
    return caught.value


async def test_defaults_taint_stamps_and_the_default_set(api: Api, unique: str) -> None:
    taint = {"key": "a.example.com/x", "effect": "NoSelect", "timeAdded": "2001-01-01T00:00:00Z"}
    made = await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}, "spec": {"taints": [taint]}}
    )
    assert made["spec"]["leaseDurationSeconds"] == 60
    assert made["metadata"]["labels"][SET_LABEL] == "default"
    stamped = made["spec"]["taints"][0]["timeAdded"]
    assert stamped != "2001-01-01T00:00:00Z", "a client's timeAdded is overwritten on create"

    def by_key(cluster: Obj) -> dict[str, Obj]:
        return {t["key"]: t for t in cluster["spec"].get("taints") or []}

    # The hub's taint controller also writes taints (unreachable, as nothing reports
    # availability), so each edit is retried on a conflict.
    async def edit(change: Any) -> Obj:
        while True:
            current = await api.get(ocm.MANAGED_CLUSTER, unique)
            change(current["spec"]["taints"])
            try:
                return await api.update(ocm.MANAGED_CLUSTER, current)
            except ApiError as err:
                if err.code != 409:
                    raise

    def add_and_strip(taints: list[Obj]) -> None:
        taints.append({"key": "b.example.com/y", "effect": "NoSelect"})
        for item in taints:
            if item["key"] == "a.example.com/x":
                item.pop("timeAdded")

    updated = by_key(await edit(add_and_strip))
    assert updated["a.example.com/x"]["timeAdded"] == stamped, "an unchanged taint keeps its time"
    assert updated["b.example.com/y"]["timeAdded"]

    with pytest.raises(ApiError) as caught:
        await edit(
            lambda taints: taints.append(
                {"key": "c.example.com/z", "effect": "NoSelect", "timeAdded": stamped}
            )
        )
    assert caught.value.code == 400
    assert caught.value.message == (
        MUTATOR + 'It is not allowed to set TimeAdded of Taint "c.example.com/z".'
    )


async def test_names_and_urls_are_checked(api: Api, unique: str) -> None:
    err = await refused(api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": f"{unique}.dotted"}}))
    assert err.code == 400
    assert err.message == VALIDATOR + "metadata.name format is not correct: must not contain dots"
    spec = {"managedClusterClientConfigs": [{"url": "http://cluster.example.com"}]}
    err = await refused(
        api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}, "spec": spec})
    )
    assert (
        err.code == 400
        and err.message
        == VALIDATOR + 'url "http://cluster.example.com" is invalid in client configs'
    )


async def grant_user(api: Api, user: str, rules: list[Obj]) -> None:
    await grant(api, f"test:{user}", subject("User", user), rules)


CLUSTERS = {
    "apiGroups": ["cluster.open-cluster-management.io"],
    "resources": ["managedclusters"],
    "verbs": ["*"],
}
JOIN_DEFAULT = {
    "apiGroups": ["cluster.open-cluster-management.io"],
    "resources": ["managedclustersets/join"],
    "resourceNames": ["default"],
    "verbs": ["create"],
}


async def test_accepting_needs_the_accept_permission(
    hub: HubProcess, api: Api, unique: str
) -> None:
    user = f"operator-{unique}"
    await grant_user(api, user, [CLUSTERS, JOIN_DEFAULT])
    async with Api.from_kubeconfig(hub.identity(user).kubeconfig) as as_user:
        await as_user.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}})
        err = await refused(
            as_user.patch(ocm.MANAGED_CLUSTER, unique, {"spec": {"hubAcceptsClient": True}})
        )
        assert err.code == 403
        assert err.message == VALIDATOR + (
            f'managedclusters/accept.register.open-cluster-management.io "{unique}" is forbidden: '
            f'user "{user}" cannot update the HubAcceptsClient field'
        )
        err = await refused(
            as_user.create(
                ocm.MANAGED_CLUSTER,
                {"metadata": {"name": f"{unique}-x", "labels": {SET_LABEL: "team-a"}}},
            )
        )
        assert err.code == 403
        assert err.message == VALIDATOR + (
            'managedclustersets/join.cluster.open-cluster-management.io "team-a" is forbidden: '
            f'user "{user}" cannot add/remove a ManagedCluster to/from ManagedClusterSet "team-a" '
            '(it needs create on managedclustersets/join for "team-a", or create on '
            "managedclusters/label with a resourceName of "
            f'"{SET_LABEL}:team-a", "{SET_LABEL}:*" or "*")'
        )
        assert err.details == {
            "name": "team-a",
            "group": "cluster.open-cluster-management.io",
            "kind": "managedclustersets/join",
        }
    accept = {
        "apiGroups": ["register.open-cluster-management.io"],
        "resources": ["managedclusters/accept"],
        "verbs": ["update"],
    }
    await grant_user(api, f"{user}-2", [CLUSTERS, JOIN_DEFAULT, accept])
    async with Api.from_kubeconfig(hub.identity(f"{user}-2").kubeconfig) as as_admin:
        patched = await as_admin.patch(
            ocm.MANAGED_CLUSTER, unique, {"spec": {"hubAcceptsClient": True}}
        )
        assert patched["spec"]["hubAcceptsClient"] is True


async def test_bindings_need_the_same_name_and_bind_permission(
    hub: HubProcess, api: Api, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    binding = {"metadata": {"name": "other", "namespace": unique}, "spec": {"clusterSet": "team"}}
    err = await refused(api.create(ocm.MANAGED_CLUSTER_SET_BINDING, binding))
    assert err.code == 400
    assert err.message == BINDING_VALIDATOR + (
        "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet"
    )
    user = f"team-{unique}"
    await grant_user(
        api,
        user,
        [
            {
                "apiGroups": ["cluster.open-cluster-management.io"],
                "resources": ["managedclustersetbindings"],
                "verbs": ["*"],
            }
        ],
    )
    async with Api.from_kubeconfig(hub.identity(user).kubeconfig) as as_user:
        binding = {
            "metadata": {"name": "team", "namespace": unique},
            "spec": {"clusterSet": "team"},
        }
        err = await refused(as_user.create(ocm.MANAGED_CLUSTER_SET_BINDING, binding))
    assert err.code == 403
    assert err.message == BINDING_VALIDATOR + (
        'managedclustersets/bind.cluster.open-cluster-management.io "team" is forbidden: '
        f'user "{user}" is not allowed to bind cluster set "team"'
    )
    await api.create(ocm.MANAGED_CLUSTER_SET_BINDING, binding)


async def test_a_registered_cluster_id_cannot_change(api: Api, unique: str) -> None:
    made = await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}})

    def claims(uid: str) -> Obj:
        return {"status": {"clusterClaims": [{"name": "id.k8s.io", "value": uid}]}}

    await api.patch(ocm.MANAGED_CLUSTER, unique, claims("uid-1"), subresource="status")
    await api.patch(ocm.MANAGED_CLUSTER, unique, claims("uid-1"), subresource="status")
    err = await refused(
        api.patch(ocm.MANAGED_CLUSTER, unique, claims("uid-2"), subresource="status")
    )
    assert err.code == 403
    assert err.message == VALIDATOR + (
        f'managedclusters/status.cluster.open-cluster-management.io "{unique}" is forbidden: '
        f'managed cluster "{unique}" is registered by the cluster with id.k8s.io "uid-1"; '
        'a different cluster (id.k8s.io "uid-2") cannot register under the same name'
    )
    assert made["metadata"]["name"] == unique


async def test_exclusive_label_sets_need_a_reserved_label(api: Api, unique: str) -> None:
    err = await refused(
        api.create(
            ocm.MANAGED_CLUSTER_SET,
            cluster_set(f"{unique}-a", {"selectorType": "ExclusiveLabel"}),
        )
    )
    assert err.code == 422
    assert err.message == SET_VALIDATOR + (
        f'ManagedClusterSet.cluster.open-cluster-management.io "{unique}-a" is invalid: '
        "spec.clusterSelector.exclusiveLabel: Required value: required for selectorType ExclusiveLabel"
    )
    wrong = exclusive_label("region", "apac")
    err = await refused(api.create(ocm.MANAGED_CLUSTER_SET, cluster_set(f"{unique}-b", wrong)))
    assert err.code == 422
    assert (
        'spec.clusterSelector.exclusiveLabel.key: Invalid value: "region": must start with'
        in err.message
    )
    right = exclusive_label("info.open-cluster-management.io/region", "apac")
    await api.create(ocm.MANAGED_CLUSTER_SET, cluster_set(f"{unique}-c", right))
    err = await refused(
        api.create(
            ocm.MANAGED_CLUSTER_SET, cluster_set(f"{unique}-d", {"selectorType": "Whatever"})
        )
    )
    assert err.code == 422 and "Unsupported value" in err.message


async def test_sets_are_not_bound_into_cluster_namespaces(api: Api, unique: str) -> None:
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}})
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    binding = {
        "metadata": {"name": "default", "namespace": unique},
        "spec": {"clusterSet": "default"},
    }
    err = await refused(api.create(ocm.MANAGED_CLUSTER_SET_BINDING, binding))
    assert err.code == 403
    assert err.message == BINDING_VALIDATOR + (
        'managedclustersetbindings.cluster.open-cluster-management.io "default" is forbidden: '
        f'namespace "{unique}" is the cluster namespace of managed cluster "{unique}"; '
        "bind cluster sets to a workspace namespace instead"
    )
