"""The Predicate filter (upstream's ``plugins/predicate`` and ``helpers/clusters.go``,
``helpers/cel.go``).

Each predicate's ``requiredClusterSelector`` matches a cluster when its labelSelector
matches the cluster's labels AND its claimSelector (``matchExpressions`` only) matches the
cluster's ``status.clusterClaims`` (name to value) AND every CEL expression of its
celSelector yields true. Predicates are ORed; a placement without predicates, or a list
of no clusters, lets every cluster through. A selector that does not parse, or a CEL
expression that does not compile, makes the placement misconfigured:
``Predicate:<message>``. A CEL expression that fails at run time (a missing key, the cost
budget spent) only means that cluster does not match.

CEL expressions see the cluster as ``managedCluster`` and may call, besides Kubernetes'
libraries (:mod:`pyocm.kube.cel`), OCM's ``managedCluster.scores("<AddOnPlacementScore>")``
(the score items ``{name, value}`` of that cluster's score resource) and
``"<json>".parseJSON()``. Each cluster's expressions share one budget of
:data:`~pyocm.kube.cel.RUNTIME_COST_BUDGET`, as upstream's do.

This interpreter is some thousand times slower than cel-go, so an expression within
upstream's limits can run for a minute here. The caller may pass a wall-clock
``deadline`` (a ``time.monotonic()`` instant) for one pass: an expression still running
then, and every cluster not yet looked at, does not match, as a CEL run-time failure
does upstream. Each cluster is converted to CEL values once per resourceVersion
(:func:`cel_cluster`), not once per expression.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from celpy import celtypes
from celpy.adapter import json_to_cel

from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.cluster_v1alpha1 import AddOnPlacementScoreStatusScore
from pyocm.api.models.cluster_v1beta1 import (
    Placement,
)
from pyocm.api.models.cluster_v1beta1 import (
    PlacementSpecPredicateRequiredClusterSelector as RequiredClusterSelector,
)
from pyocm.kube import selectors
from pyocm.kube.cel import (
    RUNTIME_COST_BUDGET,
    CelCompileError,
    CelEnv,
    CelEvalError,
    Program,
    is_bool,
    to_cel,
)

PLUGIN = "Predicate"

#: The score items of one cluster's AddOnPlacementScore: (cluster name, score resource
#: name) to its ``status.scores``, or None when there is no such resource.
ScoreLookup = Callable[[str, str], Sequence[AddOnPlacementScoreStatusScore] | None]


class Misconfigured(ValueError):
    """A placement whose predicates cannot be evaluated; ``str()`` is the condition's
    message, ``<plugin>:<message>``."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"{plugin}:{message}")
        self.plugin = plugin
        self.message = message


def _no_scores(_cluster: Any, _name: Any) -> Any:
    raise ValueError("scoreLister is nil")


def _parse_json(text: Any) -> Any:
    if not isinstance(text, celtypes.StringType):
        raise ValueError("failed to parse json: argument must be a string")
    try:
        # encoding/json decodes every number into interface{} as a float64: a double.
        return json_to_cel(json.loads(str(text), parse_int=float))
    except ValueError as err:
        raise ValueError(f"failed to parse json: {err}") from None


#: The placement environment: ``scores`` here only declares the name; each evaluation
#: binds it to the caller's lookup (:meth:`CelEnv.with_functions`).
ENV = CelEnv("managedCluster", functions={"scores": _no_scores, "parseJSON": _parse_json})


@dataclass(frozen=True)
class ClusterSelector:
    """One predicate, compiled: match with :meth:`matches`."""

    labels: selectors.LabelSelector
    claims: selectors.LabelSelector
    programs: tuple[Program, ...]

    def matches(self, cluster: ManagedCluster, env: CelEnv, *, deadline: float | None) -> bool:
        labels = cluster.get("metadata", {}).get("labels") or {}
        if not self.labels.matches(labels):
            return False
        if not self.claims.matches(claims_of(cluster)):
            return False
        return not self.programs or _cel_matches(self.programs, cluster, env, deadline)


def claims_of(cluster: ManagedCluster) -> dict[str, str]:
    """``GetClusterClaims``: the cluster's claims, name to value. The CRD requires
    neither field of a claim: a missing one reads as "", as Go's zero value does."""
    claims = (cluster.get("status") or {}).get("clusterClaims") or []
    return {c.get("name", ""): c.get("value", "") for c in claims}


def compile_selector(selector: RequiredClusterSelector) -> ClusterSelector:
    """``NewClusterSelector`` and ``Compile``; raises :class:`Misconfigured` as upstream
    reports a bad label or claim selector or a CEL expression that does not compile."""
    try:
        labels = selectors.from_label_selector(selector.get("labelSelector") or {})
        claim_expressions = (selector.get("claimSelector") or {}).get("matchExpressions") or []
        claims = selectors.from_label_selector({"matchExpressions": claim_expressions})
    except selectors.SelectorError as err:
        raise Misconfigured(PLUGIN, str(err)) from None
    expressions = (selector.get("celSelector") or {}).get("celExpressions") or []
    programs = tuple(_program(text) for text in expressions)
    return ClusterSelector(labels=labels, claims=claims, programs=programs)


def compile_predicates(placement: Placement) -> list[ClusterSelector]:
    """Every predicate of the placement, compiled (in order)."""
    predicates = placement["spec"].get("predicates") or []
    return [compile_selector(p.get("requiredClusterSelector") or {}) for p in predicates]


def uses_cel(placement: Placement) -> bool:
    """Whether some predicate of the placement has a CEL expression (whose evaluation
    may take long, where selectors never do)."""
    return any(
        (p.get("requiredClusterSelector") or {}).get("celSelector", {}).get("celExpressions")
        for p in placement["spec"].get("predicates") or []
    )


def filter_predicates(
    placement: Placement,
    clusters: Sequence[ManagedCluster],
    *,
    scores: ScoreLookup | None = None,
    deadline: float | None = None,
) -> list[ManagedCluster]:
    """The clusters some predicate matches, in their order; raises :class:`Misconfigured`.

    ``scores`` answers ``managedCluster.scores(...)``; without it that call fails (and
    its cluster does not match), as upstream's does without a score lister. Past
    ``deadline`` (``time.monotonic()``) no CEL expression matches (see the module doc).
    """
    if not placement["spec"].get("predicates") or not clusters:
        return list(clusters)
    compiled = compile_predicates(placement)
    env = ENV if scores is None else ENV.with_functions({"scores": _scores_function(scores)})
    return [c for c in clusters if any(s.matches(c, env, deadline=deadline) for s in compiled)]


#: How many converted clusters :func:`cel_cluster` keeps (a fleet's worth).
CEL_CACHE_SIZE = 20_000
_converted: OrderedDict[tuple[str, str], Any] = OrderedDict()
_converted_lock = threading.Lock()  # passes run in worker threads


def cel_cluster(cluster: ManagedCluster) -> Any:
    """The cluster as CEL sees it, converted once per (uid, resourceVersion) and kept in
    a least-recently-used cache of :data:`CEL_CACHE_SIZE`. A cluster without both (not
    from the server) is converted each time. The value is shared: never mutate it."""
    meta = cluster.get("metadata") or {}
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if not uid or not version:
        return to_cel(cluster)
    key = (uid, version)
    with _converted_lock:
        found = _converted.get(key)
        if found is not None:
            _converted.move_to_end(key)
            return found
    value = to_cel(cluster)
    with _converted_lock:
        _converted[key] = value
        while len(_converted) > CEL_CACHE_SIZE:
            _converted.popitem(last=False)
    return value


def _scores_function(lookup: ScoreLookup) -> Callable[[Any, Any], Any]:
    def scores(cluster: Any, name: Any) -> Any:
        if not isinstance(cluster, celtypes.MapType) or not isinstance(name, celtypes.StringType):
            raise TypeError("no such overload")
        metadata = _get(cluster, "metadata")
        if not isinstance(metadata, celtypes.MapType):
            raise ValueError("failed to get cluster metadata")
        cluster_name = _get(metadata, "name")
        if not isinstance(cluster_name, celtypes.StringType):
            raise ValueError("failed to get cluster name")
        items = lookup(str(cluster_name), str(name))
        if items is None:
            raise ValueError(
                "failed to get score: addonplacementscores.cluster.open-cluster-management.io"
                f' "{name}" not found'
            )
        return json_to_cel([{"name": i["name"], "value": i["value"]} for i in items])

    return scores


def _get(mapping: celtypes.MapType, key: str) -> Any:
    cel_key = celtypes.StringType(key)
    return mapping[cel_key] if cel_key in mapping else None  # noqa: SIM401 (raises)


def _cel_matches(
    programs: Sequence[Program], cluster: ManagedCluster, env: CelEnv, deadline: float | None
) -> bool:
    """All expressions true within one budget (and before ``deadline``); an error or a
    non-bool is no match."""
    if deadline is not None and time.monotonic() > deadline:
        return False
    budget = RUNTIME_COST_BUDGET
    variables: Mapping[str, Any] = {"managedCluster": cel_cluster(cluster)}
    for program in programs:
        try:
            outcome = env.evaluate(
                program, variables, budget=budget, deadline=deadline, converted=True
            )
        except CelEvalError:
            return False
        budget -= outcome.cost
        if not (is_bool(outcome.value) and outcome.value):
            return False
    return True


def _program(text: str) -> Program:
    program = _compiled(text)
    if isinstance(program, str):
        raise Misconfigured(PLUGIN, program)
    return program


@lru_cache(maxsize=4096)
def _compiled(text: str) -> Program | str:
    """A compiled expression, or upstream's message for one that does not compile
    (cached by text: the same expressions recur in every scheduling of a placement)."""
    try:
        return ENV.compile(text)
    except CelCompileError as err:
        return f"compilation failed: {err}"
