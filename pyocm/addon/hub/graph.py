"""Which configs each MCA of an add-on should have, and which MCAs get them now
(upstream ``addonconfiguration/graph.go``). Pure: callers pass the objects and ``now``.

The graph has a node per install strategy placement (in the order of the CMA's
``status.installProgressions``) and one for the defaults. A node's desired configs are
the CMA's defaults, for a placement overridden per group-resource by its install
progression's config references (with the spec hashes recorded there). Each MCA hangs
under the last placement that selects its cluster, else under the defaults; its own
``spec.configs`` override its node's per group-resource. From each MCA's status the
node knows how its rollout stands (to apply, progressing, failed, succeeded), and the
placement's rollout strategy (:mod:`pyocm.work.rollout`) says which MCAs to update now;
the defaults node updates every MCA at once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyocm.addon.hub import refs
from pyocm.api import conditions, wellknown
from pyocm.kube import timefmt
from pyocm.runtime.controller import Waiting
from pyocm.work import rollout

Obj = dict[str, Any]
#: Group-resource -> the desired ``ConfigReference`` s (group, resource, desiredConfig).
ConfigMap = dict[refs.GR, list[Obj]]

REASON_PROGRESSING = "Progressing"
REASON_COMPLETED = "Completed"
REASON_FAILED = "Failed"
#: Longest wait before a rollout is looked at again (upstream's ``maxRequeueTime``).
MAX_REQUEUE = 600.0


class GraphError(Waiting):
    """A placement of the install strategy cannot be read or rolled out: it does not exist
    yet, or its rollout strategy or decisions cannot be understood. Either is the state of
    the objects (waited out, one line in the log), never a fault of this code."""


def _ref(gr: refs.GR, desired: Obj) -> Obj:
    return {"group": gr[0], "resource": gr[1], "desiredConfig": desired}


def find(configs: ConfigMap, gr: refs.GR, referent: refs.Referent) -> int:
    """The index of ``referent`` among the desired configs of ``gr``, or -1."""
    for i, ref in enumerate(configs.get(gr, [])):
        if refs.referent_of(ref.get("desiredConfig")) == referent:
            return i
    return -1


def _count(configs: ConfigMap) -> int:
    return sum(len(v) for v in configs.values())


def default_configs(cma: Mapping[str, Any]) -> ConfigMap:
    """``newGraph``'s defaults, with spec hashes from ``status.defaultConfigReferences``."""
    found: ConfigMap = {}
    for gr, referents in refs.defaults(cma.get("spec", {}).get("defaultConfigs") or []).items():
        found[gr] = [_ref(gr, refs.spec_hash(r)) for r in referents]
    for recorded in cma.get("status", {}).get("defaultConfigReferences") or []:
        desired = recorded.get("desiredConfig")
        if desired is None:
            continue
        gr = refs.gr_of(recorded)
        i = find(found, gr, refs.referent_of(desired))
        if i >= 0:
            found[gr][i]["desiredConfig"]["specHash"] = desired.get("specHash") or ""
    return found


def override_by_install(configs: ConfigMap, install_refs: Sequence[Mapping[str, Any]]) -> ConfigMap:
    """``overrideConfigMapByInstallConfigRef``: an install progression's config
    references (hashes included) replace the desired ones per group-resource."""
    found = copy.deepcopy(configs)
    overwritten: set[refs.GR] = set()
    for ref in install_refs:
        desired = ref.get("desiredConfig")
        if desired is None:
            continue
        gr = refs.gr_of(ref)
        if gr not in overwritten:
            found[gr] = []
            overwritten.add(gr)
        if find(found, gr, refs.referent_of(desired)) < 0:
            found[gr].append(_ref(gr, refs.normalised_hash(desired) or {}))
    return found


def override_by_addon(configs: ConfigMap, mca: Mapping[str, Any]) -> ConfigMap:
    """An MCA's ``spec.configs`` replace its node's per group-resource; their hashes
    come from the MCA's status (the config-hash controller computes them)."""
    spec_configs = mca.get("spec", {}).get("configs") or []
    if not spec_configs:
        return configs
    found = copy.deepcopy(configs)
    overwritten: set[refs.GR] = set()
    for config in spec_configs:
        gr, referent = refs.gr_of(config), refs.referent_of(config)
        if gr not in overwritten:
            found[gr] = []
            overwritten.add(gr)
        if find(found, gr, referent) < 0:
            found[gr].append(_ref(gr, refs.spec_hash(referent)))
    status_refs = mca.get("status", {}).get("configReferences") or []
    for config in spec_configs:
        gr, referent = refs.gr_of(config), refs.referent_of(config)
        for recorded in status_refs:
            desired = recorded.get("desiredConfig")
            if desired is None or refs.gr_of(recorded) != gr:
                continue
            if refs.referent_of(desired) != referent:
                continue
            i = find(found, gr, referent)
            if i >= 0:
                found[gr][i]["desiredConfig"]["specHash"] = desired.get("specHash") or ""
    return found


def _time(condition: Mapping[str, Any] | None) -> datetime | None:
    try:
        return timefmt.parse_time(str((condition or {}).get("lastTransitionTime", "")))
    except ValueError:
        return None


def rollout_status(mca: Mapping[str, Any], desired: ConfigMap) -> rollout.ClusterStatus:
    """``setRolloutStatus``: ToApply until the status names exactly the desired configs
    with their hashes; then Progressing or Failed (from the Progressing condition's
    reason) until each was last applied as desired; then Succeeded."""
    cluster = mca["metadata"].get("namespace", "")
    status = mca.get("status", {})
    actual = status.get("configReferences") or []
    if len(actual) != _count(desired):
        return rollout.ClusterStatus(cluster, rollout.Status.TO_APPLY)
    progressing = conditions.find(status.get("conditions"), wellknown.ADDON_PROGRESSING) or {}
    reason = progressing.get("reason", "")
    for ref in actual:
        gr, wanted = refs.gr_of(ref), refs.normalised_hash(ref.get("desiredConfig"))
        i = find(desired, gr, refs.referent_of(wanted))
        if i < 0 or refs.normalised_hash(desired[gr][i]["desiredConfig"]) != wanted:
            return rollout.ClusterStatus(cluster, rollout.Status.TO_APPLY)
        if refs.normalised_hash(ref.get("lastAppliedConfig")) != wanted:
            if reason == REASON_FAILED:
                return rollout.ClusterStatus(
                    cluster, rollout.Status.FAILED, last_transition=_time(progressing)
                )
            since = _time(progressing) if reason == REASON_PROGRESSING else None
            return rollout.ClusterStatus(cluster, rollout.Status.PROGRESSING, last_transition=since)
    since = _time(progressing) if reason == REASON_COMPLETED else None
    return rollout.ClusterStatus(cluster, rollout.Status.SUCCEEDED, last_transition=since)


@dataclass
class AddonNode:
    mca: Obj
    desired: ConfigMap
    status: rollout.ClusterStatus

    @property
    def cluster(self) -> str:
        return str(self.mca["metadata"].get("namespace", ""))


@dataclass
class Placement:
    """What a placement node needs read from the hub: the Placement and its decisions'
    groups (:func:`pyocm.work.rollout.decision_groups`)."""

    placement: Mapping[str, Any]
    groups: rollout.ClusterGroups


@dataclass
class StrategyNode:
    ref: tuple[str, str] | None  # (namespace, name); None for the defaults
    desired: ConfigMap
    strategy: Mapping[str, Any] = field(default_factory=dict)
    groups: rollout.ClusterGroups = field(default_factory=dict)
    children: dict[str, AddonNode] = field(default_factory=dict)
    clusters: frozenset[str] = frozenset()
    configured: set[str] = field(default_factory=set)
    result: rollout.RolloutResult = field(default_factory=rollout.RolloutResult)

    def add(self, mca: Obj) -> None:
        desired = override_by_addon(self.desired, mca)
        node = AddonNode(mca, desired, rollout_status(mca, desired))
        self.children[node.cluster] = node

    def generate(self, now: datetime) -> None:
        if self.ref is None:
            self.result = rollout.RolloutResult(
                to_rollout=[
                    c.status
                    for c in self.children.values()
                    if c.status.status != rollout.Status.SUCCEEDED
                ]
            )
            return
        existing = sorted((c.status for c in self.children.values()), key=lambda s: s.cluster)
        try:
            self.result = rollout.rollout(self.strategy, self.groups, existing, now=now)
        except rollout.RolloutError as err:
            raise GraphError(str(err)) from err

    def to_update(self) -> list[AddonNode]:
        clusters = {s.cluster for s in self.result.to_rollout if s.cluster in self.children}
        return [self.children[c] for c in sorted(clusters)]

    def with_status(self, status: rollout.Status) -> list[AddonNode]:
        return [c for c in self.children.values() if c.status.status == status]

    def _counted(self, status: rollout.Status) -> int:
        rolling = {s.cluster for s in self.result.to_rollout}
        return sum(
            1
            for c in self.with_status(status)
            if c.cluster not in rolling
            and desired_equal(c.desired, self.desired, c.mca.get("spec", {}).get("configs") or [])
        )

    def counts(self) -> tuple[int, int, int, int]:
        """Upgrading, succeeded, failed and timed-out MCAs, as upstream counts them."""
        rolling = {s.cluster for s in self.result.to_rollout}
        upgrading = sum(1 for c in self.children if c in rolling)
        return (
            upgrading,
            self._counted(rollout.Status.SUCCEEDED),
            self._counted(rollout.Status.FAILED),
            len(self.result.timed_out),
        )


def desired_equal(
    addon: ConfigMap, strategy: ConfigMap, overrides: Sequence[Mapping[str, Any]]
) -> bool:
    """``desiredConfigsEqual``: whether an MCA inherits its node's configs, ignoring the
    group-resources its own spec overrides (only their count per group-resource counts)."""
    override_counts: dict[refs.GR, int] = {}
    for config in overrides:
        gr = refs.gr_of(config)
        override_counts[gr] = override_counts.get(gr, 0) + 1
    expected: dict[refs.GR, list[Obj] | int] = {gr: list(v) for gr, v in strategy.items()}
    expected.update(override_counts)
    if len(addon) != len(expected):
        return False
    for gr, wanted in expected.items():
        found = addon.get(gr)
        if found is None:
            return False
        if isinstance(wanted, int):
            if len(found) != wanted:
                return False
            continue
        if len(found) != len(wanted) or any(
            _norm(a) != _norm(b) for a, b in zip(found, wanted, strict=True)
        ):
            return False
    return True


def _norm(ref: Mapping[str, Any]) -> tuple[Any, ...]:
    return (refs.gr_of(ref), refs.normalised_hash(ref.get("desiredConfig")))


@dataclass
class Graph:
    defaults: StrategyNode
    nodes: list[StrategyNode] = field(default_factory=list)

    def add_placement(
        self, strategy: Mapping[str, Any], progression: Mapping[str, Any], found: Placement
    ) -> None:
        """``addPlacementNode``: the MCAs of the clusters the placement decided move
        under it, from the defaults or an earlier placement."""
        clusters = frozenset().union(*found.groups.values()) if found.groups else frozenset()
        node = StrategyNode(
            ref=(progression["namespace"], progression["name"]),
            desired=self.defaults.desired,
            strategy=_with_concurrency(strategy.get("rolloutStrategy") or {}, found.placement),
            groups=found.groups,
            clusters=clusters,
            configured=set(clusters),
        )
        install_refs = progression.get("configReferences") or []
        if install_refs:
            node.desired = override_by_install(node.desired, install_refs)
        for cluster in clusters:
            moved = self.defaults.children.pop(cluster, None)
            if moved is not None:
                node.add(moved.mca)
            for earlier in self.nodes:
                moved = earlier.children.pop(cluster, None)
                if moved is not None:
                    node.add(moved.mca)
                    earlier.configured.discard(cluster)
        self.nodes.append(node)

    def generate(self, now: datetime) -> None:
        for node in [*self.nodes, self.defaults]:
            node.generate(now)

    def all_nodes(self) -> list[StrategyNode]:
        return [*self.nodes, self.defaults]

    def requeue_after(self) -> float | None:
        waits = [n.result.recheck_after for n in self.nodes if n.result.recheck_after is not None]
        found = min(waits, default=MAX_REQUEUE)
        return found if found < MAX_REQUEUE else None


def _with_concurrency(strategy: Mapping[str, Any], placement: Mapping[str, Any]) -> Obj:
    """A Progressive strategy without maxConcurrency rolls out one decision group's
    size at a time (the placement's ``clustersPerDecisionGroup``), as upstream sets it."""
    found = copy.deepcopy(dict(strategy))
    if found.get("type") != "Progressive":
        return found
    progressive = found.setdefault("progressive", {})
    if progressive.get("maxConcurrency") in (None, 0, ""):
        per_group = (
            placement.get("spec", {})
            .get("decisionStrategy", {})
            .get("groupStrategy", {})
            .get("clustersPerDecisionGroup")
        )
        if per_group is not None:
            progressive["maxConcurrency"] = per_group
    return found


def build(
    cma: Mapping[str, Any],
    mcas: Sequence[Obj],
    placements: Mapping[tuple[str, str], Placement | None],
) -> Graph:
    """``buildConfigurationGraph``: ``placements`` maps each strategy placement
    ``(namespace, name)`` to what was read of it (None: it does not exist, which fails
    the pass as upstream's lister error does)."""
    graph = Graph(StrategyNode(ref=None, desired=default_configs(cma)))
    for mca in mcas:
        graph.defaults.add(mca)
    spec = cma.get("spec", {})
    kind = spec.get("installStrategy", {}).get("type", "")
    if kind in ("", "Manual"):
        return graph
    strategies = spec.get("installStrategy", {}).get("placements") or []
    errors: list[str] = []
    for progression in cma.get("status", {}).get("installProgressions") or []:
        ref = (progression.get("namespace", ""), progression.get("name", ""))
        for strategy in strategies:
            if (strategy.get("namespace", ""), strategy.get("name", "")) != ref:
                continue
            found = placements.get(ref)
            if found is None:
                errors.append(f'placement.cluster.open-cluster-management.io "{ref[1]}" not found')
                continue
            graph.add_placement(strategy, progression, found)
    if errors:
        raise GraphError("; ".join(errors))
    return graph
