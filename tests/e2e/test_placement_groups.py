"""Placement decision groups on a whole hub: ``decisionStrategy.groupStrategy`` with
``decisionGroups`` chosen by label and claim selectors, ``clustersPerDecisionGroup`` as a
number and as a percentage, the default of one group, the PlacementDecisions' group
labels and the placement's ``status.decisionGroups``, regrouping when a decided
cluster's labels change, and a group strategy the scheduler cannot follow
(PlacementMisconfigured with upstream's message; no decisions written).

Paging a group over 100 clusters is test_placement_scheduling.py's test_groups_and_pages.
Clusters are agentless (see that file's Fleet); claims are written to their status here.
"""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from tests.e2e import test_placement_scheduling as scheduling
from tests.e2e.test_placement_scheduling import GROUP_INDEX_LABEL, GROUP_NAME_LABEL, Fleet
from tests.support import eventually

# The scheduling tests' fixtures: the session's hub with its controllers, and a Fleet.
hub = scheduling.hub
fleet = scheduling.fleet

Obj = dict[str, Any]
#: A PlacementDecision as checked here: its name, group name and index labels, clusters.
Page = tuple[str, str, str, list[str]]


def group(name: str, *, labels: dict[str, str] | None = None, claims: Obj | None = None) -> Obj:
    """A ``decisionGroups`` entry selecting by ``labels`` (matchLabels) and/or ``claims``
    (one claim selector requirement)."""
    selector: Obj = {}
    if labels is not None:
        selector["labelSelector"] = {"matchLabels": labels}
    if claims is not None:
        selector["claimSelector"] = {"matchExpressions": [claims]}
    return {"groupName": name, "groupClusterSelector": selector}


def strategy(*groups: Obj, per_group: int | str | None = None) -> Obj:
    found: Obj = {"decisionGroups": list(groups)}
    if per_group is not None:
        found["clustersPerDecisionGroup"] = per_group
    return {"groupStrategy": found}


def status_group(index: int, name: str, decisions: list[str], count: int) -> Obj:
    return {
        "decisionGroupIndex": index,
        "decisionGroupName": name,
        "decisions": decisions,
        "clusterCount": count,
    }


async def pages(fleet: Fleet, placement: str) -> list[Page]:
    return [
        (
            d["metadata"]["name"],
            d["metadata"]["labels"][GROUP_NAME_LABEL],
            d["metadata"]["labels"][GROUP_INDEX_LABEL],
            [c["clusterName"] for c in d.get("status", {}).get("decisions") or []],
        )
        for d in await fleet.decisions(placement)
    ]


async def replace_strategy(api: Api, fleet: Fleet, name: str, decision_strategy: Obj) -> None:
    """Replace the placement's whole decisionStrategy (a merge patch would keep parts)."""
    patch = [{"op": "replace", "path": "/spec/decisionStrategy", "value": decision_strategy}]
    await api.patch(ocm.PLACEMENT, name, patch, namespace=fleet.namespace, type="json")


async def wait_grouped(
    fleet: Fleet, api: Api, placement: str, expected: list[Page], groups: list[Obj]
) -> Obj:
    """Wait for ``placement``'s PlacementDecisions to be ``expected`` (labels included:
    upstream relabels a page in the pass after the one that changed its decisions), then
    for its status's groups (written after them); return the placement."""

    async def written() -> bool:
        assert await pages(fleet, placement) == expected
        return True

    async def status() -> Obj:
        found = await api.get(ocm.PLACEMENT, placement, namespace=fleet.namespace)
        assert found.get("status", {}).get("decisionGroups") == groups
        return found

    await eventually(written)
    placement_found: Obj = await eventually(status)
    return placement_found


async def test_groups_by_label_and_claim_selectors(fleet: Fleet, api: Api) -> None:
    c1 = await fleet.cluster("c1", canary="true")
    # Matches the first two groups: the earlier one takes it.
    c2 = await fleet.cluster("c2", canary="true", env="prod")
    p1 = await fleet.cluster("p1", env="prod")
    e1 = await fleet.cluster("e1")
    r1, r2 = await fleet.cluster("r1"), await fleet.cluster("r2")
    claims = {"clusterClaims": [{"name": "region.open-cluster-management.io", "value": "eu"}]}
    await api.patch(ocm.MANAGED_CLUSTER, e1, {"status": claims}, subresource="status")
    eu = {"key": "region.open-cluster-management.io", "operator": "In", "values": ["eu"]}
    await fleet.placement(
        "p",
        decisionStrategy=strategy(
            group("canary", labels={"canary": "true"}),
            group("prod", labels={"env": "prod"}),
            group("eu", claims=eu),
            # Matches nothing: no group, not even an empty one.
            group("none", labels={"never": "true"}),
        ),
    )
    found = await wait_grouped(
        fleet,
        api,
        "p",
        [
            ("p-decision-1", "canary", "0", [c1, c2]),
            ("p-decision-2", "prod", "1", [p1]),
            ("p-decision-3", "eu", "2", [e1]),
            ("p-decision-4", "", "3", [r1, r2]),
        ],
        [
            status_group(0, "canary", ["p-decision-1"], 2),
            status_group(1, "prod", ["p-decision-2"], 1),
            status_group(2, "eu", ["p-decision-3"], 1),
            status_group(3, "", ["p-decision-4"], 2),
        ],
    )
    assert found["status"]["numberOfSelectedClusters"] == 6
    # The server defaults the group length to all the selected clusters.
    assert found["spec"]["decisionStrategy"]["groupStrategy"]["clustersPerDecisionGroup"] == "100%"


async def test_clusters_per_decision_group_as_a_number_and_a_percentage(
    fleet: Fleet, api: Api
) -> None:
    k1, k2, k3 = [await fleet.cluster(f"k{i}", canary="true") for i in (1, 2, 3)]
    r1, r2, r3, r4 = [await fleet.cluster(f"r{i}") for i in (1, 2, 3, 4)]
    canary = group("canary", labels={"canary": "true"})
    # A named group longer than the length is cut too, keeping its name.
    await fleet.placement("number", decisionStrategy=strategy(canary, per_group=2))
    # 30 % of 7 selected, rounded up: 3.
    await fleet.placement("percent", decisionStrategy=strategy(canary, per_group="30%"))
    await wait_grouped(
        fleet,
        api,
        "number",
        [
            ("number-decision-1", "canary", "0", [k1, k2]),
            ("number-decision-2", "canary", "1", [k3]),
            ("number-decision-3", "", "2", [r1, r2]),
            ("number-decision-4", "", "3", [r3, r4]),
        ],
        [
            status_group(0, "canary", ["number-decision-1"], 2),
            status_group(1, "canary", ["number-decision-2"], 1),
            status_group(2, "", ["number-decision-3"], 2),
            status_group(3, "", ["number-decision-4"], 2),
        ],
    )
    await wait_grouped(
        fleet,
        api,
        "percent",
        [
            ("percent-decision-1", "canary", "0", [k1, k2, k3]),
            ("percent-decision-2", "", "1", [r1, r2, r3]),
            ("percent-decision-3", "", "2", [r4]),
        ],
        [
            status_group(0, "canary", ["percent-decision-1"], 3),
            status_group(1, "", ["percent-decision-2"], 3),
            status_group(2, "", ["percent-decision-3"], 1),
        ],
    )
    # Fewer clusters, longer groups: the pages left over go.
    await api.patch(ocm.MANAGED_CLUSTER, r4, {"metadata": {"labels": {"fleet": "gone"}}})
    await api.patch(ocm.MANAGED_CLUSTER, k3, {"metadata": {"labels": {"canary": "false"}}})
    await wait_grouped(
        fleet,
        api,
        "percent",
        [
            ("percent-decision-1", "canary", "0", [k1, k2]),
            ("percent-decision-2", "", "1", [k3, r1]),
            ("percent-decision-3", "", "2", [r2, r3]),
        ],
        [
            status_group(0, "canary", ["percent-decision-1"], 2),
            status_group(1, "", ["percent-decision-2"], 2),
            status_group(2, "", ["percent-decision-3"], 2),
        ],
    )


async def test_one_group_by_default(fleet: Fleet, api: Api) -> None:
    a, b = await fleet.cluster("a"), await fleet.cluster("b")
    await fleet.placement("plain")
    # An integer length of 0 (which the schema's pattern, for strings, lets by) means all.
    await fleet.placement("zero", decisionStrategy=strategy(per_group=0))
    for name in ("plain", "zero"):
        await wait_grouped(
            fleet,
            api,
            name,
            [(f"{name}-decision-1", "", "0", [a, b])],
            [status_group(0, "", [f"{name}-decision-1"], 2)],
        )
    # Nothing selected: one empty group, written as one empty PlacementDecision.
    nothing = {"labelSelector": {"matchLabels": {"never": "true"}}}
    await fleet.placement("none", predicates=[{"requiredClusterSelector": nothing}])
    await wait_grouped(
        fleet,
        api,
        "none",
        [("none-decision-1", "", "0", [])],
        [status_group(0, "", ["none-decision-1"], 0)],
    )


async def test_a_decided_cluster_relabelled_changes_group(fleet: Fleet, api: Api) -> None:
    a, b = await fleet.cluster("a"), await fleet.cluster("b")
    await fleet.placement(
        "p", decisionStrategy=strategy(group("canary", labels={"canary": "true"}))
    )
    await wait_grouped(
        fleet,
        api,
        "p",
        [("p-decision-1", "", "0", [a, b])],
        [status_group(0, "", ["p-decision-1"], 2)],
    )
    await api.patch(ocm.MANAGED_CLUSTER, b, {"metadata": {"labels": {"canary": "true"}}})
    # The first page is now the canary group's: its decisions first, its labels next pass.
    await wait_grouped(
        fleet,
        api,
        "p",
        [("p-decision-1", "canary", "0", [b]), ("p-decision-2", "", "1", [a])],
        [
            status_group(0, "canary", ["p-decision-1"], 1),
            status_group(1, "", ["p-decision-2"], 1),
        ],
    )


async def test_a_group_strategy_the_scheduler_cannot_follow(fleet: Fleet, api: Api) -> None:
    k = await fleet.cluster("k", canary="true")
    a, b = await fleet.cluster("a"), await fleet.cluster("b")
    await fleet.placement("p", decisionStrategy=strategy(per_group=2))
    await wait_grouped(
        fleet,
        api,
        "p",
        [("p-decision-1", "", "0", [a, b]), ("p-decision-2", "", "1", [k])],
        [status_group(0, "", ["p-decision-1"], 2), status_group(1, "", ["p-decision-2"], 1)],
    )

    # "0" and percentages out of range or unparsable never reach the scheduler: the
    # schema's pattern (upstream's CRD's) refuses them.
    for refused in ("0", "0%", "101%", "abc%", "-1"):
        spec = {"decisionStrategy": strategy(per_group=refused)}
        with pytest.raises(ApiError) as caught:
            await api.patch(ocm.PLACEMENT, "p", {"spec": spec}, namespace=fleet.namespace)
        assert caught.value.code == 422
        assert "clustersPerDecisionGroup in body should match" in caught.value.message

    # A number as a string passes the schema's pattern, but is not a percentage: upstream
    # stops at the groups, so every PlacementDecision goes, while the clusters scheduled
    # still count as selected and scheduled.
    spec = {"decisionStrategy": strategy(per_group="2")}
    await api.patch(ocm.PLACEMENT, "p", {"spec": spec}, namespace=fleet.namespace)

    async def misconfigured() -> bool:
        found = await fleet.condition("p", "PlacementMisconfigured")
        assert (found["status"], found["reason"], found["message"]) == (
            "True",
            "Misconfigured",
            ":2 invalid type: string is not a percentage",
        )
        return True

    await eventually(misconfigured)
    found = await wait_grouped(fleet, api, "p", [], [])
    assert found["status"]["numberOfSelectedClusters"] == 3
    await fleet.wait_satisfied(
        "p", "True", "AllDecisionsScheduled", "All cluster decisions scheduled"
    )

    # A group selector that does not parse: the groups before it are written, no others.
    like = {"matchExpressions": [{"key": "zone", "operator": "Like", "values": ["x"]}]}
    bad = {"groupName": "bad", "groupClusterSelector": {"labelSelector": like}}
    spec = {"decisionStrategy": strategy(group("canary", labels={"canary": "true"}), bad)}
    # A merge patch would keep "2": replace the whole strategy.
    await replace_strategy(api, fleet, "p", spec["decisionStrategy"])
    await wait_grouped(
        fleet,
        api,
        "p",
        [("p-decision-1", "canary", "0", [k])],
        [status_group(0, "canary", ["p-decision-1"], 1)],
    )
    await fleet.wait_satisfied(
        "p", "True", "AllDecisionsScheduled", "All cluster decisions scheduled"
    )
    found = await fleet.condition("p", "PlacementMisconfigured")
    assert (found["status"], found["reason"], found["message"]) == (
        "True",
        "Misconfigured",
        ':"Like" is not a valid label selector operator',
    )

    # Repaired: the rest come back and the condition clears.
    spec = {"decisionStrategy": strategy(group("canary", labels={"canary": "true"}))}
    await replace_strategy(api, fleet, "p", spec["decisionStrategy"])
    await wait_grouped(
        fleet,
        api,
        "p",
        [("p-decision-1", "canary", "0", [k]), ("p-decision-2", "", "1", [a, b])],
        [
            status_group(0, "canary", ["p-decision-1"], 1),
            status_group(1, "", ["p-decision-2"], 2),
        ],
    )
    found = await fleet.condition("p", "PlacementMisconfigured")
    assert (found["status"], found["reason"]) == ("False", "Succeedconfigured")
