"""Events: core and events.k8s.io validation, timestamps, field selectors, conversion."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import events
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ApiError, ErrorType

CTX = Context(user=UserInfo(name="admin"), namespace="default")


def core_event(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"},
        "reason": "Started",
        "message": "hello",
        "source": {"component": "kubelet"},
        "type": "Normal",
        **fields,
    }


def new_event(**fields: Any) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as sdk-go's recorder sends it."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e2", "namespace": "cluster1"},
        "eventTime": "2026-01-02T03:04:05.123456Z",
        "reportingController": "registration-controller",
        "reportingInstance": "hub-1",
        "action": "Joined",
        "reason": "ClusterJoined",
        "note": "cluster joined",
        "type": "Normal",
        "regarding": {"kind": "ManagedCluster", "name": "cluster1", "namespace": "cluster1"},
        **fields,
    }


def test_round_trip_between_shapes() -> None:
    original = new_event(
        series={"count": 2, "lastObservedTime": "2026-01-02T03:04:06.000000Z"},
        related={"kind": "Lease", "name": "l"},
        deprecatedSource={"component": "old"},
        deprecatedFirstTimestamp="2026-01-01T00:00:00Z",
        deprecatedLastTimestamp="2026-01-01T00:00:01Z",
        deprecatedCount=3,
    )
    core = events.to_core(original)
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == original["regarding"]
    assert core["message"] == "cluster joined"
    assert core["reportingComponent"] == "registration-controller"
    assert core["source"] == {"component": "old"}
    assert (core["firstTimestamp"], core["lastTimestamp"], core["count"]) == (
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:01Z",
        3,
    )
    for same in ("eventTime", "series", "action", "reason", "type", "related", "reportingInstance"):
        assert core[same] == original[same]
    assert not set(core) & {"regarding", "note", "reportingController", "deprecatedSource"}
    assert events.from_core(core) == original


def test_core_to_events_and_back() -> None:
    original = core_event(count=4, firstTimestamp="2026-01-01T00:00:00Z")
    assert events.to_core(events.from_core(original)) == original
    assert events.from_core(original)["apiVersion"] == "events.k8s.io/v1"


def test_legacy_event_passes_and_namespace_must_match() -> None:
    strategy = events.CoreEventStrategy()
    assert strategy.validate_create(core_event(), CTX) == []
    wrong = core_event(involvedObject={"kind": "Pod", "name": "p", "namespace": "other"})
    errs = strategy.validate_create(wrong, CTX)
    assert [e.message() for e in errs] == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    ]


def test_legacy_event_of_cluster_scoped_object_only_in_default() -> None:
    strategy = events.CoreEventStrategy()
    obj = core_event(involvedObject={"kind": "Node", "name": "n"})
    assert strategy.validate_create(obj, CTX) == []
    obj["metadata"]["namespace"] = "kube-system"
    assert [e.field for e in strategy.validate_create(obj, CTX)] == ["involvedObject.namespace"]


def test_legacy_event_with_event_time_needs_reporting_fields() -> None:
    obj = core_event(eventTime="2026-01-02T03:04:05.000000Z")
    errs = events.CoreEventStrategy().validate_create(obj, CTX)
    assert [(e.type, e.field) for e in errs] == [
        (ErrorType.REQUIRED, "reportingController"),
        (ErrorType.INVALID, "reportingController"),
        (ErrorType.INVALID, "reportingController"),
        (ErrorType.REQUIRED, "reportingInstance"),
        (ErrorType.REQUIRED, "action"),
    ]


def test_legacy_length_limits() -> None:
    obj = core_event(
        eventTime="2026-01-02T03:04:05.000000Z",
        reportingComponent="kopf",
        reportingInstance="i" * 129,
        action="a",
        message="m" * 1025,
    )
    errs = events.CoreEventStrategy().validate_create(obj, CTX)
    assert [e.message() for e in errs] == [
        'reportingInstance: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters',
    ]


def test_kopf_style_event_is_accepted_after_normalising_times() -> None:
    obj = core_event(
        reportingComponent="kopf",
        reportingInstance="dev",
        action="Action?",
        firstTimestamp="2026-11-22T03:40:29.142139+00:00",
        eventTime="2026-11-22T03:40:29.142139+00:00",
    )
    strategy = events.CoreEventStrategy()
    strategy.prepare_for_create(obj, CTX)
    assert obj["firstTimestamp"] == "2026-11-22T03:40:29Z"
    assert obj["eventTime"] == "2026-11-22T03:40:29.142139Z"
    assert strategy.validate_create(obj, CTX) == []


def test_bad_timestamp_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as caught:
        events.CoreEventStrategy().prepare_for_create(core_event(lastTimestamp="yesterday"), CTX)
    assert caught.value.code == 400
    assert caught.value.message.startswith(
        'Event in version "v1" cannot be handled as a Event: parsing time "yesterday"'
    )


def test_strict_create_passes_for_a_recorder_event() -> None:
    assert events.EventStrategy().validate_create(new_event(), CTX) == []


def test_strict_create_rejects_deprecated_fields_and_bad_type() -> None:
    obj = new_event(
        type="Info",
        deprecatedCount=2,
        deprecatedSource={"component": "x"},
        deprecatedFirstTimestamp="2026-01-01T00:00:00Z",
        series={"count": 1},
    )
    errs = events.EventStrategy().validate_create(obj, CTX)
    assert [e.message() for e in errs] == [
        'series.count: Invalid value: "": should be at least 2',
        "series.lastObservedTime: Required value",
        'type: Invalid value: "": has invalid value: Info',
        'firstTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]


def test_strict_create_requires_event_time() -> None:
    obj = new_event()
    del obj["eventTime"]
    errs = events.EventStrategy().validate_create(obj, CTX)
    assert ("eventTime", ErrorType.REQUIRED) in [(e.field, e.type) for e in errs]


def test_strict_update_allows_series_and_refuses_other_changes() -> None:
    strategy = events.EventStrategy()
    old = new_event()
    bumped = new_event(series={"count": 2, "lastObservedTime": "2026-01-02T03:05:00.000000Z"})
    assert strategy.validate_update(bumped, old, CTX) == []
    changed = new_event(
        note="other", regarding={"kind": "ManagedCluster", "name": "c2", "namespace": "cluster1"}
    )
    errs = strategy.validate_update(changed, old, CTX)
    assert [e.message() for e in errs] == [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"ManagedCluster", Namespace:"cluster1", '
        'Name:"c2", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
        'message: Invalid value: "other": field is immutable',
    ]


def test_strict_update_renders_times_like_go() -> None:
    old = new_event()
    new = new_event(eventTime="2026-01-02T03:04:05.500000Z")
    errs = events.EventStrategy().validate_update(new, old, CTX)
    assert [e.message() for e in errs] == [
        "eventTime: Invalid value: 2026-01-02 03:04:05.5 +0000 UTC: field is immutable"
    ]


def test_core_update_is_lenient() -> None:
    old = core_event()
    assert (
        events.CoreEventStrategy().validate_update(core_event(message="changed", count=2), old, CTX)
        == []
    )


def test_strategies_accept_either_shape() -> None:
    as_core = events.to_core(new_event())
    assert events.EventStrategy().validate_create(as_core, CTX) == []
    assert events.CoreEventStrategy().validate_create(events.from_core(core_event()), CTX) == []


def test_core_field_selectors() -> None:
    fields = events.CoreEventStrategy().fields
    obj = core_event()
    assert fields["involvedObject.kind"](obj) == "Pod"
    assert fields["involvedObject.uid"](obj) == "u1"
    assert fields["involvedObject.fieldPath"](obj) == ""
    assert fields["source"](obj) == "kubelet"
    assert fields["type"](obj) == "Normal"
    assert fields["reason"](obj) == "Started"
    no_source = core_event(source={}, reportingComponent="ctrl")
    assert fields["source"](no_source) == "ctrl"
    assert fields["reportingComponent"](no_source) == "ctrl"


def test_events_group_field_selectors_read_stored_core_objects() -> None:
    fields = events.EventStrategy().fields
    stored = events.to_core(new_event())
    assert fields["regarding.name"](stored) == "cluster1"
    assert fields["reportingController"](stored) == "registration-controller"
    assert "source" not in fields and "involvedObject.kind" not in fields


def test_names_and_create_on_update() -> None:
    assert events.CoreEventStrategy().name_validator("Pod.Name:x") == []
    assert events.EventStrategy().name_validator("Pod.Name:x") != []
    assert events.CoreEventStrategy().allow_create_on_update is True
    assert events.EventStrategy().tracks_generation is False


def test_conversion_does_not_mutate_input() -> None:
    original = new_event()
    snapshot = copy.deepcopy(original)
    events.to_core(original)
    assert original == snapshot
