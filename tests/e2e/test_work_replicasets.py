"""ManifestWorkReplicaSets on a real hub with the gate ``ManifestWorkReplicaSet`` on, with
the hub's own Placement controller choosing the clusters: works made, moved, counted,
rolled out and cleaned up as upstream's controller does; and with the gate off nothing
acts on a set.

Clusters are created as the admin with no agents (the hub taints them unreachable, so
each placement tolerates that); the status a cluster's work agent would report is
written by the test through ``manifestworks/status``, as an agent writes it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import cluster_set, eventually, label_selector

Obj = dict[str, Any]
OWNER = "work.open-cluster-management.io/manifestworkreplicaset"
PLACEMENT_NAME = "work.open-cluster-management.io/placementname"
FINALIZER = "work.open-cluster-management.io/manifest-work-cleanup"
#: No agent runs for these clusters: the hub taints them unreachable.
AGENTLESS = [
    {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
    {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
]
TEMPLATE = {
    "workload": {
        "manifests": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cm", "namespace": "default"},
                "data": {"a": "b"},
            }
        ]
    },
    # The server defaults these (feedbackScrapeType Poll, updateStrategy's fieldManager)
    # in the set's template and in each work alike: they still compare equal.
    "manifestConfigs": [
        {
            "resourceIdentifier": {"resource": "configmaps", "name": "cm", "namespace": "default"},
            "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {}},
        }
    ],
}


@pytest.fixture(scope="module")
def gated_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = HubProcess(
        tmp_path_factory.mktemp("mwrs-hub"),
        extra_args=["--feature-gates", "ManifestWorkReplicaSet=true"],
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest_asyncio.fixture
async def hub_api(gated_hub: HubProcess) -> AsyncIterator[Api]:
    async with Api.from_kubeconfig(gated_hub.kubeconfig) as client:
        yield client


class Fleet:
    """One test's namespace, set (selecting label ``fleet=<unique>``), binding and
    clusters (each with its namespace) on the gated hub."""

    def __init__(self, api: Api, unique: str) -> None:
        self.api, self.unique = api, unique
        self.namespace = f"mwrs-{unique}"
        self.set = f"set-{unique}"
        self.clusters: list[str] = []

    async def start(self) -> None:
        await self.api.create(kinds.NAMESPACE, {"metadata": {"name": self.namespace}})
        await self.api.create(
            ocm.MANAGED_CLUSTER_SET, cluster_set(self.set, label_selector({"fleet": self.unique}))
        )
        await self.api.create(
            ocm.MANAGED_CLUSTER_SET_BINDING,
            {
                "metadata": {"name": self.set, "namespace": self.namespace},
                "spec": {"clusterSet": self.set},
            },
        )

    async def cluster(self, name: str, **labels: str) -> str:
        full = f"{name}-{self.unique}"
        await self.api.create(
            ocm.MANAGED_CLUSTER,
            {
                "metadata": {"name": full, "labels": {"fleet": self.unique, **labels}},
                "spec": {"hubAcceptsClient": True},
            },
        )
        # The hub's registration controllers make an accepted cluster's namespace too.
        with contextlib.suppress(ApiError):
            await self.api.create(kinds.NAMESPACE, {"metadata": {"name": full}})
        self.clusters.append(full)
        return full

    async def label(self, cluster: str, **labels: str | None) -> None:
        await self.api.patch(ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": labels}})

    async def placement(self, name: str, **spec: Any) -> None:
        spec["tolerations"] = AGENTLESS
        await self.api.create(
            ocm.PLACEMENT, {"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}
        )

    async def replica_set(self, name: str, *refs: Obj, **spec: Any) -> Obj:
        return await self.api.create(
            ocm.MANIFEST_WORK_REPLICA_SET,
            {
                "metadata": {"name": name, "namespace": self.namespace, "labels": {"team": "a"}},
                "spec": {"placementRefs": list(refs), "manifestWorkTemplate": TEMPLATE, **spec},
            },
        )

    async def get(self, name: str) -> Obj:
        return await self.api.get(ocm.MANIFEST_WORK_REPLICA_SET, name, namespace=self.namespace)

    async def works(self, name: str) -> dict[str, Obj]:
        """The set's works by cluster."""
        found = await self.api.list(ocm.MANIFEST_WORK, labels=f"{OWNER}={self.namespace}.{name}")
        return {w["metadata"]["namespace"]: w for w in found["items"]}

    async def wait_works(
        self, name: str, clusters: list[str], timeout: float = 30
    ) -> dict[str, Obj]:
        async def check() -> dict[str, Obj]:
            found = await self.works(name)
            assert sorted(found) == sorted(clusters)
            return found or {"": {}}

        got: dict[str, Obj] = await eventually(check, timeout=timeout)
        return {k: v for k, v in got.items() if k}

    async def stop(self) -> None:
        for name in self.clusters:
            with contextlib.suppress(ApiError):
                await self.api.delete(ocm.MANAGED_CLUSTER, name)
        with contextlib.suppress(ApiError):
            await self.api.delete(ocm.MANAGED_CLUSTER_SET, self.set)


@pytest_asyncio.fixture
async def fleet(hub_api: Api, unique: str) -> AsyncIterator[Fleet]:
    made = Fleet(hub_api, unique)
    await made.start()
    yield made
    await made.stop()


def condition_of(obj: Any, type: str) -> tuple[str, str]:
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == type:
            return c["status"], c["reason"]
    raise AssertionError(f"no {type} condition yet")


def summary(
    total: int, *, applied: int = 0, available: int = 0, progressing: int = 0, degraded: int = 0
) -> Obj:
    return {
        "total": total,
        "applied": applied,
        "available": available,
        "progressing": progressing,
        "degraded": degraded,
    }


def counts(found: Obj) -> Obj:
    return {k: found.get(k, 0) for k in summary(0)}


async def test_works_follow_the_placement(fleet: Fleet) -> None:
    a = await fleet.cluster("a", env="prod")
    b = await fleet.cluster("b", env="prod")
    await fleet.cluster("c", env="dev")
    prod = {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
    await fleet.placement("prod", predicates=[prod])
    made = await fleet.replica_set("app", {"name": "prod"})

    works = await fleet.wait_works("app", [a, b])
    for work in works.values():
        assert work["metadata"]["name"].startswith("app")
        assert work["metadata"]["labels"] == {
            "team": "a",
            OWNER: f"{fleet.namespace}.app",
            PLACEMENT_NAME: "prod",
        }
        assert work["spec"] == made["spec"]["manifestWorkTemplate"]
        [config] = work["spec"]["manifestConfigs"]
        assert config["feedbackScrapeType"] == "Poll"
        assert config["updateStrategy"]["serverSideApply"]["fieldManager"] == "work-agent"

    async def verified() -> Obj:
        got = await fleet.get("app")
        assert condition_of(got, "PlacementVerified") == ("True", "AsExpected")
        # No agent has applied anything: the rollout is still under way.
        assert condition_of(got, "PlacementRolledOut") == ("False", "Progressing")
        assert condition_of(got, "ManifestworkApplied") == ("False", "NotAsExpected")
        return got

    got = await eventually(verified)
    assert FINALIZER in got["metadata"]["finalizers"]
    assert counts(got["status"]["summary"]) == summary(2)
    [placement] = got["status"]["placementSummary"]
    assert placement["name"] == "prod"
    assert placement["availableDecisionGroups"] == "1 (2 / 2 clusters applied)"
    assert counts(placement["summary"]) == summary(2)
    assert made["metadata"]["uid"] == got["metadata"]["uid"]

    # Out of the placement: its work goes; a new matching cluster gets one.
    await fleet.label(b, env="dev")
    d = await fleet.cluster("d", env="prod")
    await fleet.wait_works("app", [a, d])

    # Back in: it gets a work again (a new one: the first was deleted).
    await fleet.label(b, env="prod")
    back = await fleet.wait_works("app", [a, b, d])
    assert back[b]["metadata"]["uid"] != works[b]["metadata"]["uid"]
    assert back[b]["spec"] == made["spec"]["manifestWorkTemplate"]


def agent_conditions(generation: int, **states: str) -> list[Obj]:
    """Work conditions as an agent reports them for ``generation``: type -> status."""
    now = timefmt.now_rfc3339()
    return [
        {
            "type": type,
            "status": status,
            "reason": "AppliedManifestComplete" if status == "True" else "Reason",
            "message": "",
            "observedGeneration": generation,
            "lastTransitionTime": now,
        }
        for type, status in states.items()
    ]


async def report(api: Api, work: Obj, **states: str) -> None:
    """Write a work's status as its cluster's agent would."""
    meta = work["metadata"]
    await api.patch(
        ocm.MANIFEST_WORK,
        meta["name"],
        {"status": {"conditions": agent_conditions(meta["generation"], **states)}},
        namespace=meta["namespace"],
        subresource="status",
    )


async def test_summary_counts_the_agents_reports(fleet: Fleet, hub_api: Api) -> None:
    clusters = [await fleet.cluster(n) for n in ("a", "b", "c")]
    await fleet.placement("all")
    await fleet.replica_set("app", {"name": "all"})
    works = await fleet.wait_works("app", clusters)
    a, b, c = (works[n] for n in clusters)
    await report(hub_api, a, Applied="True", Available="True", Progressing="False")
    await report(hub_api, b, Applied="True", Available="False", Progressing="True")
    await report(hub_api, c, Applied="True", Available="True", Progressing="True", Degraded="True")

    async def counted(expected: Obj, reason: tuple[str, str], rolled: tuple[str, str]) -> None:
        async def check() -> bool:
            got = await fleet.get("app")
            assert counts(got["status"]["summary"]) == expected
            assert counts(got["status"]["placementSummary"][0]["summary"]) == expected
            assert condition_of(got, "ManifestworkApplied") == reason
            assert condition_of(got, "PlacementRolledOut") == rolled
            return True

        await eventually(check)

    await counted(
        summary(3, applied=3, available=2, progressing=2, degraded=1),
        ("False", "NotAsExpected"),
        ("False", "Progressing"),
    )
    await report(hub_api, c, Applied="True", Available="True", Progressing="True", Degraded="False")
    await counted(
        summary(3, applied=3, available=2, progressing=2),
        ("False", "Processing"),
        ("False", "Progressing"),
    )
    for work in (b, c):
        await report(hub_api, work, Applied="True", Available="True", Progressing="False")
    await counted(summary(3, applied=3, available=3), ("True", "AsExpected"), ("True", "Complete"))


async def test_a_template_change_reaches_every_work(fleet: Fleet, hub_api: Api) -> None:
    cluster = await fleet.cluster("a")
    await fleet.placement("all")
    spec = {"deleteOption": {"propagationPolicy": "Orphan"}}
    await fleet.replica_set("app", {"name": "all"})
    await fleet.wait_works("app", [cluster])
    got = await fleet.get("app")
    template = {**got["spec"]["manifestWorkTemplate"], **spec}
    await hub_api.patch(
        ocm.MANIFEST_WORK_REPLICA_SET,
        "app",
        {"spec": {"manifestWorkTemplate": template}},
        namespace=fleet.namespace,
    )

    async def updated(expected: Obj | None) -> bool:
        [work] = (await fleet.works("app")).values()
        assert work["spec"].get("deleteOption") == expected
        return True

    await eventually(lambda: updated({"propagationPolicy": "Orphan"}))
    # A field taken out of the template goes from the works too.
    await hub_api.patch(
        ocm.MANIFEST_WORK_REPLICA_SET,
        "app",
        {"spec": {"manifestWorkTemplate": {"deleteOption": None}}},
        namespace=fleet.namespace,
    )
    await eventually(lambda: updated(None))


async def test_progressive_rollout_one_cluster_at_a_time(fleet: Fleet, hub_api: Api) -> None:
    clusters = [await fleet.cluster(n) for n in ("a", "b", "c")]
    await fleet.placement("all")
    progressive = {"type": "Progressive", "progressive": {"maxConcurrency": 1}}
    await fleet.replica_set("app", {"name": "all", "rolloutStrategy": progressive})
    for done in range(3):
        works = await fleet.wait_works("app", clusters[: done + 1])
        # The next cluster waits while this one has not succeeded.
        await asyncio.sleep(1)
        assert sorted(await fleet.works("app")) == clusters[: done + 1]
        newest = works[clusters[done]]
        await report(hub_api, newest, Applied="True", Available="True", Progressing="True")
        await asyncio.sleep(1)
        assert sorted(await fleet.works("app")) == clusters[: done + 1]
        await report(hub_api, newest, Applied="True", Available="True", Progressing="False")

    async def complete() -> bool:
        got = await fleet.get("app")
        assert condition_of(got, "PlacementRolledOut") == ("True", "Complete")
        assert got["status"]["placementSummary"][0]["availableDecisionGroups"] == (
            "1 (3 / 3 clusters applied)"
        )
        return True

    await eventually(complete)


async def test_a_placement_taken_out_of_the_set_takes_its_works(fleet: Fleet, hub_api: Api) -> None:
    a = await fleet.cluster("a", env="prod")
    b = await fleet.cluster("b", env="dev")
    for env in ("prod", "dev"):
        selector = {"labelSelector": {"matchLabels": {"env": env}}}
        await fleet.placement(env, predicates=[{"requiredClusterSelector": selector}])
    await fleet.replica_set("app", {"name": "prod"}, {"name": "dev"})
    works = await fleet.wait_works("app", [a, b])
    assert works[b]["metadata"]["labels"][PLACEMENT_NAME] == "dev"
    await hub_api.patch(
        ocm.MANIFEST_WORK_REPLICA_SET,
        "app",
        {"spec": {"placementRefs": [{"name": "prod"}]}},
        namespace=fleet.namespace,
    )
    await fleet.wait_works("app", [a])

    async def one_placement() -> bool:
        got = await fleet.get("app")
        assert [p["name"] for p in got["status"]["placementSummary"]] == ["prod"]
        assert got["status"]["summary"]["total"] == 1
        return True

    await eventually(one_placement)


async def test_deleting_the_set_deletes_its_works(fleet: Fleet, hub_api: Api) -> None:
    clusters = [await fleet.cluster(n) for n in ("a", "b")]
    await fleet.placement("all")
    await fleet.replica_set("app", {"name": "all"}, cascadeDeletionPolicy="Foreground")
    await fleet.wait_works("app", clusters)
    # A finalizer on one work (as an agent holds it) keeps it, and so the set, a while.
    held = (await fleet.works("app"))[clusters[0]]
    await hub_api.patch(
        ocm.MANIFEST_WORK,
        held["metadata"]["name"],
        {"metadata": {"finalizers": ["test/hold"]}},
        namespace=clusters[0],
    )
    await hub_api.delete(ocm.MANIFEST_WORK_REPLICA_SET, "app", namespace=fleet.namespace)
    await fleet.wait_works("app", [clusters[0]])
    await asyncio.sleep(1)
    still = await fleet.get("app")
    assert still["metadata"]["deletionTimestamp"] and FINALIZER in still["metadata"]["finalizers"]
    await hub_api.patch(
        ocm.MANIFEST_WORK,
        held["metadata"]["name"],
        {"metadata": {"finalizers": None}},
        namespace=clusters[0],
    )
    await fleet.wait_works("app", [])

    async def gone() -> bool:
        try:
            await fleet.get("app")
        except ApiError as err:
            return err.code == 404
        raise AssertionError("the set is still there")

    await eventually(gone)


async def test_a_missing_placement_is_reported(fleet: Fleet) -> None:
    await fleet.replica_set("app", {"name": "nowhere"})

    async def reported() -> bool:
        got = await fleet.get("app")
        assert condition_of(got, "PlacementVerified") == ("False", "PlacementDecisionNotFound")
        return True

    await eventually(reported)


async def test_a_name_too_long_for_the_owner_label_is_reported(fleet: Fleet) -> None:
    cluster = await fleet.cluster("a")
    await fleet.placement("all")
    name = "x" * 60  # with the namespace and a dot, longer than a label value may be
    await fleet.replica_set(name, {"name": "all"})

    async def reported() -> Obj:
        got = await fleet.get(name)
        assert condition_of(got, "ManifestworkApplied") == ("False", "InvalidManifestWorkName")
        return got

    got = await eventually(reported)
    [condition] = [c for c in got["status"]["conditions"] if c["type"] == "ManifestworkApplied"]
    owner = f"{fleet.namespace}.{name}"
    assert condition["message"] == (
        f'ManifestWork owner reference "{owner}" (namespace.name) is not a valid label value: '
        "must be no more than 63 characters; recreate the ManifestWorkReplicaSet with a "
        "shorter namespace and/or name so the combined length is at most 63 characters"
    )
    listed = await fleet.api.list(ocm.MANIFEST_WORK, namespace=cluster)
    assert listed["items"] == []


async def test_nothing_acts_with_the_gate_off(api: Api, unique: str, hub: HubProcess) -> None:
    ns, cluster = f"mwrs-{unique}", f"c-{unique}"
    for name in (ns, cluster):
        await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})
    await api.create(ocm.PLACEMENT, {"metadata": {"name": "p", "namespace": ns}, "spec": {}})
    await api.create(
        ocm.MANIFEST_WORK_REPLICA_SET,
        {
            "metadata": {"name": "app", "namespace": ns},
            "spec": {"placementRefs": [{"name": "p"}], "manifestWorkTemplate": TEMPLATE},
        },
    )
    await asyncio.sleep(3)
    found = await api.list(ocm.MANIFEST_WORK, labels=f"{OWNER}={ns}.app")
    assert found["items"] == []
    got = await api.get(ocm.MANIFEST_WORK_REPLICA_SET, "app", namespace=ns)
    assert not got["metadata"].get("finalizers") and not got.get("status", {}).get("conditions")


@pytest.fixture
def hub(ocm_hub: HubProcess) -> HubProcess:
    """The shared hub (the gate at its default, off) for the ``api`` fixture."""
    return ocm_hub
