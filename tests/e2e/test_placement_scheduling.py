"""The placement controller on a whole hub: PlacementDecisions named, labelled, owned,
grouped and paged as upstream writes them; the placement's status conditions for each
reason; events; and rescheduling as cluster labels and taints change, tolerations
expire, and Steady keeps decisions.

Clusters are created directly as the admin (no agents): scheduling reads only their
labels, claims and taints. Each test has its own set (selecting a label only its
clusters carry), namespace and binding."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import cluster_set, eventually, label_selector

Obj = dict[str, Any]
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
GROUP_NAME_LABEL = "cluster.open-cluster-management.io/decision-group-name"
GROUP_INDEX_LABEL = "cluster.open-cluster-management.io/decision-group-index"
#: No agent runs for these clusters: the hub taints them unreachable.
AGENTLESS = [
    {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
    {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


class Fleet:
    """One test's namespace, set (selecting label ``fleet=<unique>``) and clusters."""

    def __init__(self, api: Api, unique: str) -> None:
        self.api, self.unique = api, unique
        self.namespace = unique
        self.set = f"set-{unique}"
        self.clusters: list[str] = []

    async def start(self, *, bind: bool = True) -> None:
        await self.api.create(kinds.NAMESPACE, {"metadata": {"name": self.namespace}})
        await self.api.create(
            ocm.MANAGED_CLUSTER_SET, cluster_set(self.set, label_selector({"fleet": self.unique}))
        )
        if bind:
            await self.bind(self.set)

    async def bind(self, name: str) -> None:
        await self.api.create(
            ocm.MANAGED_CLUSTER_SET_BINDING,
            {
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {"clusterSet": name},
            },
        )

    async def cluster(self, name: str, *, taints: list[Obj] | None = None, **labels: str) -> str:
        full = f"{name}-{self.unique}"
        spec: Obj = {"hubAcceptsClient": True}
        if taints:
            spec["taints"] = taints
        await self.api.create(
            ocm.MANAGED_CLUSTER,
            {"metadata": {"name": full, "labels": {"fleet": self.unique, **labels}}, "spec": spec},
        )
        self.clusters.append(full)
        return full

    async def placement(self, name: str, **spec: Any) -> Obj:
        """A placement tolerating what the hub taints agentless clusters with (besides
        the tolerations given)."""
        spec["tolerations"] = [*AGENTLESS, *spec.get("tolerations", [])]
        return await self.api.create(
            ocm.PLACEMENT, {"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}
        )

    async def decisions(self, placement: str) -> list[Obj]:
        listed = await self.api.list(
            ocm.PLACEMENT_DECISION,
            namespace=self.namespace,
            labels=f"{PLACEMENT_LABEL}={placement}",
        )
        return sorted(listed["items"], key=lambda d: d["metadata"]["name"])

    async def chosen(self, placement: str) -> list[str]:
        return [
            d["clusterName"]
            for pd in await self.decisions(placement)
            for d in pd.get("status", {}).get("decisions") or []
        ]

    async def wait_chosen(self, placement: str, expected: list[str], timeout: float = 20) -> None:
        async def check() -> bool:
            assert await self.chosen(placement) == expected
            return True

        await eventually(check, timeout=timeout)

    async def condition(self, placement: str, type: str) -> Obj:
        found = await self.api.get(ocm.PLACEMENT, placement, namespace=self.namespace)
        condition = conditions.find(conditions.of(found), type)
        assert condition is not None
        return condition

    async def wait_satisfied(self, placement: str, status: str, reason: str, message: str) -> None:
        async def check() -> bool:
            found = await self.condition(placement, "PlacementSatisfied")
            assert (found["status"], found["reason"], found["message"]) == (
                status,
                reason,
                message,
            )
            return True

        await eventually(check)

    async def stop(self) -> None:
        for name in self.clusters:
            with contextlib.suppress(ApiError):
                await self.api.delete(ocm.MANAGED_CLUSTER, name)
        await self.api.delete(ocm.MANAGED_CLUSTER_SET, self.set)


@pytest_asyncio.fixture
async def fleet(api: Api, unique: str) -> AsyncIterator[Fleet]:
    made = Fleet(api, unique)
    await made.start()
    yield made
    await made.stop()


async def test_decisions_status_and_events(fleet: Fleet, api: Api) -> None:
    names = [await fleet.cluster(n) for n in ("a", "b", "c")]
    placement = await fleet.placement("two", numberOfClusters=2)
    await fleet.wait_chosen("two", names[:2])
    [decision] = await fleet.decisions("two")
    assert decision["metadata"]["name"] == "two-decision-1"
    assert decision["metadata"]["labels"] == {
        PLACEMENT_LABEL: "two",
        GROUP_NAME_LABEL: "",
        GROUP_INDEX_LABEL: "0",
    }
    [owner] = decision["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Placement",
        "two",
        placement["metadata"]["uid"],
        True,
    )
    assert decision["status"]["decisions"] == [{"clusterName": n, "reason": ""} for n in names[:2]]
    await fleet.wait_satisfied(
        "two", "True", "AllDecisionsScheduled", "All cluster decisions scheduled"
    )
    found = await api.get(ocm.PLACEMENT, "two", namespace=fleet.namespace)
    assert found["status"]["numberOfSelectedClusters"] == 2
    assert found["status"]["decisionGroups"] == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "",
            "decisions": ["two-decision-1"],
            "clusterCount": 2,
        }
    ]
    misconfigured = await fleet.condition("two", "PlacementMisconfigured")
    assert (misconfigured["status"], misconfigured["reason"], misconfigured["message"]) == (
        "False",
        "Succeedconfigured",
        "Placement configurations check pass",
    )

    async def events() -> set[str]:
        listed = await api.list(kinds.EVENT, namespace=fleet.namespace)
        reasons = {
            e["reason"]
            for e in listed["items"]
            if e.get("regarding", {}).get("name") == "two"
            and e.get("reportingController") == "placement-controller"
        }
        assert {"DecisionCreate", "DecisionUpdate", "ScoreUpdate"} <= reasons
        return reasons

    await eventually(events)

    await fleet.placement("five", numberOfClusters=5)
    await fleet.wait_satisfied(
        "five", "False", "NotAllDecisionsScheduled", "2 cluster decisions unscheduled"
    )
    assert await fleet.chosen("five") == names


async def test_satisfied_reasons_and_misconfigured(fleet: Fleet, api: Api, unique: str) -> None:
    unbound = f"{unique}-unbound"
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unbound}})
    lonely = Fleet(api, unique)
    lonely.namespace = unbound
    await lonely.placement("p")
    await lonely.wait_satisfied(
        "p",
        "False",
        "NoManagedClusterSetBindings",
        "No valid ManagedClusterSetBindings found in placement namespace",
    )
    # The one PlacementDecision, empty, is there all the same.
    [empty] = await lonely.decisions("p")
    assert empty["status"]["decisions"] == []

    await fleet.placement("other", clusterSets=["nope", "never"])
    await fleet.wait_satisfied(
        "other",
        "False",
        "NoIntersection",
        "None of ManagedClusterSets [nope,never] is bound to placement namespace",
    )
    await fleet.placement("empty")
    await fleet.wait_satisfied(
        "empty",
        "False",
        "AllManagedClusterSetsEmpty",
        f"All ManagedClusterSets [{fleet.set}] have no member ManagedCluster",
    )
    await fleet.cluster("a", env="dev")
    await fleet.wait_satisfied(
        "empty", "True", "AllDecisionsScheduled", "All cluster decisions scheduled"
    )

    await fleet.placement(
        "prod",
        predicates=[
            {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
        ],
    )
    await fleet.wait_satisfied(
        "prod",
        "False",
        "NoManagedClusterMatched",
        "No ManagedCluster matches any of the cluster predicate",
    )

    await fleet.placement("bad", tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])
    await fleet.wait_satisfied(
        "bad",
        "False",
        "NoManagedClusterMatched",
        "No ManagedCluster matches any of the cluster predicate",
    )
    found = await fleet.condition("bad", "PlacementMisconfigured")
    assert (found["status"], found["reason"], found["message"]) == (
        "True",
        "Misconfigured",
        "TaintToleration:If the operator is Exists, the value should be empty.",
    )


async def test_label_changes_move_decisions(fleet: Fleet, api: Api) -> None:
    a = await fleet.cluster("a", env="prod")
    b = await fleet.cluster("b", env="dev")
    prod = {"labelSelector": {"matchLabels": {"env": "prod"}}}
    await fleet.placement("prod", predicates=[{"requiredClusterSelector": prod}])
    await fleet.wait_chosen("prod", [a])
    for name, env in ((b, "prod"), (a, "dev")):
        await api.patch(ocm.MANAGED_CLUSTER, name, {"metadata": {"labels": {"env": env}}})
    await fleet.wait_chosen("prod", [b])


async def test_toleration_seconds_expire(fleet: Fleet) -> None:
    taint = {"key": "gpu", "value": "busy", "effect": "NoSelect"}
    tainted = await fleet.cluster("t", taints=[taint])
    plain = await fleet.cluster("u")
    await fleet.placement("never")
    await fleet.placement(
        "briefly",
        tolerations=[{"key": "gpu", "operator": "Exists", "tolerationSeconds": 3}],
    )
    await fleet.wait_chosen("never", [plain])
    await fleet.wait_chosen("briefly", [tainted, plain], timeout=3)
    # Nothing changes but time: the placement was requeued at the expiry.
    await fleet.wait_chosen("briefly", [plain], timeout=10)


async def test_no_select_if_new_keeps_decided_clusters(fleet: Fleet, api: Api) -> None:
    kept = await fleet.cluster("a")
    await fleet.placement("p")
    await fleet.wait_chosen("p", [kept])
    taint = {"key": "maintenance", "effect": "NoSelectIfNew"}
    await api.patch(ocm.MANAGED_CLUSTER, kept, {"spec": {"taints": [taint]}})
    new = await fleet.cluster("b", taints=[taint])
    other = await fleet.cluster("c")
    # Proof the pass ran with "b" in view: "c" came after it on the same watch, so the
    # pass that chose "c" saw "b" too, and left it out.
    await fleet.wait_chosen("p", [kept, other])
    assert new not in await fleet.chosen("p")


async def test_steady_keeps_decisions_when_a_better_cluster_comes(fleet: Fleet, api: Api) -> None:
    first = await fleet.cluster("m")
    marked = {
        "groupName": "marked",
        "groupClusterSelector": {"labelSelector": {"matchLabels": {"mark": "yes"}}},
    }
    await fleet.placement(
        "one", numberOfClusters=1, decisionStrategy={"groupStrategy": {"decisionGroups": [marked]}}
    )
    await fleet.wait_chosen("one", [first])
    # Sorts first by name, so it would win a tie; Steady's 100 for the decided cluster wins.
    await fleet.cluster("a")
    # Proof a pass ran with "a" in view: "m" is marked after "a" came, on the same watch,
    # so the pass that puts "m" in group "marked" saw "a" too; and as a group holds only
    # selected clusters, that pass selected "m".
    await api.patch(ocm.MANAGED_CLUSTER, first, {"metadata": {"labels": {"mark": "yes"}}})

    async def marked_group() -> bool:
        found = await api.get(ocm.PLACEMENT, "one", namespace=fleet.namespace)
        assert found.get("status", {}).get("decisionGroups") == [
            {
                "decisionGroupIndex": 0,
                "decisionGroupName": "marked",
                "decisions": ["one-decision-1"],
                "clusterCount": 1,
            }
        ]
        return True

    await eventually(marked_group)
    assert await fleet.chosen("one") == [first]


async def test_groups_and_pages(fleet: Fleet, api: Api) -> None:
    canary = await fleet.cluster("canary", canary="true")
    rest = [await fleet.cluster(f"r{i:03d}") for i in range(101)]
    await fleet.placement(
        "grouped",
        decisionStrategy={
            "groupStrategy": {
                "clustersPerDecisionGroup": 150,
                "decisionGroups": [
                    {
                        "groupName": "canary",
                        "groupClusterSelector": {
                            "labelSelector": {"matchLabels": {"canary": "true"}}
                        },
                    }
                ],
            }
        },
    )
    await fleet.wait_chosen("grouped", [canary, *rest], timeout=30)
    found = await fleet.decisions("grouped")
    assert [
        (
            d["metadata"]["name"],
            d["metadata"]["labels"][GROUP_NAME_LABEL],
            d["metadata"]["labels"][GROUP_INDEX_LABEL],
            len(d["status"]["decisions"]),
        )
        for d in found
    ] == [
        ("grouped-decision-1", "canary", "0", 1),
        ("grouped-decision-2", "", "1", 100),
        ("grouped-decision-3", "", "1", 1),
    ]

    async def grouped_status() -> Obj:
        # The status is written after the decisions: wait for it.
        placement = await api.get(ocm.PLACEMENT, "grouped", namespace=fleet.namespace)
        assert placement.get("status", {}).get("numberOfSelectedClusters") == 102
        return placement

    placement = await eventually(grouped_status)
    assert placement["status"]["decisionGroups"] == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "canary",
            "decisions": ["grouped-decision-1"],
            "clusterCount": 1,
        },
        {
            "decisionGroupIndex": 1,
            "decisionGroupName": "",
            "decisions": ["grouped-decision-2", "grouped-decision-3"],
            "clusterCount": 101,
        },
    ]
    # Fewer clusters: the extra PlacementDecision goes.
    for name in rest[1:]:
        await api.patch(ocm.MANAGED_CLUSTER, name, {"metadata": {"labels": {"fleet": "gone"}}})
    await fleet.wait_chosen("grouped", [canary, rest[0]])
    assert [d["metadata"]["name"] for d in await fleet.decisions("grouped")] == [
        "grouped-decision-1",
        "grouped-decision-2",
    ]
