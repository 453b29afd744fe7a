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
from collections.abc import Iterator, Mapping
from typing import Any

from pyocm.runtime.informer import Change, Informer

Obj = dict[str, Any]


class DecisionUsage:
    """Per-cluster counts of decision entries over every cached PlacementDecision, and
    how many clusters hold each count (so the largest count other placements give is
    found without reading every cluster's)."""

    def __init__(self, decisions: Informer) -> None:
        self._counts: dict[str, int] = {}
        self._holders: Counter[int] = Counter()
        decisions.add_handler(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.old is not None:
            for name in clusters_of(change.old):
                self._bump(name, -1)
        if change.new is not None:
            for name in clusters_of(change.new):
                self._bump(name, 1)

    def _bump(self, name: str, delta: int) -> None:
        before = self._counts.get(name, 0)
        after = before + delta
        if before > 0:
            self._holders[before] -= 1
            if not self._holders[before]:
                del self._holders[before]
        if after > 0:
            self._counts[name] = after
            self._holders[after] += 1
        else:
            self._counts.pop(name, None)  # the map shrinks as decisions go

    @property
    def counts(self) -> Mapping[str, int]:
        """Decision entries per cluster over every cached PlacementDecision."""
        return self._counts

    def elsewhere(self, own: Mapping[str, int]) -> tuple[Mapping[str, int], int]:
        """What :func:`~.scheduling.prioritize.counts_elsewhere` answers for a placement
        whose own decision counts are ``own``: each cluster's count less its own (never
        below 0), and the largest such count, in time proportional to ``own`` and the
        distinct counts rather than to the fleet."""
        left = {name: max(self._counts.get(name, 0) - count, 0) for name, count in own.items()}
        # The clusters of ``own`` holding each count: they hold it no more once their
        # own decisions are taken out.
        taken = Counter(self._counts[name] for name in own if name in self._counts)
        others = next(
            (c for c in sorted(self._holders, reverse=True) if self._holders[c] > taken[c]), 0
        )
        return _Elsewhere(self._counts, left), max(others, *left.values(), 0)


class _Elsewhere(Mapping[str, int]):
    """Every cluster's count, with ``left`` in place of the counts of ``own``'s clusters."""

    def __init__(self, counts: Mapping[str, int], left: Mapping[str, int]) -> None:
        self._counts, self._left = counts, left

    def __getitem__(self, name: str) -> int:
        if name in self._left:
            return self._left[name]
        return self._counts[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._counts
        yield from (name for name in self._left if name not in self._counts)

    def __len__(self) -> int:
        return len(self._counts) + sum(1 for name in self._left if name not in self._counts)


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
