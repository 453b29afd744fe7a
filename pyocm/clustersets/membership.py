"""Which ManagedClusters a ManagedClusterSet selects (upstream sdk-go's helpers, plus the
Override design's ``ExclusiveLabel``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyocm.api import cluster_v1beta2, models, shapes, wellknown
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet
from pyocm.kube import selectors
from pyocm.runtime.cache import by_label
from pyocm.runtime.informer import Informer

# A set is read here as stored, not through its schema (a selector with parts left out
# would select more than its writer meant): its spec is read defensively, and matcher
# refuses a selector with a value of the wrong type.


class SelectorError(ValueError):
    """The set's clusterSelector cannot select anything (an unknown type, say)."""


def count_members(
    cluster_set: ManagedClusterSet, clusters: Iterable[Mapping[str, Any]], *, match: Any = None
) -> int:
    """How many of ``clusters`` the set selects (its status says no more: no list to
    build and sort for every status rewrite while a fleet joins)."""
    match = match or matcher(cluster_set)
    return sum(1 for c in clusters if match(labels_of(c)))


def label_index(key: str) -> str:
    """The name of a clusters informer's index by the value of label ``key``."""
    return f"label:{key}"


def selected_names(cluster_set: ManagedClusterSet, clusters: Informer) -> list[str]:
    """The names of the cached clusters the set selects. A set selecting by one label's
    value (the exclusive types, the default set's among them) reads them from a label
    index, added on first use; only a general label selector looks at every cluster."""
    match = matcher(cluster_set)
    exclusive = exclusive_label(cluster_set)
    if exclusive is None:
        return [c["metadata"]["name"] for c in clusters.store.objects() if match(labels_of(c))]
    key, value = exclusive
    clusters.add_index(label_index(key), by_label(key))
    return clusters.store.index_keys(label_index(key), value)


def count_selected(cluster_set: ManagedClusterSet, clusters: Informer) -> int:
    """How many cached clusters the set selects (through a label index when it can)."""
    match = matcher(cluster_set)
    exclusive = exclusive_label(cluster_set)
    if exclusive is None:
        return count_members(cluster_set, clusters.store.objects(), match=match)
    key, value = exclusive
    clusters.add_index(label_index(key), by_label(key))
    return clusters.store.index_count(label_index(key), value)


def exclusive_label(cluster_set: ManagedClusterSet) -> tuple[str, str] | None:
    """The one label (key, value) that makes a cluster a member, for the exclusive
    selector types; None for a label selector (or a malformed exclusive one)."""
    selector = shapes.mapping(shapes.mapping(cluster_set.get("spec")).get("clusterSelector"))
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        return wellknown.CLUSTER_SET_LABEL, str(cluster_set["metadata"]["name"])
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = shapes.mapping(selector.get("exclusiveLabel"))
        key, value = exclusive.get("key"), exclusive.get("value")
        if isinstance(key, str) and isinstance(value, str):
            return key, value
    return None


def labels_of(cluster: Mapping[str, Any]) -> dict[str, str]:
    """Any cached object's labels (another writer may have stored anything there)."""
    labels = shapes.mapping(cluster.get("metadata")).get("labels")
    return labels if isinstance(labels, dict) else {}


def matcher(cluster_set: ManagedClusterSet) -> Any:
    """A function of a cluster's labels: whether the set selects it. Raises
    :class:`SelectorError` as :func:`selector` does."""
    return selector(cluster_set).matches


def selector(cluster_set: ManagedClusterSet) -> selectors.LabelSelector:
    """The set's clusterSelector as one label selector: an exclusive type is one equality
    requirement, so an index by label finds its members. Raises :class:`SelectorError`
    for a selector that cannot select anything."""
    name = cluster_set["metadata"]["name"]
    _well_typed_selector(cluster_set)
    found = shapes.mapping(shapes.mapping(cluster_set.get("spec")).get("clusterSelector"))
    kind = found.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        return _equals(wellknown.CLUSTER_SET_LABEL, name)
    if kind == wellknown.SELECTOR_LABEL_SELECTOR:
        label_selector = found.get("labelSelector")
        if label_selector is None:
            return selectors.NOTHING  # a nil selector selects nothing
        try:
            return selectors.from_label_selector(label_selector)
        except selectors.SelectorError as err:
            raise SelectorError(str(err)) from None
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = shapes.mapping(found.get("exclusiveLabel"))
        key, value = exclusive.get("key"), exclusive.get("value")
        if not key:
            raise SelectorError("exclusiveLabel.key is required for selectorType ExclusiveLabel")
        return _equals(key, value) if isinstance(value, str) else selectors.NOTHING
    raise SelectorError(f"selectorType {kind!r} is not supported")


def _equals(key: str, value: str) -> selectors.LabelSelector:
    # Built directly, not by new_requirement: a set's name or a stored value need not be
    # a valid label value to be compared with one (it then matches nothing).
    requirement = selectors.Requirement(key, selectors.Operator.EQUALS, (value,))
    return selectors.LabelSelector(requirements=(requirement,))


def _well_typed_selector(cluster_set: ManagedClusterSet) -> None:
    """Refuse a selector with a value of the wrong type: left out, a requirement or a
    label would make the set select more clusters than its writer meant."""
    typed = shapes.well_typed(models.wire(cluster_set), cluster_v1beta2.MANAGED_CLUSTER_SET.schema)
    wrong = [p for p in typed.problems if p.startswith((".spec:", ".spec.clusterSelector"))]
    if wrong:
        raise SelectorError("; ".join(wrong))
