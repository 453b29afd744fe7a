"""How many PlacementDecision entries name each cluster, kept current from the
PlacementDecision informer, for the Balance prioritizer.

Upstream's Balance lists every PlacementDecision on each scheduling pass and counts, per
cluster, the decisions of all placements but the one being scheduled, and the largest such
count. Here a handler keeps the fleet-wide counts as decisions change, and a pass subtracts
the placement's own (``prioritize.counts_elsewhere``): no list of every PlacementDecision
per pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]


class DecisionUsage:
    """Per-cluster counts of decision entries over every cached PlacementDecision."""

    def __init__(self, decisions: Informer) -> None:
        self._counts: Counter[str] = Counter()
        decisions.add_handler(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.old is not None:
            self._counts.subtract(clusters_of(change.old))
        if change.new is not None:
            self._counts.update(clusters_of(change.new))
        # Counter.subtract leaves zeros behind; drop them so the map shrinks.
        for name in clusters_of(change.old) if change.old is not None else ():
            if self._counts.get(name, 0) <= 0:
                self._counts.pop(name, None)

    @property
    def counts(self) -> Mapping[str, int]:
        """Decision entries per cluster over every cached PlacementDecision."""
        return self._counts


def clusters_of(decision: Obj) -> list[str]:
    """The cluster names of a cached PlacementDecision's ``status.decisions`` (any entry
    that is not a well-formed decision is skipped: another writer may store anything)."""
    status = decision.get("status")
    found = status.get("decisions") if isinstance(status, dict) else None
    if not isinstance(found, list):
        return []
    return [
        item["clusterName"]
        for item in found
        if isinstance(item, dict) and isinstance(item.get("clusterName"), str)
    ]
