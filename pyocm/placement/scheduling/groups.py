"""Decision groups and PlacementDecision pages, as upstream's ``scheduling_controller.go``.

Groups: ``decisionStrategy.groupStrategy.clustersPerDecisionGroup`` gives the group
length (an int, or ``"N%"`` of the selected clusters rounded up; 0, negative or more than
the selected means all of them). Each ``decisionGroups[]`` entry takes the selected
clusters its label and claim selectors match that no earlier entry took, sorted by name
and cut into groups of that length under its ``groupName``; the rest follow likewise
under the name "". With nothing selected there is one empty group.

Pages: each group is written as PlacementDecisions of at most 100 decisions, named
``<placement>-decision-<n>`` with n counting from 1 across all groups, labelled with the
placement, the group's name and index; a group without clusters still gets one page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1beta1 import (
    Placement,
    PlacementDecisionStatusDecision,
    PlacementStatusDecisionGroup,
)
from pyocm.api.models.cluster_v1beta1 import (
    PlacementSpecDecisionStrategyGroupStrategyDecisionGroupGroupClusterSelector as GroupSelector,
)
from pyocm.kube import selectors
from pyocm.placement.scheduling.predicates import claims_of
from pyocm.placement.scheduling.prioritize import Misconfigured

PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
DECISION_GROUP_NAME_LABEL = "cluster.open-cluster-management.io/decision-group-name"
DECISION_GROUP_INDEX_LABEL = "cluster.open-cluster-management.io/decision-group-index"
MAX_DECISIONS_PER_PAGE = 100


@dataclass(frozen=True)
class DecisionGroup:
    """One decision group: its name ("" for the rest) and its clusters, sorted by name.
    Its index is its position in the list :func:`decision_groups` returns."""

    name: str
    clusters: tuple[str, ...]


@dataclass(frozen=True)
class DecisionPage:
    """One PlacementDecision to write: its name, labels and ``status.decisions`` clusters."""

    name: str
    group_index: int
    group_name: str
    clusters: tuple[str, ...]
    placement: str

    @property
    def labels(self) -> dict[str, str]:
        return {
            PLACEMENT_LABEL: self.placement,
            DECISION_GROUP_NAME_LABEL: self.group_name,
            DECISION_GROUP_INDEX_LABEL: str(self.group_index),
        }

    def decisions(self) -> list[PlacementDecisionStatusDecision]:
        """``status.decisions`` as upstream writes it (the reason is always empty)."""
        return [{"clusterName": name, "reason": ""} for name in self.clusters]


@dataclass(frozen=True)
class Grouping:
    """The decision groups, or why they could not all be made.

    When ``misconfigured`` is set, ``groups`` holds what upstream had made by then: none
    for a bad ``clustersPerDecisionGroup``, the earlier entries' for a bad selector. The
    controller then writes just those pages, as upstream does.
    """

    groups: list[DecisionGroup]
    misconfigured: Misconfigured | None = None


def decision_groups(placement: Placement, selected: Sequence[ManagedCluster]) -> Grouping:
    """Divide the selected clusters into decision groups (see the module doc)."""
    strategy = placement["spec"].get("decisionStrategy", {}).get("groupStrategy", {})
    try:
        length = group_length(strategy.get("clustersPerDecisionGroup"), len(selected))
    except Misconfigured as problem:
        return Grouping([], problem)
    groups: list[DecisionGroup] = []
    unassigned = {c["metadata"]["name"] for c in selected}
    for entry in strategy.get("decisionGroups", []):
        try:
            matches = _group_matcher(entry.get("groupClusterSelector", {}))
        except selectors.SelectorError as error:
            return Grouping(groups, Misconfigured("", str(error)))
        taken = [
            name
            for cluster in selected
            if (name := cluster["metadata"]["name"]) in unassigned and matches(cluster)
        ]
        unassigned.difference_update(taken)
        groups.extend(_divide(entry.get("groupName", ""), taken, length))
    groups.extend(_divide("", unassigned, length))
    return Grouping(groups or [DecisionGroup("", ())])


_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])"
)


def group_length(value: int | str | None, total: int) -> int:
    """``clustersPerDecisionGroup`` as a group length over ``total`` selected clusters.

    Raises :class:`Misconfigured` (plugin "") with upstream's message for a string that is
    not a percentage; the number before ``%`` is read as Go's ``ParseFloat`` reads it.
    """
    length = total
    if isinstance(value, int):
        length = value
    elif isinstance(value, str):
        number = value[:-1] if value.endswith("%") else None
        if number is None or not _NUMBER.fullmatch(number):
            raise Misconfigured("", f"{value} invalid type: string is not a percentage")
        ratio = float.fromhex(number) if "x" in number.lower() else float(number)
        if math.isinf(ratio) and "inf" not in number.lower():
            # ParseFloat refuses a number out of float64's range (ErrRange).
            raise Misconfigured("", f"{value} invalid type: string is not a percentage")
        scaled = ratio / 100 * total
        # Go's int() of a NaN or infinity is the most negative int64 on amd64: "all".
        length = math.ceil(scaled) if math.isfinite(scaled) else 0
    if length <= 0 or length > total:
        return total
    return length


def _group_matcher(selector: GroupSelector) -> _Both:
    labels = selectors.from_label_selector(selector.get("labelSelector", {}))
    expressions = selector.get("claimSelector", {}).get("matchExpressions", [])
    claims = selectors.from_label_selector({"matchExpressions": expressions})
    return _Both(labels, claims)


@dataclass(frozen=True)
class _Both:
    """A group's label selector AND its claim selector (over ``status.clusterClaims``)."""

    labels: selectors.LabelSelector
    claims: selectors.LabelSelector

    def __call__(self, cluster: ManagedCluster) -> bool:
        if not self.labels.matches(cluster["metadata"].get("labels", {})):
            return False
        if self.claims.empty:
            return True
        return self.claims.matches(claims_of(cluster))


def _divide(name: str, clusters: Sequence[str] | set[str], length: int) -> list[DecisionGroup]:
    ordered = sorted(clusters)
    if not ordered:
        return []  # the length is 0 only when nothing is selected
    return [
        DecisionGroup(name, tuple(ordered[i : i + length])) for i in range(0, len(ordered), length)
    ]


def decision_pages(placement_name: str, groups: Sequence[DecisionGroup]) -> list[DecisionPage]:
    """The PlacementDecisions for the groups, in order: at most 100 decisions each, one
    (maybe empty) page per group at least, numbered from 1 across all groups."""
    pages: list[DecisionPage] = []
    for index, group in enumerate(groups):
        chunks = [
            group.clusters[i : i + MAX_DECISIONS_PER_PAGE]
            for i in range(0, len(group.clusters), MAX_DECISIONS_PER_PAGE)
        ] or [()]
        for chunk in chunks:
            name = f"{placement_name}-decision-{len(pages) + 1}"
            pages.append(DecisionPage(name, index, group.name, chunk, placement_name))
    return pages


def group_statuses(
    groups: Sequence[DecisionGroup], pages: Sequence[DecisionPage]
) -> list[PlacementStatusDecisionGroup]:
    """The placement's ``status.decisionGroups`` for the groups and their pages."""
    names: list[list[str]] = [[] for _ in groups]
    for page in pages:
        names[page.group_index].append(page.name)
    return [
        {
            "decisionGroupIndex": index,
            "decisionGroupName": group.name,
            "decisions": names[index],
            "clusterCount": len(group.clusters),
        }
        for index, group in enumerate(groups)
    ]
