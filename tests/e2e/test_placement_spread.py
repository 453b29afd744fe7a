"""spreadPolicy on a whole hub (a pyocm extension: upstream's scheduler ignores it): a
label and a claim topology key, maxSkew under DoNotSchedule and ScheduleAnyway, and
nested constraints, seen in the PlacementDecisions and the PlacementSatisfied condition.

As in test_placement_scheduling (whose Fleet and fixtures these are), the clusters have
no agents and each test has its own namespace, set and clusters. Decisions list their
clusters by name, so the expected lists are sorted."""

from __future__ import annotations

from typing import Any

from pyocm.api import kinds as ocm
from pyocm.runtime.client import Api
from tests.e2e import test_placement_scheduling as scheduling
from tests.e2e.test_placement_scheduling import Fleet
from tests.support import eventually

# The scheduling tests' fixtures: the session's hub with its controllers, and a Fleet.
hub = scheduling.hub
fleet = scheduling.fleet

Obj = dict[str, Any]
ZONE_CLAIM = "zone.spread.test"
SCHEDULED = ("True", "AllDecisionsScheduled", "All cluster decisions scheduled")


def constraint(key: str, key_type: str, **options: Any) -> Obj:
    return {"topologyKey": key, "topologyKeyType": key_type, **options}


def spread(*constraints: Obj) -> Obj:
    return {"spreadConstraints": list(constraints)}


async def change(fleet: Fleet, placement: str, **spec: Any) -> None:
    """Merge ``spec`` into the placement's (a list, such as spreadConstraints, is replaced)."""
    await fleet.api.patch(ocm.PLACEMENT, placement, {"spec": spec}, namespace=fleet.namespace)


async def claimed(fleet: Fleet, name: str, *, claims: dict[str, str], **labels: str) -> str:
    """A fleet cluster whose status carries ``claims`` (written as its agent would)."""
    full = await fleet.cluster(name, **labels)
    items = [{"name": k, "value": v} for k, v in claims.items()]
    await fleet.api.patch(
        ocm.MANAGED_CLUSTER, full, {"status": {"clusterClaims": items}}, subresource="status"
    )
    return full


async def test_label_key_max_skew_both_ways(fleet: Fleet) -> None:
    a1, a2, a3 = [await fleet.cluster(n, zone="a") for n in ("a1", "a2", "a3")]
    b1 = await fleet.cluster("b1", zone="b")
    await fleet.placement("p", numberOfClusters=2)
    await fleet.wait_chosen("p", [a1, a2])  # upstream's choice: by name

    soft = constraint("zone", "Label", maxSkew=1, whenUnsatisfiable="ScheduleAnyway")
    await change(fleet, "p", spreadPolicy=spread(soft))
    await fleet.wait_chosen("p", [a1, b1])  # one per zone, though Steady favours a2

    # ScheduleAnyway goes past maxSkew 1 (zone a 3, zone b 1) to reach four clusters.
    await change(fleet, "p", numberOfClusters=4)
    await fleet.wait_chosen("p", [a1, a2, a3, b1])
    await fleet.wait_satisfied("p", *SCHEDULED)

    # DoNotSchedule stops at a skew of 1: zone a 2, zone b 1.
    hard = {**soft, "whenUnsatisfiable": "DoNotSchedule"}
    await change(fleet, "p", spreadPolicy=spread(hard))
    await fleet.wait_chosen("p", [a1, a2, b1])
    await fleet.wait_satisfied(
        "p", "False", "NotAllDecisionsScheduled", "1 cluster decisions unscheduled"
    )

    await change(fleet, "p", spreadPolicy=spread({**hard, "maxSkew": 2}))
    await fleet.wait_chosen("p", [a1, a2, a3, b1])
    await fleet.wait_satisfied("p", *SCHEDULED)


async def test_claim_key_without_number_of_clusters(fleet: Fleet, api: Api) -> None:
    x1, x2, x3 = [await claimed(fleet, n, claims={ZONE_CLAIM: "x"}) for n in ("x1", "x2", "x3")]
    y1 = await claimed(fleet, "y1", claims={ZONE_CLAIM: "y"})
    # A label of the claim's name does not count: the key type is Claim.
    n0 = await fleet.cluster("n0", **{ZONE_CLAIM: "y"})

    # DoNotSchedule, maxSkew defaulted to 1: as many as the skew allows; n0, lacking
    # the claim, never.
    hard = constraint(ZONE_CLAIM, "Claim", whenUnsatisfiable="DoNotSchedule")
    created = await fleet.placement("p", spreadPolicy=spread(hard))
    assert created["spec"]["spreadPolicy"]["spreadConstraints"][0]["maxSkew"] == 1
    await fleet.wait_chosen("p", [x1, x2, y1])
    await fleet.wait_satisfied("p", *SCHEDULED)  # no numberOfClusters: none unscheduled

    # ScheduleAnyway (the default): every cluster, n0 too.
    await change(fleet, "p", spreadPolicy=spread(constraint(ZONE_CLAIM, "Claim", maxSkew=1)))
    await fleet.wait_chosen("p", [n0, x1, x2, x3, y1])

    async def counted() -> bool:  # the status is written after the decisions
        found = await api.get(ocm.PLACEMENT, "p", namespace=fleet.namespace)
        return bool(found["status"]["numberOfSelectedClusters"] == 5)

    await eventually(counted)


async def test_constraints_nest_a_claim_within_a_label(fleet: Fleet) -> None:
    # The enhancement's joint spread: first across regions, then across the zones of
    # each region (zone 1a of east and of west are two zones).
    layout = {
        "ea1": ("east", "1a"),
        "ea2": ("east", "1a"),
        "eb1": ("east", "1b"),
        "eb2": ("east", "1b"),
        "wa1": ("west", "1a"),
        "wa2": ("west", "1a"),
        "wa3": ("west", "1a"),
    }
    names = {
        n: await claimed(fleet, n, claims={ZONE_CLAIM: zone}, region=region)
        for n, (region, zone) in layout.items()
    }
    await fleet.placement(
        "p",
        numberOfClusters=4,
        spreadPolicy=spread(constraint("region", "Label"), constraint(ZONE_CLAIM, "Claim")),
    )
    # Upstream would take ea1, ea2, eb1, eb2.
    await fleet.wait_chosen("p", [names[n] for n in ("ea1", "eb1", "wa1", "wa2")])
    await fleet.wait_satisfied("p", *SCHEDULED)


async def test_do_not_schedule_skew_is_against_every_domain_of_the_key(fleet: Fleet) -> None:
    # The API's maxSkew doc: the skew is against "the global minimum ... for the
    # topologies within the same TopologyKey". Nested, those are all the zones of every
    # region: zone w1 of region west (one cluster) bounds zones e1 and e2 of region east.
    east = {
        (zone, i): await fleet.cluster(f"{zone}-{i}", region="east", zone=zone)
        for zone in ("e1", "e2")
        for i in range(3)
    }
    w1 = await fleet.cluster("w1-0", region="west", zone="w1")
    hard = constraint("zone", "Label", maxSkew=1, whenUnsatisfiable="DoNotSchedule")
    region = constraint("region", "Label")
    await fleet.placement("p", numberOfClusters=7, spreadPolicy=spread(region, hard))
    at_most_two = [east[zone, i] for zone in ("e1", "e2") for i in range(2)]
    await fleet.wait_chosen("p", sorted([*at_most_two, w1]))
    await fleet.wait_satisfied(
        "p", "False", "NotAllDecisionsScheduled", "2 cluster decisions unscheduled"
    )

    # maxSkew 2: zones e1 and e2 may have 3 each.
    await change(fleet, "p", spreadPolicy=spread(region, {**hard, "maxSkew": 2}))
    await fleet.wait_chosen("p", sorted([*east.values(), w1]))
    await fleet.wait_satisfied("p", *SCHEDULED)
