"""Cluster sets on a whole hub: membership for each selector type as labels change,
ClusterSetEmpty and Bound conditions, and the default and global sets."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import cluster_set, eventually, exclusive_label, grant, label_selector, subject

Obj = dict[str, Any]
SET_LABEL = "cluster.open-cluster-management.io/clusterset"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


def empty_condition(api: Api, name: str, message: str) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        found = await api.get(ocm.MANAGED_CLUSTER_SET, name)
        condition = (
            conditions.find((found.get("status") or {}).get("conditions"), "ClusterSetEmpty") or {}
        )
        return condition.get("message") == message

    return check


async def test_membership_follows_labels_for_each_selector_type(api: Api, unique: str) -> None:
    team, prod, apac = f"team-{unique}", f"prod-{unique}", f"apac-{unique}"
    await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": team}})
    await api.create(
        ocm.MANAGED_CLUSTER_SET,
        cluster_set(prod, label_selector({"env": unique})),
    )
    region = "cluster.open-cluster-management.io/region"
    await api.create(
        ocm.MANAGED_CLUSTER_SET,
        cluster_set(apac, exclusive_label(region, unique)),
    )
    for name in (team, prod, apac):
        await eventually(empty_condition(api, name, "No ManagedCluster selected"))
        found = await api.get(ocm.MANAGED_CLUSTER_SET, name)
        condition = conditions.find(found["status"]["conditions"], "ClusterSetEmpty") or {}
        assert (condition["status"], condition["reason"]) == ("True", "NoClusterMatched")

    cluster = f"c-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER,
        {"metadata": {"name": cluster, "labels": {SET_LABEL: team, "env": unique, region: unique}}},
    )
    for name in (team, prod, apac):
        await eventually(empty_condition(api, name, "1 ManagedClusters selected"))
    found = await api.get(ocm.MANAGED_CLUSTER_SET, team)
    condition = conditions.find(found["status"]["conditions"], "ClusterSetEmpty") or {}
    assert (condition["status"], condition["reason"]) == ("False", "ClustersSelected")

    await api.patch(
        ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {"env": "other", region: "emea"}}}
    )
    for name in (prod, apac):
        await eventually(empty_condition(api, name, "No ManagedCluster selected"))
    await api.delete(ocm.MANAGED_CLUSTER, cluster)
    await eventually(empty_condition(api, team, "No ManagedCluster selected"))


async def test_binding_is_bound_while_its_set_exists(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    name = f"s-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER_SET_BINDING,
        {"metadata": {"name": name, "namespace": unique}, "spec": {"clusterSet": name}},
    )

    def bound(status: str, reason: str) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            found = await api.get(ocm.MANAGED_CLUSTER_SET_BINDING, name, namespace=unique)
            condition = (
                conditions.find((found.get("status") or {}).get("conditions"), "Bound") or {}
            )
            return (condition.get("status"), condition.get("reason")) == (status, reason)

        return check

    await eventually(bound("False", "ClusterSetNotFound"))
    await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": name}})
    await eventually(bound("True", "ClusterSetBound"))
    await api.delete(ocm.MANAGED_CLUSTER_SET, name)
    await eventually(bound("False", "ClusterSetNotFound"))


async def test_default_and_global_sets_are_kept(api: Api) -> None:
    default = await eventually(lambda: api.get(ocm.MANAGED_CLUSTER_SET, "default"))
    assert default["spec"]["clusterSelector"] == {"selectorType": "ExclusiveClusterSetLabel"}
    global_set = await eventually(lambda: api.get(ocm.MANAGED_CLUSTER_SET, "global"))
    assert global_set["spec"]["clusterSelector"] == {
        "selectorType": "LabelSelector",
        "labelSelector": {},
    }

    global_set["spec"]["clusterSelector"] = {
        "selectorType": "LabelSelector",
        "labelSelector": {"matchLabels": {"x": "y"}},
    }
    await api.update(ocm.MANAGED_CLUSTER_SET, global_set)

    async def reset() -> bool:
        found = await api.get(ocm.MANAGED_CLUSTER_SET, "global")
        return bool(
            found["spec"]["clusterSelector"]
            == {"selectorType": "LabelSelector", "labelSelector": {}}
        )

    await eventually(reset)
    await api.delete(ocm.MANAGED_CLUSTER_SET, "default")
    await eventually(lambda: api.get(ocm.MANAGED_CLUSTER_SET, "default"))


async def test_member_clusters_list_their_sets_managed_namespaces(api: Api, unique: str) -> None:
    team, prod = f"team-{unique}", f"prod-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER_SET,
        cluster_set(team, managedNamespaces=[{"name": "z"}, {"name": "a"}]),
    )
    await api.create(
        ocm.MANAGED_CLUSTER_SET,
        cluster_set(prod, label_selector({"env": unique}), managedNamespaces=[{"name": "apps"}]),
    )
    cluster = f"c-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER,
        {"metadata": {"name": cluster, "labels": {SET_LABEL: team, "env": unique}}},
    )

    def listed(*expected: tuple[str, str]) -> Callable[[], Awaitable[Obj]]:
        async def check() -> Obj:
            found = await api.get(ocm.MANAGED_CLUSTER, cluster)
            entries = (found.get("status") or {}).get("managedNamespaces") or []
            assert [(e["clusterSet"], e["name"]) for e in entries] == list(expected)
            return found

        return check

    found = await eventually(listed((prod, "apps"), (team, "a"), (team, "z")))

    # The agent reports a condition per entry; the hub keeps it while the entry stays.
    entries = found["status"]["managedNamespaces"]
    entries[0]["conditions"] = [
        {
            "type": "NamespaceAvailable",
            "status": "True",
            "reason": "NamespaceApplied",
            "message": "Namespace successfully applied and managed",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    await api.patch(
        ocm.MANAGED_CLUSTER,
        cluster,
        {"status": {"managedNamespaces": entries}},
        subresource="status",
    )
    team_set = await api.get(ocm.MANAGED_CLUSTER_SET, team)
    team_set["spec"]["managedNamespaces"] = [{"name": "a"}]
    await api.update(ocm.MANAGED_CLUSTER_SET, team_set)
    found = await eventually(listed((prod, "apps"), (team, "a")))
    assert found["status"]["managedNamespaces"][0]["conditions"][0]["reason"] == "NamespaceApplied"

    await api.patch(ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {"env": "other"}}})
    await eventually(listed((team, "a")))
    await api.delete(ocm.MANAGED_CLUSTER_SET, team)
    await eventually(listed())


async def test_example_3_dev_and_qa_teams_move_clusters_only_into_their_own_set(
    hub: HubProcess, api: Api, unique: str
) -> None:
    """Seed 002, example 3, with the admin's sets and the teams' ClusterRoles as written.
    The seed's sets select ``clusterset: dev`` while the roles grant
    ``clusterset:devset``; here the label value is the set's name, as the design's
    migration section requires, so the grants and the sets agree."""
    teams = {"dev": f"devset-{unique}", "qa": f"qaset-{unique}"}
    group = "cluster.open-cluster-management.io"
    for team, own in teams.items():
        await api.create(
            ocm.MANAGED_CLUSTER_SET, cluster_set(own, exclusive_label(SET_LABEL, own))
        )
        rules = [
            {"apiGroups": [group], "resources": ["managedclusters"], "verbs": ["create"]},
            {
                "apiGroups": [group],
                "resources": ["managedclustersets"],
                "resourceNames": [own],
                "verbs": ["get"],
            },
            {
                "apiGroups": [group],
                "resources": ["managedclusters/label"],
                "resourceNames": [f"{SET_LABEL}:{own}"],
                "verbs": ["create"],
            },
            {
                "apiGroups": [group],
                "resources": ["managedclustersets/bind"],
                "resourceNames": [own],
                "verbs": ["create"],
            },
        ]
        await grant(
            api, f"clustersetrole-{team}-{unique}", subject("Group", f"{team}-{unique}"), rules
        )

    def cluster(name: str, member_of: str) -> Obj:
        return {"metadata": {"name": name, "labels": {SET_LABEL: member_of}}}

    for team, own in teams.items():
        other = next(s for s in teams.values() if s != own)
        member = hub.identity(f"{team}-member-{unique}", (f"{team}-{unique}",))
        async with Api.from_kubeconfig(member.kubeconfig) as as_member:
            await as_member.create(ocm.MANAGED_CLUSTER, cluster(f"{team}-1-{unique}", own))
            with pytest.raises(ApiError) as caught:
                await as_member.create(ocm.MANAGED_CLUSTER, cluster(f"{team}-2-{unique}", other))
            assert caught.value.code == 403
            assert f'ManagedClusterSet "{other}"' in caught.value.message
            with pytest.raises(ApiError) as caught:
                await as_member.create(
                    ocm.MANAGED_CLUSTER, {"metadata": {"name": f"{team}-3-{unique}"}}
                )
            assert caught.value.code == 403, "no grant for the default set"
            await as_member.get(ocm.MANAGED_CLUSTER_SET, own)
            with pytest.raises(ApiError) as caught:
                await as_member.get(ocm.MANAGED_CLUSTER_SET, other)
            assert caught.value.code == 403
    for own in teams.values():
        await eventually(empty_condition(api, own, "1 ManagedClusters selected"))
    # Neither team can move the other's cluster, nor its own one out of its set: the
    # roles give no update on clusters, and the label grant names one set only.
    async with Api.from_kubeconfig(
        hub.identity(f"dev-member-{unique}", (f"dev-{unique}",)).kubeconfig
    ) as as_dev:
        for name, target in ((f"qa-1-{unique}", teams["dev"]), (f"dev-1-{unique}", teams["qa"])):
            with pytest.raises(ApiError) as caught:
                await as_dev.patch(
                    ocm.MANAGED_CLUSTER, name, {"metadata": {"labels": {SET_LABEL: target}}}
                )
            assert caught.value.code == 403


async def test_no_default_or_global_set_with_the_gate_off(tmp_path: Path) -> None:
    process = HubProcess(
        tmp_path / "hub", extra_args=["--feature-gates", "DefaultClusterSet=false"]
    )
    process.start()
    try:
        async with Api.from_kubeconfig(process.kubeconfig) as api:
            # The set controllers run (a new set gets its condition) ...
            await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": "probe"}})
            await eventually(empty_condition(api, "probe", "No ManagedCluster selected"))
            # ... but create neither default set, and new clusters stay unlabelled.
            made = await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": "c1"}})
            assert SET_LABEL not in (made["metadata"].get("labels") or {})
            names = [
                s["metadata"]["name"] for s in (await api.list(ocm.MANAGED_CLUSTER_SET))["items"]
            ]
            assert names == ["probe"]
    finally:
        assert process.stop() == 0


async def test_sets_sharing_an_exclusive_key_never_overlap(api: Api, unique: str) -> None:
    """One value per key: a cluster is in at most one of the sets built on that key, and
    relabelling moves it from one to the other."""
    key = "cluster.open-cluster-management.io/tier"
    gold, silver = f"gold-{unique}", f"silver-{unique}"
    for name in (gold, silver):
        await api.create(
            ocm.MANAGED_CLUSTER_SET,
            cluster_set(name, exclusive_label(key, name)),
        )
    clusters = [f"c{i}-{unique}" for i in range(3)]
    for name, tier in zip(clusters, (gold, gold, silver), strict=True):
        await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name, "labels": {key: tier}}})
    await eventually(empty_condition(api, gold, "2 ManagedClusters selected"))
    await eventually(empty_condition(api, silver, "1 ManagedClusters selected"))
    await api.patch(ocm.MANAGED_CLUSTER, clusters[0], {"metadata": {"labels": {key: silver}}})
    await eventually(empty_condition(api, gold, "1 ManagedClusters selected"))
    await eventually(empty_condition(api, silver, "2 ManagedClusters selected"))
