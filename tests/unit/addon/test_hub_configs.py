"""Pure parts of the hub add-on controllers: config precedence, rollout status, merging
config references, install progressions, the Progressing judgement, owners, annotations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pyocm.addon.hub import annotations as annotation_sync
from pyocm.addon.hub import configs, graph, owner, progressing, progression, refs
from pyocm.work import rollout

Obj = dict[str, Any]
ADC = {"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"}
NOW = datetime(2024, 1, 1, tzinfo=UTC)


def cfg(name: str, namespace: str = "ns", **extra: Any) -> Obj:
    return {**ADC, "namespace": namespace, "name": name, **extra}


def desired(name: str, hash_: str = "") -> Obj:
    return {"namespace": "ns", "name": name, "specHash": hash_}


def mca(cluster: str, *, spec: Obj | None = None, status: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": "a", "namespace": cluster},
        "spec": spec or {},
        "status": status or {},
    }


def cma_with(placements: list[Obj], progressions: list[Obj]) -> Obj:
    return {
        "metadata": {"name": "a"},
        "spec": {
            "defaultConfigs": [cfg("d")],
            "installStrategy": {"type": "Placements", "placements": placements},
        },
        "status": {
            "defaultConfigReferences": [{**ADC, "desiredConfig": desired("d", "hd")}],
            "installProgressions": progressions,
        },
    }


def found(clusters: list[str]) -> graph.Placement:
    return graph.Placement({"spec": {}}, {rollout.GroupKey(): frozenset(clusters)})


def names(configs_: graph.ConfigMap) -> list[str]:
    return [r["desiredConfig"]["name"] for refs in configs_.values() for r in refs]


def test_the_last_placement_selecting_a_cluster_wins_and_mca_spec_overrides_it() -> None:
    placements = [{"namespace": "p", "name": "one"}, {"namespace": "p", "name": "two"}]
    progressions = [
        {
            "namespace": "p",
            "name": "one",
            "configReferences": [{**ADC, "desiredConfig": desired("p1", "h1")}],
        },
        {
            "namespace": "p",
            "name": "two",
            "configReferences": [{**ADC, "desiredConfig": desired("p2", "h2")}],
        },
    ]
    mcas = [mca("c1"), mca("c2"), mca("c3"), mca("c4", spec={"configs": [cfg("own")]})]
    built = graph.build(
        cma_with(placements, progressions),
        mcas,
        {("p", "one"): found(["c1", "c2"]), ("p", "two"): found(["c2", "c4"])},
    )
    one, two = built.nodes
    assert {c: names(n.desired) for c, n in one.children.items()} == {"c1": ["p1"]}
    assert {c: names(n.desired) for c, n in two.children.items()} == {"c2": ["p2"], "c4": ["own"]}
    assert {c: names(n.desired) for c, n in built.defaults.children.items()} == {"c3": ["d"]}
    assert one.configured == {"c1"} and one.clusters == {"c1", "c2"}
    assert (
        two.children["c2"].desired[("addon.open-cluster-management.io", "addondeploymentconfigs")][
            0
        ]["desiredConfig"]["specHash"]
        == "h2"
    )


def test_rollout_status_follows_status_and_progressing_reason() -> None:
    want = {refs.gr_of(ADC): [{**ADC, "desiredConfig": desired("d", "h")}]}
    assert graph.rollout_status(mca("c"), want).status == rollout.Status.TO_APPLY
    recorded = {**ADC, "desiredConfig": desired("d", "h")}
    failed = {
        "type": "Progressing",
        "status": "False",
        "reason": "Failed",
        "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    status = graph.rollout_status(
        mca("c", status={"configReferences": [recorded], "conditions": [failed]}), want
    )
    assert (status.status, status.last_transition) == (rollout.Status.FAILED, NOW)
    stale = {**ADC, "desiredConfig": desired("d", "old")}
    assert (
        graph.rollout_status(mca("c", status={"configReferences": [stale]}), want).status
        == rollout.Status.TO_APPLY
    )
    done = {**recorded, "lastAppliedConfig": desired("d", "h")}
    assert (
        graph.rollout_status(mca("c", status={"configReferences": [done]}), want).status
        == rollout.Status.SUCCEEDED
    )


def test_merge_keeps_what_was_recorded_for_configs_still_desired() -> None:
    kept = {
        **ADC,
        "desiredConfig": desired("d", "old"),
        "lastObservedGeneration": 3,
        "lastAppliedConfig": desired("d", "old"),
    }
    dropped = {
        "group": "",
        "resource": "configmaps",
        "desiredConfig": {"name": "x", "specHash": ""},
        "lastObservedGeneration": 1,
    }
    want = {
        refs.gr_of(ADC): [
            {**ADC, "desiredConfig": desired("d", "new")},
            {**ADC, "desiredConfig": desired("e", "he")},
        ]
    }
    merged = configs.merge_config_references(
        mca("c", status={"configReferences": [dropped, kept]}), want
    )
    assert merged == [
        {
            **ADC,
            "desiredConfig": desired("d", "new"),
            "lastObservedGeneration": 3,
            "lastAppliedConfig": desired("d", "old"),
        },
        {**ADC, "desiredConfig": desired("e", "he"), "lastObservedGeneration": 0},
    ]


def test_progression_condition_messages() -> None:
    progression_: Obj = {"configReferences": [{**ADC, "desiredConfig": desired("d", "h")}]}
    configs.progression_condition(progression_, (0, 0, 0, 0), 0, 0, NOW)
    assert (
        progression_["conditions"][0]["message"]
        == "selected clusters 0. configured addons 0/0 progressing..., 0 failed 0 timeout."
    )
    configs.progression_condition(progression_, (1, 1, 0, 0), 3, 2, NOW)
    assert (
        progression_["conditions"][0]["message"]
        == "selected clusters 3. configured addons 2/2 progressing..., 0 failed 0 timeout."
    )
    configs.progression_condition(progression_, (0, 2, 1, 1), 3, 2, NOW)
    assert (progression_["conditions"][0]["status"], progression_["conditions"][0]["message"]) == (
        "False",
        "selected clusters 3. configured addons 2/2 completed with no errors, 1 failed 1 timeout.",
    )
    assert progression_["configReferences"][0]["lastKnownGoodConfig"] == desired("d", "h")


def test_install_progressions_override_defaults_per_resource_and_keep_history() -> None:
    defaults = [
        cfg("d"),
        {"group": "", "resource": "configmaps", "name": "__reserved_no_default__"},
    ]
    placement = {"namespace": "p", "name": "one", "configs": [cfg("x"), cfg("y"), cfg("x")]}
    history = {
        "namespace": "p",
        "name": "one",
        "configReferences": [
            {
                **ADC,
                "desiredConfig": desired("x", "hx"),
                "lastAppliedConfig": desired("x", "hx"),
                "lastKnownGoodConfig": None,
            },
            {**ADC, "desiredConfig": desired("y", "hy")},
        ],
        "conditions": [{"type": "Progressing"}],
    }
    [found_] = progression.install_progressions(defaults, [placement], [history])
    assert found_ == {
        "namespace": "p",
        "name": "one",
        "configReferences": [
            {**ADC, "desiredConfig": desired("x", "hx"), "lastAppliedConfig": desired("x", "hx")},
            {**ADC, "desiredConfig": desired("y", "hy")},
        ],
        "conditions": [{"type": "Progressing"}],
    }
    assert progression.default_config_references(defaults, []) == [
        {**ADC, "desiredConfig": desired("d")}
    ]


def test_work_configs_must_match_the_mca_desired_hashes() -> None:
    refs_ = [{**ADC, "desiredConfig": desired("d", "h")}]
    addon = mca("c", status={"configReferences": refs_})
    key = "addondeploymentconfigs.addon.open-cluster-management.io/ns/d"
    work: Any = {
        "metadata": {
            "name": "w",
            "annotations": {progressing.CONFIG_SPEC_HASH_ANNOTATION: json.dumps({key: "h"})},
        }
    }
    assert progressing.work_matches(work, addon)
    work["metadata"]["annotations"][progressing.CONFIG_SPEC_HASH_ANNOTATION] = json.dumps(
        {key: "other"}
    )
    assert not progressing.work_matches(work, addon)
    assert not progressing.work_matches({"metadata": {"name": "w"}}, addon)
    assert progressing.work_matches({"metadata": {"name": "w"}}, mca("c"))
    assert progressing.progressing(addon, []) == ("Progressing", "progressing... no addon works")


def test_unsupported_config_is_the_first_spec_config_not_supported() -> None:
    addon = mca(
        "c",
        spec={"configs": [cfg("d"), {"group": "x.io", "resource": "things", "name": "t"}]},
        status={"supportedConfigs": [ADC]},
    )
    assert progressing.unsupported_config(addon) == ("x.io", "things")


def test_owner_merge_replaces_a_reference_of_another_version() -> None:
    required: Any = {
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ClusterManagementAddOn",
        "name": "a",
        "uid": "u",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs_: list[Any] = [
        {
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ClusterManagementAddOn",
            "name": "a",
            "uid": "u",
        }
    ]
    assert owner.merge_owner(refs_, required) and refs_ == [required]
    assert not owner.merge_owner(refs_, required)


def test_annotation_sync_adds_updates_and_removes_addon_ones_only() -> None:
    current = {
        "addon.open-cluster-management.io/old": "1",
        "addon.open-cluster-management.io/k": "1",
        "mine": "x",
    }
    assert annotation_sync.sync_annotations(
        current, {"addon.open-cluster-management.io/k": "2"}
    ) == {
        "mine": "x",
        "addon.open-cluster-management.io/k": "2",
    }
    assert (
        annotation_sync.sync_annotations(
            {"addon.open-cluster-management.io/k": "2"}, {"addon.open-cluster-management.io/k": "2"}
        )
        is None
    )


def test_annotation_sync_keeps_the_mcas_install_namespace() -> None:
    # Found by review: v1beta1 keeps a v1alpha1 installNamespace in this annotation;
    # removing it (as upstream does) moved the agent's credential to the default.
    key = annotation_sync.INSTALL_NAMESPACE
    current = {key: "mine", "addon.open-cluster-management.io/k": "1"}
    assert annotation_sync.sync_annotations(current, {key: "cluster's"}) == {key: "mine"}
