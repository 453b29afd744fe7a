"""Placement prioritizers on a whole hub: the policy modes (Additive adds the defaults
Balance and Steady to the spec's, Exact takes only the spec's), Balance, Steady, the
ResourceAllocatable ones (from clusters' status.allocatable and status.capacity) and
AddOn scores (AddOnPlacementScores in the cluster's namespace, expired ones warned
about in the DecisionUpdate event), weights and a weight of 0.

Clusters are agentless (see test_placement_scheduling.py's Fleet): their status is
written here through the status subresource. ScoreUpdate messages (the totals of a pass
that changed the decisions) are checked for Exact placements only: Balance's scores
depend on every PlacementDecision on the hub, other tests' too, so Balance is checked
by the decisions alone, each relying only on a cluster decided elsewhere scoring below
one that is not.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.kube import kinds, timefmt
from pyocm.runtime.client import Api
from tests.e2e import test_placement_scheduling as scheduling
from tests.e2e.test_placement_scheduling import Fleet
from tests.support import eventually

# The scheduling tests' fixtures: the session's hub with its controllers, and a Fleet.
hub = scheduling.hub
fleet = scheduling.fleet

Obj = dict[str, Any]
CPU = "ResourceAllocatableCPU"
MEMORY = "ResourceAllocatableMemory"


def built_in(name: str, weight: int = 1) -> Obj:
    return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}


def add_on(resource: str, score: str, weight: int = 1) -> Obj:
    coordinate = {"type": "AddOn", "addOn": {"resourceName": resource, "scoreName": score}}
    return {"scoreCoordinate": coordinate, "weight": weight}


def policy(mode: str, *configurations: Obj) -> Obj:
    return {"mode": mode, "configurations": list(configurations)}


async def resources(
    api: Api,
    cluster: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    capacity: bool = True,
) -> None:
    """Give ``cluster`` an allocatable (and, unless ``capacity`` is False, a capacity)."""
    allocatable = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    status: Obj = {"allocatable": allocatable}
    if capacity:
        status["capacity"] = {k: "1000" if k == "cpu" else "1Ti" for k in allocatable}
    await api.patch(ocm.MANAGED_CLUSTER, cluster, {"status": status}, subresource="status")


async def add_on_score(
    api: Api, cluster: str, name: str, *, valid_until: datetime | None = None, **scores: int
) -> None:
    """An AddOnPlacementScore ``name`` in the cluster's namespace (made by the hub when it
    accepts the cluster: wait for it) with ``scores``."""

    async def create() -> bool:
        await api.create(
            ocm.ADD_ON_PLACEMENT_SCORE, {"metadata": {"name": name, "namespace": cluster}}
        )
        return True

    await eventually(create)
    await set_scores(api, cluster, name, valid_until=valid_until, **scores)


async def set_scores(
    api: Api, cluster: str, name: str, *, valid_until: datetime | None = None, **scores: int
) -> None:
    status: Obj = {"scores": [{"name": k, "value": v} for k, v in scores.items()]}
    if valid_until is not None:
        status["validUntil"] = timefmt.format_time(valid_until)
    await api.patch(
        ocm.ADD_ON_PLACEMENT_SCORE,
        name,
        {"status": status},
        namespace=cluster,
        subresource="status",
    )


async def placement_events(api: Api, fleet: Fleet, placement: str, reason: str) -> list[Obj]:
    listed = await api.list(kinds.EVENT, namespace=fleet.namespace)
    return [
        e
        for e in listed["items"]
        if e.get("regarding", {}).get("name") == placement
        and e.get("reportingController") == "placement-controller"
        and e["reason"] == reason
    ]


async def wait_score_message(api: Api, fleet: Fleet, placement: str, message: str) -> None:
    async def check() -> bool:
        notes = [e["note"] for e in await placement_events(api, fleet, placement, "ScoreUpdate")]
        assert message in notes
        return True

    await eventually(check)


def scores_text(totals: dict[str, int]) -> str:
    """The ScoreUpdate message for these clusters' totals: ``name:total `` by name."""
    return "".join(f"{name}:{total} " for name, total in sorted(totals.items()))


async def wait_group(api: Api, fleet: Fleet, placement: str, group: str) -> None:
    """Wait until ``placement``'s only decision group is named ``group`` (one decision)."""

    async def check() -> bool:
        found = await api.get(ocm.PLACEMENT, placement, namespace=fleet.namespace)
        assert found.get("status", {}).get("decisionGroups") == [
            {
                "decisionGroupIndex": 0,
                "decisionGroupName": group,
                "decisions": [f"{placement}-decision-1"],
                "clusterCount": 1,
            }
        ]
        return True

    await eventually(check)


async def test_balance_prefers_clusters_other_placements_did_not_choose(
    fleet: Fleet, api: Api
) -> None:
    a, b = [await fleet.cluster(n) for n in ("a", "b")]
    await fleet.placement("first", numberOfClusters=1)
    await fleet.wait_chosen("first", [a])
    # Another placement's decisions count, whatever namespace: "a" now scores below 100.
    await fleet.placement("second", numberOfClusters=1)
    await fleet.wait_chosen("second", [b])
    # Balance weighed 0 is off: the tie goes to the name, as with nothing to balance.
    await fleet.placement(
        "unbalanced",
        numberOfClusters=1,
        prioritizerPolicy=policy("Additive", built_in("Balance", 0)),
    )
    await fleet.wait_chosen("unbalanced", [a])


async def test_additive_adds_the_defaults_and_exact_does_not(fleet: Fleet, api: Api) -> None:
    a, b, z = [await fleet.cluster(n) for n in ("a", "b", "z")]
    for name, cpu in ((a, "10"), (b, "9900m"), (z, "1")):
        await resources(api, name, cpu=cpu)
    # CPU alone: a 100, b 97, z -100.
    await fleet.placement(
        "exact", numberOfClusters=1, prioritizerPolicy=policy("Exact", built_in(CPU))
    )
    await fleet.wait_chosen("exact", [a])
    await wait_score_message(api, fleet, "exact", scores_text({a: 100, b: 97, z: -100}))
    # The same configuration added to Balance and Steady: "a", decided by "exact", scores
    # 2*int(100*(0.5-1/max)) on Balance against b's 100 (max: the most placements deciding
    # any one cluster of the hub), so it loses its 3 points' lead while max stays under 50.
    await fleet.placement(
        "additive", numberOfClusters=1, prioritizerPolicy=policy("Additive", built_in(CPU))
    )
    await fleet.wait_chosen("additive", [b])
    # The spec overrides a default's weight, the last entry for a built-in winning:
    # Balance at 0 leaves the lead to CPU.
    await fleet.placement(
        "override",
        numberOfClusters=1,
        prioritizerPolicy=policy(
            "Additive", built_in(CPU), built_in("Balance", 5), built_in("Balance", 0)
        ),
    )
    await fleet.wait_chosen("override", [a])


async def test_steady_holds_unless_a_weight_outweighs_it(fleet: Fleet, api: Api) -> None:
    a, b, z = [await fleet.cluster(n) for n in ("a", "b", "z")]
    for name, cpu in ((a, "10"), (b, "10"), (z, "1")):
        await resources(api, name, cpu=cpu)
    marked = {
        "groupName": "marked",
        "groupClusterSelector": {"labelSelector": {"matchLabels": {"mark": "yes"}}},
    }
    await fleet.placement(
        "light",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", built_in("Steady"), built_in(CPU)),
        decisionStrategy={"groupStrategy": {"decisionGroups": [marked]}},
    )
    await fleet.placement(
        "heavy",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", built_in("Steady"), built_in(CPU, 3)),
    )
    # Tied on CPU, both take "a": Exact leaves Balance out, so "a" being taken costs nothing.
    await fleet.wait_chosen("light", [a])
    await fleet.wait_chosen("heavy", [a])
    await wait_score_message(api, fleet, "light", scores_text({a: 100, b: 100, z: -100}))
    await wait_group(api, fleet, "light", "")

    # "b" gains: CPU gives a 63, b 100. Steady's 100 keeps "light" on "a"; 3 x 37 beats it.
    await resources(api, b, cpu="12")
    await fleet.wait_chosen("heavy", [b])
    await wait_score_message(api, fleet, "heavy", scores_text({a: 289, b: 300, z: -300}))
    # Proof "light" was scheduled with b's gain in view: "a" is marked after it, on the
    # same watch, and the pass that puts "a" in group "marked" (which holds only selected
    # clusters) saw both and selected "a".
    await api.patch(ocm.MANAGED_CLUSTER, a, {"metadata": {"labels": {"mark": "yes"}}})
    await wait_group(api, fleet, "light", "marked")
    assert await fleet.chosen("light") == [a]


async def test_resource_allocatable_memory_and_cpu(fleet: Fleet, api: Api) -> None:
    a, b, c = [await fleet.cluster(n) for n in ("a", "b", "c")]
    await resources(api, a, cpu="8", memory="4Gi")
    await resources(api, b, cpu="2", memory="16Gi")
    # Without a capacity a cluster is not scored at all (not even as the minimum or
    # maximum), though it has the most of both.
    await resources(api, c, cpu="64", memory="64Gi", capacity=False)
    await fleet.placement(
        "memory", numberOfClusters=1, prioritizerPolicy=policy("Exact", built_in(MEMORY))
    )
    await fleet.placement(
        "cpu", numberOfClusters=1, prioritizerPolicy=policy("Exact", built_in(CPU))
    )
    await fleet.wait_chosen("memory", [b])
    await fleet.wait_chosen("cpu", [a])
    await wait_score_message(api, fleet, "memory", scores_text({a: -100, b: 100, c: 0}))
    await wait_score_message(api, fleet, "cpu", scores_text({a: 100, b: -100, c: 0}))


async def test_add_on_scores_weights_expiry_and_changes(fleet: Fleet, api: Api) -> None:
    a, b, c = [await fleet.cluster(n) for n in ("a", "b", "c")]
    await add_on_score(api, a, "usage", cpu=10, memory=60)
    await add_on_score(api, b, "usage", cpu=80, memory=20)
    # Expired: scores 0 for every score name, whatever it says.
    past = datetime.now(UTC) - timedelta(hours=1)
    await add_on_score(api, c, "usage", valid_until=past, cpu=100, memory=100)

    await fleet.placement(
        "cpu", numberOfClusters=1, prioritizerPolicy=policy("Exact", add_on("usage", "cpu"))
    )
    await fleet.placement(
        "even",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", add_on("usage", "cpu"), add_on("usage", "memory")),
    )
    # Memory weighed twice flips the order: a 10 + 120 = 130, b 80 + 40 = 120.
    await fleet.placement(
        "memory",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", add_on("usage", "cpu"), add_on("usage", "memory", 2)),
    )
    # And at 0 it is off.
    await fleet.placement(
        "cpu-only",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", add_on("usage", "cpu"), add_on("usage", "memory", 0)),
    )
    # Unlike a built-in, an add-on named twice counts twice (upstream's weights are keyed
    # by a coordinate holding a pointer to the add-on's names, never equal for two).
    await fleet.placement(
        "twice",
        numberOfClusters=1,
        prioritizerPolicy=policy("Exact", add_on("usage", "cpu"), add_on("usage", "cpu")),
    )
    # A negative weight prefers the lowest: the expired score's 0 beats 10 and 80.
    await fleet.placement(
        "inverse", numberOfClusters=1, prioritizerPolicy=policy("Exact", add_on("usage", "cpu", -1))
    )
    await fleet.wait_chosen("cpu", [b])
    await fleet.wait_chosen("even", [b])
    await fleet.wait_chosen("memory", [a])
    await fleet.wait_chosen("cpu-only", [b])
    await fleet.wait_chosen("twice", [b])
    await fleet.wait_chosen("inverse", [c])
    await wait_score_message(api, fleet, "cpu", scores_text({a: 10, b: 80, c: 0}))
    await wait_score_message(api, fleet, "even", scores_text({a: 70, b: 100, c: 0}))
    await wait_score_message(api, fleet, "memory", scores_text({a: 130, b: 120, c: 0}))
    await wait_score_message(api, fleet, "cpu-only", scores_text({a: 10, b: 80, c: 0}))
    await wait_score_message(api, fleet, "twice", scores_text({a: 20, b: 160, c: 0}))
    await wait_score_message(api, fleet, "inverse", scores_text({a: -10, b: -80, c: 0}))

    # Scheduling goes on past an expired score; the DecisionUpdate event is a Warning
    # naming it and the plugin, as upstream's.
    warning = (
        "Warning",
        f"Decision cpu-decision-1 is updated with placement cpu in namespace "
        f"{fleet.namespace}: AddOnPlacementScores {c}/usage expired in plugin AddOn/usage/cpu",
    )

    async def warned() -> bool:
        events = await placement_events(api, fleet, "cpu", "DecisionUpdate")
        assert warning in [(e["type"], e["note"]) for e in events]
        return True

    await eventually(warned)
    found = await fleet.condition("cpu", "PlacementMisconfigured")
    assert found["status"] == "False"

    # A score changed reschedules the placements scoring by it.
    await set_scores(api, a, "usage", cpu=90, memory=60)
    await fleet.wait_chosen("cpu", [a])
    await wait_score_message(api, fleet, "cpu", scores_text({a: 90, b: 80, c: 0}))
    # A score made valid again counts.
    future = datetime.now(UTC) + timedelta(hours=1)
    await set_scores(api, c, "usage", valid_until=future, cpu=100, memory=100)
    await fleet.wait_chosen("cpu", [c])
    await fleet.wait_chosen("memory", [c])
    await wait_score_message(api, fleet, "cpu", scores_text({a: 90, b: 80, c: 100}))
