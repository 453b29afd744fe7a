"""A manifest's status entry per sync: Available, feedback, rule conditions, transition
times, and resourceMeta (upstream's objectreader, AvailableStatusController and
helper.BuildResourceMeta)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.status import available_condition, manifest_status, resource_meta

T0 = datetime(2026, 1, 1, 0, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)
T2 = T0 + timedelta(minutes=2)
META = {
    "ordinal": 0,
    "group": "apps",
    "version": "v1",
    "kind": "Deployment",
    "resource": "deployments",
    "name": "web",
    "namespace": "apps",
}
DEPLOYMENTS = {"group": "apps", "resource": "deployments", "name": "web", "namespace": "apps"}


def deployment(ready: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps"},
        "status": {"readyReplicas": ready, "replicas": 2},
    }


def entry(*conditions: dict[str, Any], **rest: Any) -> Any:
    return {"resourceMeta": dict(META), "conditions": list(conditions), **rest}


def config(**rest: Any) -> Any:
    return {"resourceIdentifier": DEPLOYMENTS, **rest}


def sync(
    existing: Any,
    obj: Any,
    *,
    error: BaseException | None = None,
    conf: Any = None,
    now: datetime = T0,
    generation: int = 1,
) -> Any:
    return manifest_status(
        obj, error=error, config=conf, existing=existing, generation=generation, now=now
    )


def by_type(manifest: Any) -> dict[str, Any]:
    return {c["type"]: c for c in manifest["conditions"]}


NOT_FOUND = ApiError(code=404, reason="NotFound", message='deployments.apps "web" not found')
FORBIDDEN = ApiError(code=403, reason="Forbidden", message='deployments.apps "web" is forbidden')


# -- Available ---------------------------------------------------------------------------


def test_available_reasons_and_messages() -> None:
    def available(obj: Any, error: BaseException | None, meta: Any = META) -> tuple[str, str, str]:
        c = available_condition(meta, obj=obj, error=error)
        assert c["type"] == "Available"
        return c["status"], c["reason"], c["message"]

    assert available(deployment(), None) == ("True", "ResourceAvailable", "Resource is available")
    assert available(None, NOT_FOUND) == (
        "False",
        "ResourceNotAvailable",
        "Resource is not available",
    )
    assert available(None, None) == ("False", "ResourceNotAvailable", "Resource is not available")
    assert available(None, FORBIDDEN) == (
        "Unknown",
        "FetchingResourceFailed",
        'Failed to fetch resource: deployments.apps "web" is forbidden',
    )
    assert available(None, ConnectionError("connection refused")) == (
        "Unknown",
        "FetchingResourceFailed",
        "Failed to fetch resource: connection refused",
    )
    for missing in ("resource", "version", "name"):
        assert available(deployment(), None, {**META, missing: ""}) == (
            "Unknown",
            "IncompleteResourceMeta",
            "Resource meta is incomplete",
        )


def test_an_object_read_gets_available_and_no_feedback_without_rules() -> None:
    manifest = sync(entry(), deployment())
    assert manifest["resourceMeta"] == META
    assert manifest["statusFeedback"] == {}
    assert manifest["conditions"] == [
        {
            "type": "Available",
            "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "reason": "ResourceAvailable",
            "message": "Resource is available",
        },
        {
            "type": "StatusFeedbackSynced",
            "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
            "reason": "NoStatusFeedbackSynced",
            "message": "",
        },
    ]


def test_an_object_not_read_changes_only_available() -> None:
    applied = {"type": "Applied", "status": "True", "lastTransitionTime": "2025-12-31T00:00:00Z",
               "reason": "AppliedManifestComplete", "message": "Apply manifest complete", "observedGeneration": 1}  # fmt: skip
    before = sync(
        entry(applied), deployment(), conf=config(feedbackRules=[{"type": "WellKnownStatus"}])
    )
    snapshot = copy.deepcopy(before)
    after = sync(before, None, error=NOT_FOUND, now=T1)
    assert before == snapshot  # the input is left as it is
    assert after["statusFeedback"] == before["statusFeedback"]
    conditions = by_type(after)
    assert conditions["Available"]["status"] == "False"
    assert conditions["Available"]["lastTransitionTime"] == "2026-01-01T00:01:00Z"
    assert conditions["Applied"] == applied
    assert conditions["StatusFeedbackSynced"] == by_type(before)["StatusFeedbackSynced"]


def test_transition_times_stay_while_statuses_do_not_change() -> None:
    first = sync(entry(), deployment())
    second = sync(first, deployment(), now=T1)
    assert second["conditions"] == first["conditions"]
    third = sync(second, None, error=FORBIDDEN, now=T2)
    assert by_type(third)["Available"]["lastTransitionTime"] == "2026-01-01T00:02:00Z"
    assert by_type(third)["Available"]["status"] == "Unknown"


# -- feedback ----------------------------------------------------------------------------


def test_feedback_values_and_their_condition_restarting_when_values_change() -> None:
    conf = config(feedbackRules=[{"type": "WellKnownStatus"}])
    first = sync(entry(), deployment(ready=1), conf=conf)
    assert first["statusFeedback"] == {
        "values": [
            {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": 1}},
            {"name": "Replicas", "fieldValue": {"type": "Integer", "integer": 2}},
        ]
    }
    synced = by_type(first)["StatusFeedbackSynced"]
    assert (synced["status"], synced["reason"]) == ("True", "StatusFeedbackSynced")
    same = sync(first, deployment(ready=1), conf=conf, now=T1)
    assert by_type(same)["StatusFeedbackSynced"]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    changed = sync(same, deployment(ready=2), conf=conf, now=T2)
    assert by_type(changed)["StatusFeedbackSynced"]["lastTransitionTime"] == "2026-01-01T00:02:00Z"
    assert changed["statusFeedback"]["values"][0]["fieldValue"]["integer"] == 2
    # upstream removes and re-adds it: it moves to the end of the list
    assert changed["conditions"][-1]["type"] == "StatusFeedbackSynced"


def test_feedback_failure_and_the_raw_json_options() -> None:
    conf = config(
        feedbackRules=[{"type": "JSONPaths", "jsonPaths": [{"name": "status", "path": ".status"}]}]
    )
    failed = sync(entry(), deployment(), conf=conf)
    synced = by_type(failed)["StatusFeedbackSynced"]
    assert (synced["status"], synced["reason"]) == ("False", "StatusFeedbackSyncFailed")
    assert synced["message"] == (
        "Sync status feedback failed with error the type map[string]interface {} of the value for status is not found"
    )
    raw = manifest_status(
        deployment(),
        error=None,
        config=conf,
        existing=entry(),
        generation=1,
        now=T0,
        raw_feedback_json=True,
    )
    assert raw["statusFeedback"]["values"] == [
        {
            "name": "status",
            "fieldValue": {"type": "JsonRaw", "jsonRaw": '{"readyReplicas":1,"replicas":2}'},
        }
    ]
    short = manifest_status(
        deployment(), error=None, config=conf, existing=entry(), generation=1, now=T0,
        raw_feedback_json=True, max_json_raw_length=10,
    )  # fmt: skip
    assert "larger than the maximum length 10" in by_type(short)["StatusFeedbackSynced"]["message"]


# -- condition rules -----------------------------------------------------------------------

READY_RULE = {
    "type": "CEL",
    "condition": "Ready",
    "celExpressions": ["object.status.readyReplicas == object.status.replicas"],
}


def test_rule_conditions_carry_the_work_generation() -> None:
    manifest = sync(
        entry(), deployment(ready=2), conf=config(conditionRules=[READY_RULE]), generation=3
    )
    assert by_type(manifest)["Ready"] == {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "reason": "ConditionRuleEvaluated",
        "message": "Manifest is Ready",
        "observedGeneration": 3,
    }


def test_rule_conditions_of_a_removed_rule_are_pruned_at_the_next_generation() -> None:
    with_rule = sync(entry(), deployment(), conf=config(conditionRules=[READY_RULE]), generation=1)
    assert "Ready" in by_type(with_rule)
    same_generation = sync(with_rule, deployment(), conf=None, generation=1, now=T1)
    assert "Ready" in by_type(same_generation)
    next_generation = sync(same_generation, deployment(), conf=None, generation=2, now=T2)
    assert "Ready" not in by_type(next_generation)
    assert {"Available", "StatusFeedbackSynced"} <= set(by_type(next_generation))


def test_a_broken_rule_is_a_condition_not_a_crash() -> None:
    broken = {"type": "CEL", "condition": "Ready", "celExpressions": ["object.status.replicas +"]}
    manifest = sync(entry(), deployment(), conf=config(conditionRules=[broken]))
    ready = by_type(manifest)["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "ConditionRuleExpressionError")
    assert ready["message"].startswith("ERROR: <input>:1:")


def test_well_known_complete_for_a_job() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "web"},
           "status": {"conditions": [{"type": "Complete", "status": "True"}]}}  # fmt: skip
    meta: Any = {**META, "group": "batch", "kind": "Job", "resource": "jobs"}
    manifest = manifest_status(
        job,
        error=None,
        config=config(conditionRules=[{"type": "WellKnownConditions", "condition": "Complete"}]),
        existing={"resourceMeta": meta, "conditions": []},
        generation=1,
        now=T0,
    )
    complete = by_type(manifest)["Complete"]
    assert (complete["status"], complete["message"]) == ("True", "Job is finished")


# -- resourceMeta --------------------------------------------------------------------------


def test_resource_meta_of_a_namespaced_kind() -> None:
    kind = Kind("apps", "v1", "Deployment", "deployments", True)
    assert resource_meta(2, deployment(), kind) == {**META, "ordinal": 2}


def test_resource_meta_of_a_cluster_scoped_kind_clears_the_namespace() -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "apps", "namespace": "x"},
    }
    kind = Kind("", "v1", "Namespace", "namespaces", False)
    assert resource_meta(0, manifest, kind) == {
        "ordinal": 0, "group": "", "version": "v1", "kind": "Namespace",
        "resource": "namespaces", "name": "apps", "namespace": "",
    }  # fmt: skip


def test_resource_meta_of_a_kind_not_served_has_no_resource() -> None:
    manifest = {
        "apiVersion": "example.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "namespace": "n"},
    }
    assert resource_meta(1, manifest, None) == {
        "ordinal": 1, "group": "example.io", "version": "v1", "kind": "Thing",
        "resource": "", "name": "t", "namespace": "n",
    }  # fmt: skip


def test_resource_meta_of_nothing_is_only_the_ordinal() -> None:
    empty = {
        "ordinal": 4,
        "group": "",
        "version": "",
        "kind": "",
        "resource": "",
        "name": "",
        "namespace": "",
    }
    assert resource_meta(4, None, None) == empty
    assert resource_meta(4, {"apiVersion": "a/b/c", "kind": "X"}, None) == empty
