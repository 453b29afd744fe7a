"""Which clusters a rollout strategy updates now (sdk-go's ``RolloutHandler``).

Generic over what is rolled out: callers say, per cluster that already has the workload,
how its rollout stands (:class:`ClusterStatus`), and pass the decision groups the
placement chose (:func:`decision_groups` reads them from PlacementDecisions). The
ManifestWorkReplicaSet controller uses it with works' conditions; add-on install
strategies will with add-on configs (the add-on layer sits above work, as upstream's
addon-manager deploys through ManifestWorks; cluster sets, work's sibling layer, may not
import it). Pure: the caller passes ``now``, nothing is read.

Upstream's quirks are kept, as clients see their effect: clusters roll out in name
order; ``maxConcurrency``/``maxFailures`` of 0, absent or above the total fall back to
their defaults (all clusters, no failures); "None" or "" as ``progressDeadline`` waits
forever; groups are walked by index 0..n-1 where n is the number of distinct indexes.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from pyocm.api import rollout as api
from pyocm.api import wellknown
from pyocm.api.models.cluster_v1beta1 import PlacementDecision


class RolloutError(ValueError):
    """The strategy (or a decision's group label) cannot be understood."""


class Status(enum.IntEnum):
    TO_APPLY = 0
    PROGRESSING = 1
    SUCCEEDED = 2
    FAILED = 3
    TIME_OUT = 4
    SKIP = 5


@dataclass(frozen=True)
class GroupKey:
    """A decision group: its name (may be empty) and index."""

    name: str = ""
    index: int = 0


NO_GROUP = GroupKey()


#: Decision group -> the clusters in it.
ClusterGroups = Mapping[GroupKey, frozenset[str]]


@dataclass(frozen=True)
class ClusterStatus:
    """How the rollout stands on one cluster. ``last_transition``: when the status last
    changed (timeouts and soak time count from it); ``recheck``: set by the handler."""

    cluster: str
    status: Status
    group: GroupKey = NO_GROUP
    last_transition: datetime | None = None
    recheck: datetime | None = None


@dataclass
class RolloutResult:
    to_rollout: list[ClusterStatus] = field(default_factory=list)
    timed_out: list[ClusterStatus] = field(default_factory=list)
    removed: list[ClusterStatus] = field(default_factory=list)
    max_failure_breach: bool = False
    #: Seconds until a status the result depends on may change on its own (a soak
    #: time ends, a deadline passes); None: nothing to wait for.
    recheck_after: float | None = None


def decision_groups(decisions: Iterable[PlacementDecision]) -> dict[GroupKey, frozenset[str]]:
    """The clusters of each decision group, from a placement's PlacementDecisions (their
    group labels, as the placement controller writes them)."""
    groups: dict[GroupKey, set[str]] = {}
    for decision in decisions:
        labels = decision["metadata"].get("labels") or {}
        index = labels.get(wellknown.DECISION_GROUP_INDEX_LABEL, "")
        if not re.fullmatch(r"[+-]?[0-9]+", index):
            raise RolloutError(f'incorrect group index: invalid syntax "{index}"')
        key = GroupKey(labels.get(wellknown.DECISION_GROUP_NAME_LABEL, ""), int(index))
        found = groups.setdefault(key, set())
        found.update(d["clusterName"] for d in decision.get("status", {}).get("decisions") or [])
    return {key: frozenset(clusters) for key, clusters in groups.items()}


def rollout(
    strategy: Mapping[str, Any],
    groups: ClusterGroups,
    existing: Sequence[ClusterStatus],
    *,
    now: datetime,
) -> RolloutResult:
    """The clusters to roll out now under ``strategy`` (a ``RolloutStrategy`` object),
    those timed out, and those in ``existing`` no longer in ``groups``."""
    kind = strategy.get("type")
    if kind == api.ALL:
        return _all(strategy.get("all") or {}, groups, existing, now)
    if kind == api.PROGRESSIVE:
        return _progressive(strategy.get("progressive") or {}, groups, existing, now)
    if kind == api.PROGRESSIVE_PER_GROUP:
        return _per_group(strategy.get("progressivePerGroup") or {}, groups, existing, now)
    raise RolloutError(f"incorrect rollout strategy type {kind or ''}")


def _all(
    spec: Mapping[str, Any], groups: ClusterGroups, existing: Sequence[ClusterStatus], now: datetime
) -> RolloutResult:
    deadline = parse_deadline(progress_deadline(spec))
    everything = _besides(groups, ())
    current, removed = _split_removed(everything, existing)
    size = len(_clusters(everything))
    result = _per_cluster(everything, size, size, timedelta(0), deadline, current, now)
    result.removed = removed
    return result


def _progressive(
    spec: Mapping[str, Any], groups: ClusterGroups, existing: Sequence[ClusterStatus], now: datetime
) -> RolloutResult:
    soak = parse_duration(spec.get("minSuccessTime", "0"))
    deadline = parse_deadline(progress_deadline(spec))
    everything = _besides(groups, ())
    current, removed = _split_removed(everything, existing)
    try:
        max_failures = rollout_size(spec.get("maxFailures", 0), len(_clusters(everything)), 0)
    except RolloutError as err:
        raise RolloutError(f"failed to parse the provided maxFailures: {err}") from err
    mandatory = _mandatory(spec)
    first = _only(groups, mandatory)
    if first:
        result = _per_group_walk(first, 0, soak, deadline, current, now)
        if result.to_rollout or result.timed_out:
            result.removed = removed
            return result
    rest = _besides(groups, mandatory)
    total = len(_clusters(rest))
    try:
        size = rollout_size(spec.get("maxConcurrency", 0), total, total)
    except RolloutError as err:
        raise RolloutError(f"failed to parse the provided maxConcurrency: {err}") from err
    result = _per_cluster(rest, size, max_failures, soak, deadline, current, now)
    result.removed = removed
    return result


def _per_group(
    spec: Mapping[str, Any], groups: ClusterGroups, existing: Sequence[ClusterStatus], now: datetime
) -> RolloutResult:
    soak = parse_duration(spec.get("minSuccessTime", "0"))
    deadline = parse_deadline(progress_deadline(spec))
    max_failures = spec.get("maxFailures", 0)
    try:
        rollout_size(max_failures, 0, 0)  # its format only: sized per group below
    except RolloutError as err:
        raise RolloutError(f"failed to parse the provided maxFailures: {err}") from err
    current, removed = _split_removed(_besides(groups, ()), existing)
    mandatory = _mandatory(spec)
    first = _only(groups, mandatory)
    if first:
        result = _per_group_walk(first, 0, soak, deadline, current, now)
        if result.to_rollout or result.timed_out:
            result.removed = removed
            return result
    result = _per_group_walk(
        _besides(groups, mandatory), max_failures, soak, deadline, current, now
    )
    result.removed = removed
    return result


def _per_cluster(
    groups: ClusterGroups,
    size: int,
    max_failures: int,
    soak: timedelta,
    deadline: timedelta | None,
    existing: Sequence[ClusterStatus],
    now: datetime,
) -> RolloutResult:
    """Up to ``size`` clusters in name order: those under way first, then new ones."""
    result = RolloutResult()
    seen: set[str] = set()
    failures, breach = 0, False
    for status in sorted(existing, key=lambda s: s.cluster):
        if not status.cluster:
            continue
        seen.add(status.cluster)
        if not breach or status.status != Status.TO_APPLY:
            # A cluster past its deadline counts as a failure from now on, as upstream's
            # determineRolloutStatus turns the status it is given into TimeOut.
            status = _judge(status, soak, deadline, result, now)
        if status.status in (Status.TIME_OUT, Status.FAILED):
            failures += 1
            breach = failures > max_failures
        if len(result.to_rollout) >= size:
            return _finish(result, now, breach=breach)
    if breach:
        return _finish(result, now, breach=True)
    group_of = {cluster: key for key, clusters in groups.items() for cluster in clusters}
    for cluster in sorted(_clusters(groups) - seen):
        result.to_rollout.append(ClusterStatus(cluster, Status.TO_APPLY, group_of[cluster]))
        if len(result.to_rollout) >= size:
            break
    return _finish(result, now, breach=False)


def _per_group_walk(
    groups: ClusterGroups,
    max_failures: int | str,
    soak: timedelta,
    deadline: timedelta | None,
    existing: Sequence[ClusterStatus],
    now: datetime,
) -> RolloutResult:
    """Group by group in index order: stop at the first group with clusters to roll out
    that have not failed, or whose failures exceed its budget."""
    result = RolloutResult()
    under_way: dict[str, Status] = {}
    for status in existing:
        if status.cluster and status.status != Status.TO_APPLY:
            under_way[status.cluster] = _judge(status, soak, deadline, result, now).status
    total_failures, breach = 0, False
    for key in sorted(groups, key=lambda k: k.index):
        clusters = groups[key]
        budget = rollout_size(max_failures, len(clusters), 0)
        failures = 0
        for cluster in sorted(clusters):
            if cluster in under_way:
                if under_way[cluster] in (Status.TIME_OUT, Status.FAILED):
                    failures += 1
                    breach = failures > budget
                continue
            result.to_rollout.append(ClusterStatus(cluster, Status.TO_APPLY, key))
        total_failures += failures
        if len(result.to_rollout) - total_failures > 0 or breach:
            return _finish(result, now, breach=breach)
    return _finish(result, now, breach=breach)


def _judge(
    status: ClusterStatus,
    soak: timedelta,
    deadline: timedelta | None,
    result: RolloutResult,
    now: datetime,
) -> ClusterStatus:
    """Put one cluster under way into the result: still rolling out (soaking after
    success, or progressing within its deadline), timed out, or done. Returns the status
    as judged: TIME_OUT for a cluster past its deadline, which callers count as a failure."""
    judged = status
    if status.status == Status.TO_APPLY:
        result.to_rollout.append(status)
    elif status.status == Status.SUCCEEDED:
        soaked = (status.last_transition or now) + soak
        if now < soaked:
            judged = replace(status, recheck=soaked)
            result.to_rollout.append(judged)
    elif status.status not in (Status.TIME_OUT, Status.SKIP):  # progressing, failed
        due = None if deadline is None else (status.last_transition or now) + deadline
        if due is None or now < due:
            judged = replace(status, recheck=due)
            result.to_rollout.append(judged)
        else:
            judged = replace(status, status=Status.TIME_OUT, recheck=due)
            result.timed_out.append(judged)
    return judged


def _finish(result: RolloutResult, now: datetime, *, breach: bool) -> RolloutResult:
    result.max_failure_breach = breach
    waits = [
        (s.recheck - now).total_seconds()
        for s in result.to_rollout
        if s.recheck is not None and s.recheck > now
    ]
    result.recheck_after = min(waits) if waits else None
    return result


def _split_removed(
    groups: ClusterGroups, existing: Sequence[ClusterStatus]
) -> tuple[list[ClusterStatus], list[ClusterStatus]]:
    clusters = _clusters(groups)
    current = [s for s in existing if s.cluster in clusters]
    return current, [s for s in existing if s.cluster not in clusters]


def _clusters(groups: ClusterGroups) -> frozenset[str]:
    return frozenset().union(*groups.values())


def _mandatory(spec: Mapping[str, Any]) -> list[GroupKey]:
    """The mandatory groups as given: by name when named, else by index."""
    return [
        GroupKey(name=g["groupName"])
        if g.get("groupName")
        else GroupKey(index=g.get("groupIndex", 0))
        for g in spec.get("mandatoryDecisionGroups") or []
    ]


def _resolve(groups: ClusterGroups, wanted: Sequence[GroupKey]) -> list[GroupKey]:
    """Wanted keys completed from the groups there are: a name means every index of it."""
    by_index = {key.index: key.name for key in groups}
    found: list[GroupKey] = []
    for want in wanted:
        if want.name:
            found += sorted((k for k in groups if k.name == want.name), key=lambda k: k.index)
        elif want.index in by_index:
            found.append(GroupKey(by_index[want.index], want.index))
    return found


def _only(groups: ClusterGroups, wanted: Sequence[GroupKey]) -> dict[GroupKey, frozenset[str]]:
    return {k: groups[k] for k in _resolve(groups, wanted) if k in groups}


def _besides(groups: ClusterGroups, wanted: Sequence[GroupKey]) -> dict[GroupKey, frozenset[str]]:
    excluded = set(_resolve(groups, wanted))
    by_index = {key.index: key.name for key in groups}
    # Indexes 0..n-1, n the number of distinct indexes, as upstream's tracker walks them.
    keys = (GroupKey(by_index.get(i, ""), i) for i in range(len(by_index)))
    return {k: groups[k] for k in keys if k not in excluded and k in groups}


def rollout_size(threshold: int | str, total: int, default: int) -> int:
    """A count or a percentage of ``total`` (rounded up); ``default`` when it comes out
    at 0 or less, or above ``total``."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, str)):
        raise RolloutError(f"invalid maximum threshold type {type(threshold).__name__}")
    if isinstance(threshold, str):
        if not threshold.endswith("%"):
            raise RolloutError(
                f"'{threshold}' is an invalid maximum threshold value: string is not a percentage"
            )
        try:
            percent = float(threshold[:-1])
        except ValueError:
            raise RolloutError(f"'{threshold}' is an invalid percentage") from None
        size = math.ceil(percent / 100 * total)
    else:
        size = threshold
    return default if size <= 0 or size > total else size


_DEADLINE_RE = re.compile(r"^(([0-9])+[h|m|s])|None$")
_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART_RE = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def progress_deadline(spec: Mapping[str, Any]) -> str:
    """``progressDeadline``, or when it is unset (or the default "None") the ``timeout``
    of older OCM APIs (``RolloutStrategy.*.timeout``, renamed ``progressDeadline``), which
    pyocm's schema still takes so YAML written for them applies unchanged."""
    deadline = str(spec.get("progressDeadline") or "")
    if deadline in ("", "None") and spec.get("timeout"):
        return str(spec["timeout"])
    return deadline


def parse_deadline(text: str) -> timedelta | None:
    """A ``progressDeadline``: None (wait forever) for "None" or ""."""
    if text in ("None", ""):
        return None
    if not _DEADLINE_RE.search(text):
        raise RolloutError("invalid timeout format")
    return parse_duration(text)


def parse_duration(text: str) -> timedelta:
    """A Go duration (``1h30m``, ``90s``, ``0``), as ``time.ParseDuration`` reads it."""
    body = text.lstrip("+-")
    sign = -1 if text.startswith("-") else 1
    if body == "0":
        return timedelta(0)
    seconds, pos = 0.0, 0
    while pos < len(body):
        part = _PART_RE.match(body, pos)
        if part is None or part.group(1) in ("", "."):
            break
        seconds += float(part.group(1)) * _UNITS[part.group(2)]
        pos = part.end()
    if not body or pos != len(body):
        raise RolloutError(f'time: invalid duration "{text}"')
    return timedelta(seconds=sign * seconds)


__all__ = [
    "ClusterGroups",
    "ClusterStatus",
    "GroupKey",
    "RolloutError",
    "RolloutResult",
    "Status",
    "decision_groups",
    "parse_deadline",
    "parse_duration",
    "rollout",
    "rollout_size",
]
