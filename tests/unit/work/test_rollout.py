"""The rollout handler against sdk-go's own cases (rollout_test.go), at its fake time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pyocm.work.rollout import (
    ClusterStatus,
    GroupKey,
    RolloutError,
    Status,
    decision_groups,
    parse_duration,
    rollout,
    rollout_size,
)

NOW = datetime(2022, 1, 1, tzinfo=UTC)
G0 = GroupKey("group1", 0)
G1 = GroupKey("", 1)
G2 = GroupKey("", 2)


def ago(seconds: int) -> datetime:
    return NOW - timedelta(seconds=seconds)


def names(statuses: list[ClusterStatus]) -> list[str]:
    return [s.cluster for s in statuses]


def test_all_without_workloads_rolls_out_every_cluster() -> None:
    groups = {G0: frozenset({"cluster1", "cluster2"}), G1: frozenset({"cluster3", "cluster4"})}
    result = rollout({"type": "All", "all": {"progressDeadline": "90s"}}, groups, [], now=NOW)
    assert result.to_rollout == [
        ClusterStatus("cluster1", Status.TO_APPLY, G0),
        ClusterStatus("cluster2", Status.TO_APPLY, G0),
        ClusterStatus("cluster3", Status.TO_APPLY, G1),
        ClusterStatus("cluster4", Status.TO_APPLY, G1),
    ]
    assert result.recheck_after is None


def test_all_times_out_what_passed_its_deadline() -> None:
    """sdk-go: "test rollout all with timeout 90s"."""
    groups = {
        G0: frozenset({"cluster1", "cluster2"}),
        G1: frozenset({"cluster3", "cluster4", "cluster5", "cluster6"}),
    }
    existing = [
        ClusterStatus("cluster1", Status.SUCCEEDED, G0, ago(60)),
        ClusterStatus("cluster2", Status.FAILED, G0, ago(120)),
        ClusterStatus("cluster3", Status.PROGRESSING, G1, ago(120)),
        ClusterStatus("cluster4", Status.FAILED, G1, ago(60)),
        ClusterStatus("cluster5", Status.PROGRESSING, G1, ago(60)),
    ]
    result = rollout({"type": "All", "all": {"progressDeadline": "90s"}}, groups, existing, now=NOW)
    in30 = NOW + timedelta(seconds=30)
    assert result.to_rollout == [
        ClusterStatus("cluster4", Status.FAILED, G1, ago(60), in30),
        ClusterStatus("cluster5", Status.PROGRESSING, G1, ago(60), in30),
        ClusterStatus("cluster6", Status.TO_APPLY, G1),
    ]
    assert result.timed_out == [
        ClusterStatus("cluster2", Status.TIME_OUT, G0, ago(120), ago(30)),
        ClusterStatus("cluster3", Status.TIME_OUT, G1, ago(120), ago(30)),
    ]
    assert result.recheck_after == 30
    assert not result.removed and not result.max_failure_breach


def test_progressive_takes_max_concurrency_clusters_in_name_order() -> None:
    groups = {
        G0: frozenset({"cluster1", "cluster2", "cluster3"}),
        G1: frozenset({"cluster4", "cluster5", "cluster6"}),
    }
    strategy = {
        "type": "Progressive",
        "progressive": {"maxConcurrency": 2, "progressDeadline": "90s"},
    }
    result = rollout(strategy, groups, [], now=NOW)
    assert result.to_rollout == [
        ClusterStatus("cluster1", Status.TO_APPLY, G0),
        ClusterStatus("cluster2", Status.TO_APPLY, G0),
    ]
    # One in progress and one waiting fill the window of 2; a succeeded one frees a slot.
    existing = [
        ClusterStatus("cluster1", Status.SUCCEEDED, G0, ago(10)),
        ClusterStatus("cluster2", Status.PROGRESSING, G0, ago(10)),
    ]
    assert names(rollout(strategy, groups, existing, now=NOW).to_rollout) == [
        "cluster2",
        "cluster3",
    ]


def test_progressive_soaks_a_success_for_min_success_time() -> None:
    groups = {G0: frozenset({"a", "b"})}
    strategy = {"type": "Progressive", "progressive": {"maxConcurrency": 1, "minSuccessTime": "1m"}}
    existing = [ClusterStatus("a", Status.SUCCEEDED, G0, ago(30))]
    result = rollout(strategy, groups, existing, now=NOW)
    assert names(result.to_rollout) == ["a"] and result.recheck_after == 30
    later = rollout(strategy, groups, existing, now=NOW + timedelta(seconds=31))
    assert names(later.to_rollout) == ["b"]


def test_progressive_stops_after_max_failures() -> None:
    groups = {G0: frozenset({"a", "b", "c", "d"})}
    strategy = {
        "type": "Progressive",
        "progressive": {"maxConcurrency": 1, "progressDeadline": "0s"},
    }
    existing = [ClusterStatus("a", Status.FAILED, G0, ago(5))]
    result = rollout(strategy, groups, existing, now=NOW)
    assert result.max_failure_breach and result.to_rollout == []
    assert names(result.timed_out) == ["a"]
    tolerant = {"type": "Progressive", "progressive": {"maxConcurrency": 1, "maxFailures": "50%"}}
    result = rollout(tolerant, groups, existing, now=NOW)
    assert names(result.to_rollout) == ["a"]  # still within its (infinite) deadline


def test_progressive_counts_a_cluster_past_its_deadline_as_a_failure() -> None:
    """A Progressing cluster past progressDeadline is TimeOut, and TimeOut is a failure:
    with maxFailures 0 nothing new rolls out and the breach is reported."""
    groups = {G0: frozenset({"a", "b"})}
    strategy = {
        "type": "Progressive",
        "progressive": {"maxConcurrency": 1, "progressDeadline": "1m"},
    }
    existing = [ClusterStatus("a", Status.PROGRESSING, G0, ago(600))]
    result = rollout(strategy, groups, existing, now=NOW)
    assert result.to_rollout == []
    assert result.timed_out == [ClusterStatus("a", Status.TIME_OUT, G0, ago(600), ago(540))]
    assert result.max_failure_breach and result.recheck_after is None


def test_progressive_timeouts_within_max_failures() -> None:
    """sdk-go: "test progressive rollout with timeout 0s, maxFailures 3"; then the same
    clusters under maxFailures 1, where the second timeout breaches it."""
    groups = {
        G0: frozenset({"cluster1", "cluster2", "cluster3"}),
        G1: frozenset({"cluster4", "cluster5", "cluster6"}),
    }
    existing = [
        ClusterStatus("cluster1", Status.SUCCEEDED, G0, ago(30)),
        ClusterStatus("cluster2", Status.PROGRESSING, G0, ago(30)),
        ClusterStatus("cluster3", Status.PROGRESSING, G0, ago(30)),
    ]
    timed_out = [
        ClusterStatus("cluster2", Status.TIME_OUT, G0, ago(30), ago(30)),
        ClusterStatus("cluster3", Status.TIME_OUT, G0, ago(30), ago(30)),
    ]
    spec = {"progressDeadline": "0s", "maxFailures": 3, "maxConcurrency": 2}
    result = rollout({"type": "Progressive", "progressive": spec}, groups, existing, now=NOW)
    assert result.to_rollout == [
        ClusterStatus("cluster4", Status.TO_APPLY, G1),
        ClusterStatus("cluster5", Status.TO_APPLY, G1),
    ]
    assert result.timed_out == timed_out and not result.max_failure_breach
    spec["maxFailures"] = 1
    result = rollout({"type": "Progressive", "progressive": spec}, groups, existing, now=NOW)
    assert result.to_rollout == [] and result.timed_out == timed_out
    assert result.max_failure_breach


def test_per_group_counts_a_cluster_past_its_deadline_as_a_failure() -> None:
    groups = {G0: frozenset({"a", "b"}), G1: frozenset({"c"})}
    strategy = {"type": "ProgressivePerGroup", "progressivePerGroup": {"progressDeadline": "1m"}}
    existing = [ClusterStatus("a", Status.PROGRESSING, G0, ago(600))]
    result = rollout(strategy, groups, existing, now=NOW)
    assert result.to_rollout == [ClusterStatus("b", Status.TO_APPLY, G0)]
    assert result.timed_out == [ClusterStatus("a", Status.TIME_OUT, G0, ago(600), ago(540))]
    assert result.max_failure_breach


def test_per_group_moves_on_when_a_timeout_is_within_max_failures() -> None:
    """sdk-go: "test progressivePerGroup rollout with timeout 90s and cluster removed
    after rollout start while the group timeout"."""
    groups = {
        G0: frozenset({"cluster1", "cluster3"}),
        G1: frozenset({"cluster4", "cluster5", "cluster6"}),
    }
    removed = ClusterStatus("cluster2", Status.FAILED, G0, ago(60))
    existing = [
        ClusterStatus("cluster1", Status.SUCCEEDED, G0, ago(60)),
        removed,
        ClusterStatus("cluster3", Status.PROGRESSING, G0, ago(120)),
    ]
    strategy = {
        "type": "ProgressivePerGroup",
        "progressivePerGroup": {"progressDeadline": "90s", "maxFailures": 2},
    }
    result = rollout(strategy, groups, existing, now=NOW)
    assert result.to_rollout == [
        ClusterStatus(c, Status.TO_APPLY, G1) for c in ("cluster4", "cluster5", "cluster6")
    ]
    assert result.timed_out == [ClusterStatus("cluster3", Status.TIME_OUT, G0, ago(120), ago(30))]
    assert result.removed == [removed] and not result.max_failure_breach


def test_mandatory_groups_go_first() -> None:
    groups = {
        G0: frozenset({"cluster1"}),
        G1: frozenset({"cluster2"}),
        G2: frozenset({"cluster3"}),
    }
    strategy = {
        "type": "Progressive",
        "progressive": {"mandatoryDecisionGroups": [{"groupIndex": 2}]},
    }
    assert names(rollout(strategy, groups, [], now=NOW).to_rollout) == ["cluster3"]
    done = [ClusterStatus("cluster3", Status.SUCCEEDED, G2, ago(1))]
    assert names(rollout(strategy, groups, done, now=NOW).to_rollout) == ["cluster1", "cluster2"]


def test_progressive_per_group_goes_one_group_at_a_time() -> None:
    groups = {
        G0: frozenset({"cluster1", "cluster2", "cluster3"}),
        G1: frozenset({"cluster4", "cluster5", "cluster6"}),
    }
    strategy = {"type": "ProgressivePerGroup", "progressivePerGroup": {"progressDeadline": "90s"}}
    result = rollout(strategy, groups, [], now=NOW)
    assert names(result.to_rollout) == ["cluster1", "cluster2", "cluster3"]
    done = [
        ClusterStatus(c, Status.SUCCEEDED, G0, ago(1)) for c in ("cluster1", "cluster2", "cluster3")
    ]
    assert names(rollout(strategy, groups, done, now=NOW).to_rollout) == [
        "cluster4",
        "cluster5",
        "cluster6",
    ]


def test_clusters_no_longer_decided_are_removed() -> None:
    groups = {G0: frozenset({"a"})}
    gone = ClusterStatus("b", Status.SUCCEEDED, G0, ago(1))
    result = rollout({"type": "All"}, groups, [gone], now=NOW)
    assert result.removed == [gone] and names(result.to_rollout) == ["a"]


def test_bad_strategies_say_what_is_wrong() -> None:
    with pytest.raises(RolloutError, match="incorrect rollout strategy type"):
        rollout({}, {}, [], now=NOW)
    with pytest.raises(RolloutError, match=r"maxConcurrency.*not a percentage"):
        rollout({"type": "Progressive", "progressive": {"maxConcurrency": "3"}}, {}, [], now=NOW)
    with pytest.raises(RolloutError, match="invalid timeout format"):
        rollout({"type": "All", "all": {"progressDeadline": "soon"}}, {}, [], now=NOW)


def test_sizes_and_durations() -> None:
    assert rollout_size("25%", 6, 6) == 2  # rounded up
    assert rollout_size(0, 6, 6) == 6 and rollout_size(9, 6, 6) == 6
    assert parse_duration("1h30m") == timedelta(minutes=90)
    assert parse_duration("1.5s") == timedelta(seconds=1.5)
    assert parse_duration("0") == timedelta(0)
    with pytest.raises(RolloutError):
        parse_duration("5")


def test_decision_groups_from_labels() -> None:
    def decision(index: str, name: str, clusters: list[str]) -> dict[str, object]:
        labels = {"cluster.open-cluster-management.io/decision-group-index": index}
        if name:
            labels["cluster.open-cluster-management.io/decision-group-name"] = name
        return {
            "metadata": {"name": f"d{index}", "labels": labels},
            "status": {"decisions": [{"clusterName": c, "reason": ""} for c in clusters]},
        }

    found = decision_groups([decision("0", "canary", ["a"]), decision("1", "", ["b", "c"])])  # type: ignore[list-item]
    assert found == {GroupKey("canary", 0): {"a"}, GroupKey("", 1): {"b", "c"}}
    with pytest.raises(RolloutError, match="incorrect group index"):
        decision_groups([decision("x", "", [])])  # type: ignore[list-item]


def test_older_apis_timeout_is_read_as_the_progress_deadline() -> None:
    from pyocm.work.rollout import progress_deadline

    assert progress_deadline({"timeout": "30m"}) == "30m"
    assert progress_deadline({"timeout": "30m", "progressDeadline": "None"}) == "30m"
    assert progress_deadline({"timeout": "30m", "progressDeadline": "5m"}) == "5m"
    assert progress_deadline({}) == ""
