"""A Placements install strategy rolling a config change out decision group by decision
group (``ProgressivePerGroup``) through a real hub: the placement's
``decisionStrategy`` groups its clusters, the mandatory group goes first whatever its
index, and each next group gets the new AddOnDeploymentConfig only once every cluster
of the group before completed it.

As in test_addon_manager.py (whose fixtures this reuses), the add-on manager's
controllers run in the test process with an add-on reading AddOnDeploymentConfigs, the
hub's placement controller decides, and the test acts as the deploy controller and the
work agent (:func:`~tests.e2e.test_addon_manager.complete`)."""

from __future__ import annotations

from typing import Any

from pyocm.addon.hub.spechash import spec_hash
from pyocm.api import conditions
from pyocm.api import kinds as ocm
from tests.e2e import test_addon_manager as manager_tests
from tests.e2e.test_addon_manager import (
    ADC_GR,
    World,
    complete,
    condition,
    eventually,
    placements_strategy,
)

# test_addon_manager.py's fixtures: a hub without its own add-on manager, and a World
# with the add-on manager running in-process.
hub = manager_tests.hub
world = manager_tests.world

Obj = dict[str, Any]
CONFIGURED = ("True", "ConfigurationsConfigured", "Configurations configured")
NOT_CONFIGURED = (
    "False",
    "ConfigurationsNotConfigured",
    "Configurations updated and not configured yet",
)


def group(name: str, tier: str) -> Obj:
    return {
        "groupName": name,
        "groupClusterSelector": {"labelSelector": {"matchLabels": {"tier": tier}}},
    }


async def tiered(world: World, name: str, tier: str | None) -> str:
    cluster = await world.cluster(name)
    if tier is not None:
        await world.api.patch(
            ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {"tier": tier}}}
        )
    return cluster


async def desired(world: World, cluster: str) -> str | None:
    """The name of the config the MCA is to have now, once it is configured."""
    mca = await world.mca(cluster)
    if condition(mca, "Configured") != CONFIGURED:
        assert condition(mca, "Configured") in (None, NOT_CONFIGURED)
        return None
    [ref] = mca["status"]["configReferences"]
    return str(ref["desiredConfig"]["name"])


def strategy_with(world: World, config: str, rollout: Obj) -> Obj:
    return placements_strategy(
        {
            "namespace": world.namespace,
            "name": "grouped",
            "rolloutStrategy": rollout,
            "configs": [{**ADC_GR, "namespace": world.namespace, "name": config}],
        }
    )


async def test_a_config_rolls_out_group_by_group_mandatory_first(world: World) -> None:
    await world.adc("v1", {"customizedVariables": [{"name": "v", "value": "1"}]})
    v2 = await world.adc("v2", {"customizedVariables": [{"name": "v", "value": "2"}]})
    canary = await tiered(world, "a-canary", "canary")
    prod = [await tiered(world, "b-prod", "prod"), await tiered(world, "c-prod", "prod")]
    rest = await tiered(world, "d-rest", None)
    await world.placement(
        "grouped",
        decisionStrategy={
            "groupStrategy": {"decisionGroups": [group("prod", "prod"), group("canary", "canary")]}
        },
    )

    async def grouped() -> bool:
        placement = await world.api.get(ocm.PLACEMENT, "grouped", namespace=world.namespace)
        found = {
            (g["decisionGroupIndex"], g["decisionGroupName"], g["clusterCount"])
            for g in placement["status"]["decisionGroups"]
        }
        assert found == {(0, "prod", 2), (1, "canary", 1), (2, "", 1)}
        return True

    await eventually(grouped)
    # The canary group is index 1, yet mandatory: it goes first.
    rollout = {
        "type": "ProgressivePerGroup",
        "progressivePerGroup": {"mandatoryDecisionGroups": [{"groupName": "canary"}]},
    }
    await world.cma(strategy_with(world, "v1", rollout))
    everyone = [canary, *prod, rest]

    async def stage(expected: dict[str, str | None]) -> None:
        async def reached() -> bool:
            assert {c: await desired(world, c) for c in everyone} == expected
            return True

        await eventually(reached)

    await stage({canary: "v1", prod[0]: None, prod[1]: None, rest: None})
    await complete(world, canary)
    await stage({canary: "v1", prod[0]: "v1", prod[1]: "v1", rest: None})
    await complete(world, prod[0])
    # One of the group's two clusters done is not the group done.
    await eventually(lambda: _applied(world, prod[0], "v1"))
    await stage({canary: "v1", prod[0]: "v1", prod[1]: "v1", rest: None})
    await complete(world, prod[1])
    await stage({canary: "v1", prod[0]: "v1", prod[1]: "v1", rest: "v1"})
    await complete(world, rest)
    await eventually(lambda: _progression_completed(world, "v1", 4))

    # The change: v2 reaches the canary, then the prod group, then the rest; the
    # clusters waiting keep v1 as their desired config.
    await world.api.patch(
        ocm.CLUSTER_MANAGEMENT_ADDON,
        world.addon,
        {"spec": strategy_with(world, "v2", rollout)},
    )

    async def still(expected: dict[str, str]) -> None:
        async def reached() -> bool:
            for cluster, name in expected.items():
                mca = await world.mca(cluster)
                [ref] = mca["status"]["configReferences"]
                assert ref["desiredConfig"]["name"] == name
                if name == "v2":
                    assert ref["desiredConfig"]["specHash"] == spec_hash(v2)
                    assert condition(mca, "Configured") == CONFIGURED
                else:
                    assert condition(mca, "Configured") == NOT_CONFIGURED
            return True

        await eventually(reached)

    await still({canary: "v2", prod[0]: "v1", prod[1]: "v1", rest: "v1"})
    await complete(world, canary)
    await still({canary: "v2", prod[0]: "v2", prod[1]: "v2", rest: "v1"})
    await complete(world, prod[0])
    await complete(world, prod[1])
    await still({canary: "v2", prod[0]: "v2", prod[1]: "v2", rest: "v2"})
    await complete(world, rest)
    await eventually(lambda: _progression_completed(world, "v2", 4))


async def _applied(world: World, cluster: str, name: str) -> bool:
    mca = await world.mca(cluster)
    [ref] = mca["status"]["configReferences"]
    assert (ref.get("lastAppliedConfig") or {}).get("name") == name
    return True


async def _progression_completed(world: World, name: str, clusters: int) -> bool:
    cma = await world.api.get(ocm.CLUSTER_MANAGEMENT_ADDON, world.addon)
    [progression] = cma["status"]["installProgressions"]
    found = conditions.find(progression.get("conditions"), "Progressing")
    assert found is not None
    assert (found["status"], found["reason"], found["message"]) == (
        "False",
        "Completed",
        f"selected clusters {clusters}. configured addons {clusters}/{clusters} "
        "completed with no errors, 0 failed 0 timeout.",
    )
    assert progression["configReferences"][0]["lastKnownGoodConfig"]["name"] == name
    return True


async def stall(world: World, cluster: str) -> None:
    """Act as a deploy controller whose manifests were applied but whose work never
    comes: the add-on stays Progressing ("no addon works") until its deadline."""
    mca = await world.mca(cluster)
    applied = {
        "type": "ManifestApplied",
        "status": "True",
        "reason": "AddonManifestApplied",
        "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    await world.api.patch(
        ocm.MANAGED_CLUSTER_ADDON,
        world.addon,
        {"status": {"conditions": [*conditions.of(mca), applied]}},
        namespace=cluster,
        subresource="status",
    )


async def test_a_group_goes_on_past_a_timed_out_cluster_within_max_failures(
    world: World,
) -> None:
    await world.adc("v1", {"customizedVariables": [{"name": "v", "value": "1"}]})
    first = [await tiered(world, "a-first", "first"), await tiered(world, "b-first", "first")]
    second = await tiered(world, "c-second", "second")
    await world.placement(
        "grouped",
        decisionStrategy={
            "groupStrategy": {
                "decisionGroups": [group("first", "first"), group("second", "second")]
            }
        },
    )

    async def grouped() -> bool:
        placement = await world.api.get(ocm.PLACEMENT, "grouped", namespace=world.namespace)
        assert [g["clusterCount"] for g in placement["status"]["decisionGroups"]] == [2, 1]
        return True

    await eventually(grouped)
    # One failure (a timed-out cluster counts as one) is allowed per group.
    rollout = {
        "type": "ProgressivePerGroup",
        "progressivePerGroup": {"progressDeadline": "3s", "maxFailures": 1},
    }
    await world.cma(strategy_with(world, "v1", rollout))
    everyone = [*first, second]

    async def stage(expected: dict[str, str | None]) -> None:
        async def reached() -> bool:
            assert {c: await desired(world, c) for c in everyone} == expected
            return True

        await eventually(reached)

    await stage({first[0]: "v1", first[1]: "v1", second: None})
    await complete(world, first[0])
    await stall(world, first[1])

    async def stuck() -> bool:
        mca = await world.mca(first[1])
        assert condition(mca, "Progressing") == (
            "True",
            "Progressing",
            "progressing... no addon works",
        )
        return True

    await eventually(stuck)
    # Three seconds on, the stuck cluster has timed out: within the group's budget, so
    # the next group gets the config.
    await stage({first[0]: "v1", first[1]: "v1", second: "v1"})
    await complete(world, second)

    async def counted() -> bool:
        cma = await world.api.get(ocm.CLUSTER_MANAGEMENT_ADDON, world.addon)
        [progression] = cma["status"]["installProgressions"]
        found = conditions.find(progression.get("conditions"), "Progressing")
        assert found is not None and found["message"].endswith("0 failed 1 timeout."), found
        return True

    await eventually(counted)
