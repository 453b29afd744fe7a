"""Status feedback values, with upstream's cases (pkg/work/spoke/statusfeedback/reader_test.go,
max JSON raw length 40 as there) and the StatusFeedbackSynced condition."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.work.agent.status.feedback import (
    FeedbackError,
    feedback,
    go_json,
    value_by_path,
    values_by_rule,
)

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "test"},
    "status": {
        "readyReplicas": 1,
        "replicas": 2,
        "conditions": [{"type": "Available", "status": "true"}],
    },
}
DEPLOYMENT_MULTI_CONDITION = {
    **DEPLOYMENT,
    "status": {
        "readyReplicas": 1,
        "replicas": 2,
        "conditions": [
            {"type": "Cond1", "status": "true"},
            {"type": "Cond2", "status": "false"},
            {"type": "Cond3", "status": "true"},
        ],
    },
}
DEPLOYMENT_UNKNOWN_GROUP = {**DEPLOYMENT, "apiVersion": "extensions/v1"}
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "test"},
    "status": {"conditions": [{"status": "True", "type": "Complete"}], "succeeded": 1},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "test"},
    "status": {"conditions": [{"status": "False", "type": "Ready"}], "phase": "Succeeded"},
}
DAEMONSET = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "test"},
    "status": {"numberReady": 3, "desiredNumberScheduled": 4, "numberAvailable": 2},
}
WELL_KNOWN = {"type": "WellKnownStatus"}


def integer(name: str, value: int) -> dict[str, Any]:
    return {"name": name, "fieldValue": {"type": "Integer", "integer": value}}


def string(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "fieldValue": {"type": "String", "string": value}}


def raw(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "fieldValue": {"type": "JsonRaw", "jsonRaw": value}}


def paths(*pairs: tuple[str, str], version: str | None = None) -> Any:
    found = [{"name": n, "path": p} for n, p in pairs]
    if version is not None:
        found[0]["version"] = version
    return {"type": "JSONPaths", "jsonPaths": found}


def read(obj: Any, rule: Any, *, raw_json: bool = False) -> tuple[list[Any], list[str]]:
    return values_by_rule(obj, rule, max_json_raw_length=40, raw_json=raw_json)


# -- upstream's TestStatusReader -------------------------------------------------------


def test_deployment_well_known_values_skip_the_missing_available_replicas() -> None:
    assert read(DEPLOYMENT, WELL_KNOWN) == (
        [integer("ReadyReplicas", 1), integer("Replicas", 2)],
        [],
    )


def test_deployment_jsonpath_with_a_filter_and_trailing_space() -> None:
    rule = paths(("available", '.status.conditions[?(@.type=="Available")].status '))
    assert read(DEPLOYMENT, rule) == ([string("available", "true")], [])


def test_a_list_value_is_an_error_without_raw_json_and_the_other_path_still_reads() -> None:
    values, errors = read(
        DEPLOYMENT, paths(("available", ".status.conditions"), ("replicas", ".status.replicas"))
    )
    assert values == [integer("replicas", 2)]
    assert errors == ["the type []interface {} of the value for available is not found"]


def test_a_kind_upstream_does_not_know_by_exact_group_is_an_error() -> None:
    assert read(DEPLOYMENT_UNKNOWN_GROUP, WELL_KNOWN) == (
        [],
        ["cannot find the wellknown statuses for resource with gvk extensions/v1, Kind=Deployment"],
    )


def test_a_path_whose_version_does_not_match_is_skipped_with_an_error() -> None:
    rule = paths(
        ("available", ".status.conditions"), ("replicas", ".status.replicas"), version="v1beta1"
    )
    assert read(DEPLOYMENT, rule) == (
        [integer("replicas", 2)],
        ["version set in the path available is not matched for the related resource"],
    )


def test_a_path_whose_version_matches_is_read() -> None:
    assert read(DEPLOYMENT, paths(("replicas", ".status.replicas"), version="v1")) == (
        [integer("replicas", 2)],
        [],
    )


def test_job_well_known_values() -> None:
    assert read(JOB, WELL_KNOWN) == (
        [string("JobComplete", "True"), integer("JobSucceeded", 1)],
        [],
    )


def test_pod_well_known_values() -> None:
    assert read(POD, WELL_KNOWN) == (
        [string("PodReady", "False"), string("PodPhase", "Succeeded")],
        [],
    )


def test_daemonset_well_known_values() -> None:
    assert read(DAEMONSET, WELL_KNOWN) == (
        [
            integer("NumberReady", 3),
            integer("DesiredNumberScheduled", 4),
            integer("NumberAvailable", 2),
        ],
        [],
    )


def test_several_matches_without_raw_json_give_the_first() -> None:
    rule = paths(("type", '.status.conditions[?(@.status=="true")].type '))
    values, errors = read(DEPLOYMENT_MULTI_CONDITION, rule)
    assert (values, errors) == ([string("type", "Cond1")], [])


def test_raw_json_value_format() -> None:
    assert read(POD, paths(("conditions", ".status.conditions")), raw_json=True) == (
        [raw("conditions", '[{"status":"False","type":"Ready"}]')],
        [],
    )


def test_raw_json_longer_than_the_limit_is_an_error() -> None:
    values, errors = read(POD, paths(("status", ".status")), raw_json=True)
    assert values == []
    assert errors == [
        "the length of returned json raw string for name status is larger than the maximum length 40"
    ]


def test_several_matches_with_raw_json_are_a_list() -> None:
    rule = paths(("conditions", '.status.conditions[?(@.status=="true")].type'))
    assert read(DEPLOYMENT_MULTI_CONDITION, rule, raw_json=True) == (
        [raw("conditions", '["Cond1","Cond3"]')],
        [],
    )


# -- value types and failures ----------------------------------------------------------


OBJ = {
    "apiVersion": "example.io/v1",
    "kind": "Thing",
    "status": {
        "count": 3,
        "ready": True,
        "phase": "Running",
        "ratio": 0.5,
        "nothing": None,
        "huge": 2**63,
        "map": {"b": 1, "a": "<x&y>"},
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".status.count", {"type": "Integer", "integer": 3}),
        (".status.ready", {"type": "Boolean", "boolean": True}),
        (".status.phase", {"type": "String", "string": "Running"}),
    ],
)
def test_scalar_values_are_typed(path: str, expected: dict[str, Any]) -> None:
    assert value_by_path(OBJ, "v", path) == {"name": "v", "fieldValue": expected}


@pytest.mark.parametrize("path", [".status.missing", ".status.nothing", ".spec.replicas"])
def test_a_path_reaching_nothing_or_null_gives_no_value_and_no_error(path: str) -> None:
    assert value_by_path(OBJ, "v", path) is None


@pytest.mark.parametrize(
    ("path", "go_type"),
    [
        (".status.ratio", "float64"),
        (".status.huge", "float64"),
        (".status.map", "map[string]interface {}"),
    ],
)
def test_other_values_without_raw_json_are_errors_naming_the_go_type(
    path: str, go_type: str
) -> None:
    with pytest.raises(FeedbackError) as caught:
        value_by_path(OBJ, "v", path)
    assert str(caught.value) == f"the type {go_type} of the value for v is not found"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".status.ratio", "0.5"),
        (".status.huge", "9223372036854776000"),  # a float64, shortest digits as Go
        (".status.map", '{"a":"\\u003cx\\u0026y\\u003e","b":1}'),
    ],
)
def test_other_values_with_raw_json_are_go_json(path: str, expected: str) -> None:
    assert value_by_path(OBJ, "v", path, raw_json=True) == raw("v", expected)


def test_the_raw_length_limit_counts_bytes_and_admits_the_limit_itself() -> None:
    obj = {"status": {"list": ["é" * 3]}}  # ["ééé"]: 10 bytes, 7 characters
    assert value_by_path(obj, "v", ".status.list", raw_json=True, max_json_raw_length=10) == raw(
        "v", '["ééé"]'
    )
    with pytest.raises(FeedbackError, match="larger than the maximum length 9"):
        value_by_path(obj, "v", ".status.list", raw_json=True, max_json_raw_length=9)


def test_the_default_raw_length_limit_is_1024() -> None:
    obj = {"status": {"list": ["x" * 1020]}}  # 1024 bytes with quotes and brackets
    assert value_by_path(obj, "v", ".status.list", raw_json=True) is not None
    obj = {"status": {"list": ["x" * 1021]}}
    with pytest.raises(FeedbackError, match="larger than the maximum length 1024"):
        value_by_path(obj, "v", ".status.list", raw_json=True)


def test_a_value_too_deep_to_encode_is_an_error_not_a_crash() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(FeedbackError) as caught:
        value_by_path({"status": {"deep": deep}}, "v", ".status.deep", raw_json=True)
    assert (
        str(caught.value)
        == "failed to parse the resource to json string for name v: nesting too deep"
    )


def test_a_path_that_does_not_parse_is_an_error_naming_path_and_name() -> None:
    with pytest.raises(FeedbackError) as caught:
        value_by_path(OBJ, "v", ".status[")
    assert str(caught.value).startswith("failed to parse json path .status[ of v with error: ")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "-0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (1e-100, "1e-100"),
        (123456789.125, "123456789.125"),
        ("line\nbreak\u2028", '"line\\nbreak\\u2028"'),
        ([None, True, {"z": [], "a": {}}], '[null,true,{"a":{},"z":[]}]'),
    ],
)
def test_go_json_matches_encoding_json(value: Any, expected: str) -> None:
    assert go_json(value) == expected


def test_an_unknown_rule_type_reads_nothing_and_says_nothing() -> None:
    assert read(DEPLOYMENT, {"type": "Other"}) == ([], [])


# -- the StatusFeedbackSynced condition ------------------------------------------------


def test_no_rules_is_no_status_feedback_synced() -> None:
    for config in (None, {"resourceIdentifier": {"resource": "deployments", "name": "test"}}):
        values, condition = feedback(DEPLOYMENT, config)  # type: ignore[arg-type]
        assert values == []
        assert condition == {
            "type": "StatusFeedbackSynced",
            "status": "True",
            "reason": "NoStatusFeedbackSynced",
            "message": "",
        }


def test_rules_read_without_error_are_status_feedback_synced() -> None:
    config: Any = {"feedbackRules": [WELL_KNOWN, paths(("phase", ".status.phase"))]}
    values, condition = feedback(POD, config)
    assert values == [
        string("PodReady", "False"),
        string("PodPhase", "Succeeded"),
        string("phase", "Succeeded"),
    ]
    assert condition == {
        "type": "StatusFeedbackSynced",
        "status": "True",
        "reason": "StatusFeedbackSynced",
        "message": "",
    }


def test_one_failure_is_its_message() -> None:
    config: Any = {"feedbackRules": [paths(("conditions", ".status.conditions"))]}
    values, condition = feedback(POD, config)
    assert values == []
    assert condition == {
        "type": "StatusFeedbackSynced",
        "status": "False",
        "reason": "StatusFeedbackSyncFailed",
        "message": "Sync status feedback failed with error the type []interface {} of the value for conditions is not found",
    }


def test_several_failures_across_rules_are_one_bracketed_deduplicated_list() -> None:
    config: Any = {
        "feedbackRules": [
            WELL_KNOWN,
            paths(("a", ".status"), ("b", ".status.replicas"), version="v2"),
            paths(("a", ".status")),
            paths(("a", ".status")),
        ]
    }
    values, condition = feedback(DEPLOYMENT_UNKNOWN_GROUP, config)
    assert values == [integer("b", 2)]
    assert condition["status"] == "False"
    assert condition["message"] == (
        "Sync status feedback failed with error ["
        "cannot find the wellknown statuses for resource with gvk extensions/v1, Kind=Deployment, "
        "version set in the path a is not matched for the related resource, "
        "the type map[string]interface {} of the value for a is not found]"
    )


def test_the_raw_json_feature_and_limit_reach_the_rules() -> None:
    config: Any = {"feedbackRules": [paths(("conditions", ".status.conditions"))]}
    values, condition = feedback(POD, config, raw_json=True, max_json_raw_length=20)
    assert values == []
    assert "larger than the maximum length 20" in condition["message"]
