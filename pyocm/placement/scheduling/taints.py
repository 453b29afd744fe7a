"""The TaintToleration filter (upstream's ``plugins/tainttoleration``; seed 001).

A placement's tolerations are checked first: an empty key needs operator ``Exists``, and
``Exists`` takes no value; either fault makes the placement misconfigured
(``TaintToleration:<message>``). A cluster passes when every taint of it is tolerated:

* ``PreferNoSelect``: always;
* ``NoSelectIfNew``: when the cluster is already among the placement's decisions,
  otherwise as ``NoSelect``;
* ``NoSelect``: when a toleration matches it: the toleration's effect empty or equal, its
  key empty or equal, operator ``Equal`` (or empty) with an equal value, or ``Exists``.
  A matching toleration with ``tolerationSeconds`` tolerates only until the taint's
  ``timeAdded`` plus those seconds (a taint without ``timeAdded`` counts from the zero
  time: long expired); the first toleration still in time wins.

:func:`requeue_at` is upstream's ``RequeueAfter``: the earliest instant a toleration of a
decided cluster runs out, so the placement is scheduled again then.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta

from pyocm.api import wellknown
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1 import ManagedClusterSpecTaint as Taint
from pyocm.api.models.cluster_v1beta1 import Placement
from pyocm.api.models.common import Toleration
from pyocm.kube.timefmt import parse_time

from .predicates import Misconfigured

PLUGIN = "TaintToleration"
EXISTS = "Exists"
EQUAL = "Equal"
EMPTY_KEY_NEEDS_EXISTS = "If the key is empty, operator must be Exists."
EXISTS_TAKES_NO_VALUE = "If the operator is Exists, the value should be empty."

_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def validate_tolerations(tolerations: Iterable[Toleration]) -> None:
    """Raise :class:`Misconfigured` for the first toleration upstream refuses."""
    for toleration in tolerations:
        operator = toleration.get("operator", "")
        if not toleration.get("key") and operator != EXISTS:
            raise Misconfigured(PLUGIN, EMPTY_KEY_NEEDS_EXISTS)
        if operator == EXISTS and toleration.get("value"):
            raise Misconfigured(PLUGIN, EXISTS_TAKES_NO_VALUE)


def filter_taints(
    placement: Placement,
    clusters: Sequence[ManagedCluster],
    *,
    decided: Collection[str],
    now: datetime,
) -> list[ManagedCluster]:
    """The clusters whose taints the placement tolerates at ``now``, in their order;
    ``decided`` names the clusters already in its decisions. Raises :class:`Misconfigured`
    for invalid tolerations (checked only when there are clusters, as upstream)."""
    if not clusters:
        return []
    tolerations = placement["spec"].get("tolerations") or []
    validate_tolerations(tolerations)
    return [
        c
        for c in clusters
        if tolerated_until(c, tolerations, in_decision=_name(c) in decided, now=now) is not False
    ]


def requeue_at(
    placement: Placement,
    decided_clusters: Iterable[ManagedCluster],
    *,
    now: datetime,
) -> datetime | None:
    """The earliest instant a toleration of one of the placement's decided clusters runs
    out, or None when none will."""
    tolerations = placement["spec"].get("tolerations") or []
    earliest: datetime | None = None
    for cluster in decided_clusters:
        until = tolerated_until(cluster, tolerations, in_decision=True, now=now)
        if isinstance(until, datetime) and (earliest is None or until < earliest):
            earliest = until
    return earliest


def tolerated_until(
    cluster: ManagedCluster,
    tolerations: Sequence[Toleration],
    *,
    in_decision: bool,
    now: datetime,
) -> datetime | bool:
    """False when some taint of the cluster is not tolerated at ``now``; else the earliest
    instant a toleration it relies on runs out, or True when none does."""
    earliest: datetime | None = None
    for taint in (cluster.get("spec") or {}).get("taints") or []:
        until = _taint_tolerated_until(taint, tolerations, in_decision=in_decision, now=now)
        if until is False:
            return False
        if isinstance(until, datetime) and (earliest is None or until < earliest):
            earliest = until
    return True if earliest is None else earliest


def _taint_tolerated_until(
    taint: Taint, tolerations: Sequence[Toleration], *, in_decision: bool, now: datetime
) -> datetime | bool:
    effect = taint.get("effect")
    if effect == wellknown.TAINT_PREFER_NO_SELECT:
        return True
    if effect == wellknown.TAINT_NO_SELECT_IF_NEW and in_decision:
        return True
    for toleration in tolerations:
        if not matches(taint, toleration):
            continue
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            return True
        expiry = _time_added(taint) + timedelta(seconds=seconds)
        if now < expiry:
            return expiry
    return False


def matches(taint: Taint, toleration: Toleration) -> bool:
    """Whether the toleration's effect, key, operator and value match the taint (its
    tolerationSeconds aside)."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator", "")
    if operator in ("", EQUAL):
        return toleration.get("value", "") == taint.get("value", "")
    return operator == EXISTS


def _time_added(taint: Taint) -> datetime:
    added = taint.get("timeAdded")
    return parse_time(added) if added else _ZERO_TIME


def _name(cluster: ManagedCluster) -> str:
    return str(cluster.get("metadata", {}).get("name", ""))
