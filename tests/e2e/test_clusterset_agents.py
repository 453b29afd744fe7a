"""Cluster sets with real agents: the namespaces a set manages appear on its member
clusters, and agents publish ``info.open-cluster-management.io/*`` labels that sets
select on, when the hub grants them (the Override design's first two examples)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.agent.namespaces import hub_label
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import available, embedded, running_agent
from tests.support import (
    RBAC,
    cluster_set,
    eventually,
    exclusive_label,
    grant,
    label_selector,
    subject,
)

Obj = dict[str, Any]
GROUP = "cluster.open-cluster-management.io"
SET_LABEL = "cluster.open-cluster-management.io/clusterset"
REGION = "info.open-cluster-management.io/region"
MIDDLEWARE = "info.open-cluster-management.io/middlewareEnabled"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


def agents_of(cluster: str) -> Obj:
    """The group every agent certificate of ``cluster`` carries."""
    return subject("Group", f"system:open-cluster-management:{cluster}")


def label_rule(*names: str) -> Obj:
    return {
        "apiGroups": [GROUP],
        "resources": ["managedclusters/label"],
        "resourceNames": list(names),
        "verbs": ["create"],
    }


def set_members(api: Api, name: str, count: int) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        found = await api.get(ocm.MANAGED_CLUSTER_SET, name)
        empty = conditions.find((found.get("status") or {}).get("conditions"), "ClusterSetEmpty")
        wanted = f"{count} ManagedClusters selected" if count else "No ManagedCluster selected"
        return bool(empty and empty["message"] == wanted)

    return check


async def labels_of(api: Api, cluster: str) -> dict[str, str]:
    return dict((await api.get(ocm.MANAGED_CLUSTER, cluster))["metadata"].get("labels") or {})


async def test_member_clusters_get_the_sets_namespaces(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    name, team = f"c-{unique}", f"team-{unique}"
    managed = await embedded(tmp_path, "m")
    try:
        await api.create(
            ocm.MANAGED_CLUSTER_SET,
            cluster_set(team, managedNamespaces=[{"name": "apps"}, {"name": "tools"}]),
        )
        async with running_agent(api, hub, managed, name):
            await api.patch(
                ocm.MANAGED_CLUSTER, name, {"metadata": {"labels": {SET_LABEL: team}}}
            )
            label = hub_label(hub.url)

            async def applied(namespace: str, value: str) -> bool:
                found = await managed.api.get(kinds.NAMESPACE, namespace)
                return bool(found["metadata"]["labels"].get(label) == value)

            async def reported() -> list[Obj]:
                cluster = await api.get(ocm.MANAGED_CLUSTER, name)
                entries = cluster["status"].get("managedNamespaces") or []
                assert [e["name"] for e in entries] == ["apps", "tools"]
                for entry in entries:
                    condition = conditions.find(entry.get("conditions"), "NamespaceAvailable")
                    assert condition and condition["reason"] == "NamespaceApplied"
                return entries

            await eventually(lambda: applied("apps", "true"))
            await eventually(lambda: applied("tools", "true"))
            entries = await eventually(reported)
            assert entries[0]["conditions"][0]["message"] == (
                "Namespace successfully applied and managed"
            )

            # A namespace the set no longer manages stays, marked "false"; so does every
            # namespace once the cluster leaves the set.
            found = await api.get(ocm.MANAGED_CLUSTER_SET, team)
            found["spec"]["managedNamespaces"] = [{"name": "apps"}]
            await api.update(ocm.MANAGED_CLUSTER_SET, found)
            await eventually(lambda: applied("tools", "false"))
            await api.patch(
                ocm.MANAGED_CLUSTER, name, {"metadata": {"labels": {SET_LABEL: "default"}}}
            )
            await eventually(lambda: applied("apps", "false"))
    finally:
        await managed.stop()


async def test_example_1_an_apac_set_from_agent_published_regions(
    hub: HubProcess,
    api: Api,
    tmp_path: Path,
    unique: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 002, example 1: agents may label their own cluster's region; the admin's
    ExclusiveLabel set then holds every apac cluster. (The seed's YAML says v1beta1,
    which upstream no longer serves; v1beta2 has the same fields.)"""
    tokyo, paris, rogue = f"tokyo-{unique}", f"paris-{unique}", f"rogue-{unique}"
    for cluster in (tokyo, paris):
        rule = label_rule(f"{REGION}:*")
        await grant(api, f"test:region:{cluster}", agents_of(cluster), [rule])
    clusters = [await embedded(tmp_path, n) for n in ("tokyo", "paris", "rogue")]
    apacset = f"apacset-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER_SET, cluster_set(apacset, exclusive_label(REGION, "apac"))
    )
    caplog.set_level(logging.WARNING, logger="pyocm.registration.agent.labels")
    try:
        async with (
            running_agent(api, hub, clusters[0], tokyo, labels=((REGION, "apac"),)),
            running_agent(api, hub, clusters[1], paris, labels=((REGION, "emea"),)),
            running_agent(api, hub, clusters[2], rogue, labels=((REGION, "apac"),)),
        ):

            async def published() -> bool:
                return (await labels_of(api, tokyo)).get(REGION) == "apac" and (
                    await labels_of(api, paris)
                ).get(REGION) == "emea"

            await eventually(published)
            await eventually(set_members(api, apacset, 1))

            # The rogue agent holds no grant: the hub refuses, the agent says so and
            # keeps running; its cluster stays out of the set.
            def refused() -> Any:
                async def check() -> bool:
                    return any(
                        f'cannot add/change/remove label "{REGION}=apac"' in r.getMessage()
                        for r in caplog.records
                    )

                return check

            await eventually(refused())
            assert REGION not in await labels_of(api, rogue)
            assert await available(api, rogue), "refused labels do not stop the agent"
    finally:
        for cluster in clusters:
            await cluster.stop()


async def test_example_2_a_team_binds_the_middleware_set(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    """Seed 002, example 2: agents mark clusters with middleware; the admin's LabelSelector
    set selects them; a DEV team member may get and bind that set, and nothing more."""
    with_mw, without = f"mw-{unique}", f"plain-{unique}"
    await grant(api, f"test:mw:{with_mw}", agents_of(with_mw), [label_rule(f"{MIDDLEWARE}:true")])
    clusters = [await embedded(tmp_path, n) for n in ("mw", "plain")]
    middlewareenabledset = f"middlewareenabledset-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER_SET,
        cluster_set(middlewareenabledset, label_selector({MIDDLEWARE: "true"})),
    )
    other_set = f"other-{unique}"
    await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": other_set}})
    developer, namespace = f"dev-{unique}", f"dev-{unique}"
    user = subject("User", developer)
    await grant(
        api,
        f"test:clustersetrole:{unique}",
        user,
        [
            {
                "apiGroups": [GROUP],
                "resources": ["managedclustersets"],
                "resourceNames": [middlewareenabledset],
                "verbs": ["get"],
            },
            {
                "apiGroups": [GROUP],
                "resources": ["managedclustersets/bind"],
                "resourceNames": [middlewareenabledset],
                "verbs": ["create"],
            },
        ],
    )
    # The developer's own namespace, where they may manage bindings.
    await api.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    bindings = {
        "apiGroups": [GROUP],
        "resources": ["managedclustersetbindings"],
        "verbs": ["create", "get", "list", "watch", "delete"],
    }
    await api.create(
        kinds.ROLE,
        {"metadata": {"name": "bindings", "namespace": namespace}, "rules": [bindings]},
    )
    await api.create(
        kinds.ROLE_BINDING,
        {
            "metadata": {"name": "bindings", "namespace": namespace},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "bindings"},
            "subjects": [user],
        },
    )
    try:
        async with (
            running_agent(api, hub, clusters[0], with_mw, labels=((MIDDLEWARE, "true"),)),
            running_agent(api, hub, clusters[1], without),
        ):
            await eventually(set_members(api, middlewareenabledset, 1))
            assert MIDDLEWARE not in await labels_of(api, without)
            async with Api.from_kubeconfig(hub.identity(developer).kubeconfig) as as_dev:
                await as_dev.get(ocm.MANAGED_CLUSTER_SET, middlewareenabledset)
                for attempt in (
                    as_dev.get(ocm.MANAGED_CLUSTER_SET, other_set),
                    as_dev.list(ocm.MANAGED_CLUSTER_SET),
                    as_dev.create(
                        ocm.MANAGED_CLUSTER_SET_BINDING,
                        {
                            "metadata": {"name": other_set, "namespace": namespace},
                            "spec": {"clusterSet": other_set},
                        },
                    ),
                ):
                    with pytest.raises(ApiError) as caught:
                        await attempt
                    assert caught.value.code == 403
                await as_dev.create(
                    ocm.MANAGED_CLUSTER_SET_BINDING,
                    {
                        "metadata": {"name": middlewareenabledset, "namespace": namespace},
                        "spec": {"clusterSet": middlewareenabledset},
                    },
                )

                async def bound() -> bool:
                    found = await as_dev.get(
                        ocm.MANAGED_CLUSTER_SET_BINDING, middlewareenabledset, namespace=namespace
                    )
                    condition = conditions.find(
                        (found.get("status") or {}).get("conditions"), "Bound"
                    )
                    return bool(condition and condition["status"] == "True")

                await eventually(bound)
    finally:
        for cluster in clusters:
            await cluster.stop()
