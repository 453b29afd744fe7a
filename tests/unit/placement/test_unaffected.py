"""A cluster change the enqueuer lets pass without a pass must be one a pass would not
act on: over random fleets, placements and changes, whenever the placement is not
enqueued, scheduling it anyway gives the same decisions (:mod:`.scheduling.unaffected`).
The world is test_requeue's in-memory one, with the enqueuer over the same caches."""

from __future__ import annotations

import copy
import random
from datetime import timedelta
from typing import Any

from pyocm.kube import timefmt
from pyocm.placement.enqueue import Enqueuer
from pyocm.runtime.informer import Change
from tests.unit.placement.test_requeue import KEY, START, World, placement, world

Obj = dict[str, Any]
ZONES = ("z1", "z2", "z3")
CPUS = ("2", "4", "8", "16")
POLICIES: list[Obj] = [
    {"mode": "Additive"},
    {
        "mode": "Exact",
        "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Steady"}, "weight": 1},
            {
                "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                "weight": 2,
            },
        ],
    },
    {
        "mode": "Additive",
        "configurations": [
            {
                "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                "weight": 1,
            },
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 3},
        ],
    },
]


def random_cluster(rng: random.Random, index: int) -> Obj:
    found: Obj = {
        "metadata": {
            "name": f"c{index:02d}",
            "labels": {"fleet": "a", "zone": rng.choice(ZONES)},
            "resourceVersion": "1",
        },
        "spec": {"hubAcceptsClient": True, "taints": []},
    }
    mutate_status(rng, found)
    if rng.random() < 0.15:
        found["spec"]["taints"] = [{"key": "gpu", "effect": "NoSelect", "value": "busy"}]
    return found


def mutate_status(rng: random.Random, cluster: Obj) -> None:
    if rng.random() < 0.1:
        cluster.pop("status", None)  # reports no allocatable: no ResourceAllocatable score
        return
    cpu = rng.choice(CPUS)
    cluster["status"] = {"allocatable": {"cpu": cpu}, "capacity": {"cpu": "64"}}


def random_change(rng: random.Random, cluster: Obj) -> Obj:
    new = copy.deepcopy(cluster)
    new["metadata"]["resourceVersion"] = str(int(cluster["metadata"]["resourceVersion"]) + 1)
    what = rng.random()
    if what < 0.5:
        new["metadata"]["labels"]["zone"] = rng.choice(ZONES)
    elif what < 0.8:
        mutate_status(rng, new)
    else:
        tainted = bool(new["spec"]["taints"])
        new["spec"]["taints"] = [] if tainted else [{"key": "gpu", "effect": "NoSelect"}]
    return new


def random_world(rng: random.Random) -> World:
    clusters = [random_cluster(rng, i) for i in range(rng.randrange(4, 14))]
    found = world(*clusters, tolerations=[])
    spec = placement([])["spec"]
    spec["prioritizerPolicy"] = rng.choice(POLICIES)
    number = rng.choice([None, 1, 2, 3, 5])
    if number is not None:
        spec["numberOfClusters"] = number
    if rng.random() < 0.7:
        selector = {"matchLabels": {"zone": rng.choice(ZONES)}}
        spec["predicates"] = [{"requiredClusterSelector": {"labelSelector": selector}}]
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    stored = found.informers.placements.store.get(KEY)
    assert stored is not None
    stored["metadata"]["generation"] = 1
    stored["spec"] = spec
    other = {  # another placement's decisions, for Balance
        "metadata": {
            "name": "q-decision-1",
            "namespace": "other",
            "labels": {"cluster.open-cluster-management.io/placement": "q"},
            "resourceVersion": "1",
        },
        "status": {
            "decisions": [
                {"clusterName": c["metadata"]["name"], "reason": ""}
                for c in rng.sample(clusters, k=len(clusters) // 2)
            ]
        },
    }
    found.informers.decisions._apply("ADDED", other)
    return found


def enqueuer_of(found: World) -> Enqueuer:
    """An enqueuer over the world's caches, judging by its controller's summaries."""
    return Enqueuer(
        placements=found.informers.placements,
        cluster_sets=found.informers.cluster_sets,
        bindings=found.informers.bindings,
        clusters=found.informers.clusters,
        decisions=found.informers.decisions,
        unaffected=found.scheduling.unaffected,
    )


async def settle(found: World) -> list[str]:
    """Schedule until the decisions stop changing (Steady's pull is reached)."""
    before: list[str] | None = None
    for _ in range(6):
        await found.scheduling.reconcile(KEY)
        now = found.chosen()
        if now == before:
            return now
        before = now
    raise AssertionError("scheduling did not settle")


async def test_a_placement_left_alone_would_have_decided_the_same() -> None:
    rng = random.Random(20)
    skipped = woken = 0
    for _ in range(500):
        found = random_world(rng)
        enqueuer = enqueuer_of(found)
        chosen = await settle(found)
        for _ in range(12):
            old = rng.choice(found.informers.clusters.store.objects())
            new = random_change(rng, old)
            found.informers.clusters._apply("MODIFIED", new)
            if KEY in enqueuer.for_cluster_change(Change(old, new)):
                woken += 1
                chosen = await settle(found)
                continue
            skipped += 1
            # A pass now must decide the same; its fresh summary is then put back, so
            # the next changes are judged by the summary the skips kept up to date.
            kept = dict(found.scheduling.summaries)
            await found.scheduling.reconcile(KEY)
            assert found.chosen() == chosen, (old, new)
            found.scheduling.summaries = kept
    assert skipped > 300 and woken > 100, (skipped, woken)


def score(cluster_name: str, value: int, valid_until: str | None) -> Obj:
    found: Obj = {
        "metadata": {"name": "s", "namespace": cluster_name, "resourceVersion": "1"},
        "status": {"scores": [{"name": "x", "value": value}]},
    }
    if valid_until:
        found["status"]["validUntil"] = valid_until
    return found


def zoned(name: str, zone: str, version: str = "1") -> Obj:
    return {
        "metadata": {
            "name": name,
            "labels": {"fleet": "a", "zone": zone},
            "resourceVersion": version,
        },
        "spec": {"hubAcceptsClient": True, "taints": []},
    }


async def test_a_placement_scoring_by_add_on_is_woken_since_its_scores_expire() -> None:
    # No event marks an AddOnPlacementScore passing validUntil: a pass a cluster change
    # causes is when the expired score counts, as upstream (found by review).
    found = world(zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2"), tolerations=[])
    stored = found.informers.placements.store.get(KEY)
    assert stored is not None
    stored["metadata"]["generation"] = 1
    stored["spec"]["numberOfClusters"] = 1
    stored["spec"]["predicates"] = [
        {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"zone": "z1"}}}}
    ]
    add_on = {"type": "AddOn", "addOn": {"resourceName": "s", "scoreName": "x"}}
    stored["spec"]["prioritizerPolicy"] = {
        "mode": "Exact",
        "configurations": [{"scoreCoordinate": add_on, "weight": 1}],
    }
    soon = timefmt.format_time(START + timedelta(seconds=60))
    found.informers.scores._apply("ADDED", score("a", 100, soon))
    found.informers.scores._apply("ADDED", score("b", 50, None))
    found.informers.scores._apply("ADDED", score("c", -10, None))
    enqueuer = enqueuer_of(found)
    assert await settle(found) == ["a"]
    found.clock.advance(120)  # a's score expires: it scores 0 now, b 50
    old = found.informers.clusters.store.get("c")
    assert old is not None
    new = zoned("c", "z1", version="2")
    found.informers.clusters._apply("MODIFIED", new)
    assert KEY in enqueuer.for_cluster_change(Change(old, new))
    await found.scheduling.reconcile(KEY)
    assert found.chosen() == ["b"]
