"""What a hub admin does with cluster sets, as clusteradm does it: create and delete a
set, put clusters into it, bind it to a workspace namespace, and draw the sets as a tree.

Everything goes through the hub's API as the caller, so its admission rules and RBAC
(``managedclustersets/join``, ``managedclusters/label``, ``managedclustersets/bind``)
decide; this module only turns intent into objects and says clearly what went wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta2 import (
    ManagedClusterSet,
    ManagedClusterSetBinding,
    ManagedClusterSetSpecClusterSelector,
)
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

# The objects this module writes are typed; those it reads (the hub's answers, listed
# objects) are not read through a schema and may hold null or ill-typed values, so their
# fields are read defensively (pyocm.api.shapes).
Selector = ManagedClusterSetSpecClusterSelector
SELECTOR_TYPES = (
    wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL,
    wellknown.SELECTOR_LABEL_SELECTOR,
    wellknown.SELECTOR_EXCLUSIVE_LABEL,
)


class ClusterSetError(Exception):
    """A request that cannot be carried out, said so the admin knows what to change."""


@dataclass(frozen=True)
class Outcome:
    """What a command did, in one line, and whether it changed anything."""

    message: str
    changed: bool = True


def cluster_selector(selector_type: str, labels: Mapping[str, str]) -> Selector:
    """The ``spec.clusterSelector`` for a selector type and ``--label`` pairs."""
    if selector_type not in SELECTOR_TYPES:
        raise ClusterSetError(
            f"unknown selector type {selector_type!r}; use one of {', '.join(SELECTOR_TYPES)}"
        )
    if selector_type == wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        if labels:
            raise ClusterSetError(
                "ExclusiveClusterSetLabel sets select clusters by their clusterset label; "
                "--label applies to LabelSelector and ExclusiveLabel"
            )
        return {"selectorType": selector_type}
    if selector_type == wellknown.SELECTOR_LABEL_SELECTOR:
        if not labels:
            raise ClusterSetError(
                "LabelSelector needs at least one --label KEY=VALUE "
                "(the global set already selects every cluster)"
            )
        return {"selectorType": selector_type, "labelSelector": {"matchLabels": dict(labels)}}
    if len(labels) != 1:
        raise ClusterSetError("ExclusiveLabel needs exactly one --label KEY=VALUE")
    ((key, value),) = labels.items()
    return {"selectorType": selector_type, "exclusiveLabel": {"key": key, "value": value}}


async def create_set(api: Api, name: str, selector: Selector) -> Outcome:
    """Create the set; one that exists already is refused, as ``kubectl create`` refuses
    it (clusteradm says "already created" and succeeds, so a script cannot tell that the
    selector it asked for is not the one in force), naming its selector when it differs."""
    body: ManagedClusterSet = {"metadata": {"name": name}, "spec": {"clusterSelector": selector}}
    try:
        await api.create(ocm.MANAGED_CLUSTER_SET, models.wire(body))
    except ApiError as err:
        if err.code != 409:
            raise
        current = await api.get(ocm.MANAGED_CLUSTER_SET, name)
        found = _selector(models.view(ManagedClusterSet, current))
        other = f" with another selector: {_describe(found)}" if found != selector else ""
        raise ClusterSetError(f"clusterset {name} already exists{other}") from None
    return Outcome(f"clusterset {name} created")


async def delete_set(api: Api, name: str, *, default_sets_kept: bool = True) -> Outcome:
    try:
        await api.delete(ocm.MANAGED_CLUSTER_SET, name)
    except ApiError as err:
        if err.code == 404:
            raise ClusterSetError(f"no clusterset named {name}") from None
        raise
    if default_sets_kept and name in ("default", "global"):
        return Outcome(
            f"clusterset {name} deleted; the hub creates it again while the "
            "DefaultClusterSet feature gate is on"
        )
    return Outcome(f"clusterset {name} deleted")


async def assign(api: Api, name: str, clusters: Iterable[str]) -> list[Outcome]:
    """Put ``clusters`` into set ``name`` by giving them the label the set selects on."""
    try:
        cluster_set = models.view(ManagedClusterSet, await api.get(ocm.MANAGED_CLUSTER_SET, name))
    except ApiError as err:
        if err.code == 404:
            raise ClusterSetError(f"no clusterset named {name}") from None
        raise
    key, value = _membership_label(cluster_set)
    outcomes = []
    for cluster in clusters:
        try:
            current = await api.get(ocm.MANAGED_CLUSTER, cluster)
        except ApiError as err:
            if err.code == 404:
                raise ClusterSetError(f"no managed cluster named {cluster}") from None
            raise
        if shapes.mapping(current["metadata"].get("labels")).get(key) == value:
            outcomes.append(Outcome(f"{cluster} is already in clusterset {name}", changed=False))
            continue
        await api.patch(ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {key: value}}})
        outcomes.append(Outcome(f"{cluster} is now in clusterset {name} ({key}={value})"))
    return outcomes


def _selector(cluster_set: ManagedClusterSet) -> dict[str, Any]:
    """A set's ``spec.clusterSelector`` as answered ({} when absent or ill-typed)."""
    return shapes.mapping(shapes.mapping(cluster_set.get("spec")).get("clusterSelector"))


def _membership_label(cluster_set: ManagedClusterSet) -> tuple[str, str]:
    name = cluster_set["metadata"]["name"]
    selector = _selector(cluster_set)
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        return wellknown.CLUSTER_SET_LABEL, name
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = shapes.mapping(selector.get("exclusiveLabel"))
        return str(exclusive.get("key")), str(exclusive.get("value"))
    raise ClusterSetError(
        f"clusterset {name} selects clusters with a label selector ({_describe(selector)}); "
        "label the clusters to match it instead"
    )


async def bind(api: Api, name: str, namespace: str) -> Outcome:
    body: ManagedClusterSetBinding = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterSet": name},
    }
    try:
        await api.create(ocm.MANAGED_CLUSTER_SET_BINDING, models.wire(body))
    except ApiError as err:
        if err.code != 409:
            raise
        return Outcome(f"clusterset {name} is already bound to {namespace}", changed=False)
    return Outcome(f"clusterset {name} bound to namespace {namespace}")


async def unbind(api: Api, name: str, namespace: str) -> Outcome:
    try:
        await api.delete(ocm.MANAGED_CLUSTER_SET_BINDING, name, namespace=namespace)
    except ApiError as err:
        if err.code == 404:
            raise ClusterSetError(f"clusterset {name} is not bound to {namespace}") from None
        raise
    return Outcome(f"clusterset {name} unbound from namespace {namespace}")


def _describe(selector: Mapping[str, Any]) -> str:
    """A selector, ours or as answered (read defensively)."""
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_LABEL_SELECTOR:
        match = shapes.mapping(shapes.mapping(selector.get("labelSelector")).get("matchLabels"))
        terms = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
        return f"{kind} {terms or '(every cluster)'}"
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = shapes.mapping(selector.get("exclusiveLabel"))
        return f"{kind} {exclusive.get('key')}={exclusive.get('value')}"
    return str(kind)


def tree(
    sets: Iterable[ManagedClusterSet],
    bindings: Iterable[ManagedClusterSetBinding],
    *,
    width: int = 80,
) -> list[str]:
    """The sets as clusteradm draws them: each with its bound namespaces and status
    (``sets`` and ``bindings`` as listed, read defensively)."""
    bound: dict[str, list[str]] = {}
    for binding in bindings:
        target = str(shapes.mapping(binding.get("spec")).get("clusterSet") or "")
        bound.setdefault(target, []).append(str(binding["metadata"]["namespace"]))
    ordered = sorted(sets, key=lambda s: str(s["metadata"]["name"]))
    lines = ["<ManagedClusterSet>"]
    for index, cluster_set in enumerate(ordered):
        last = index == len(ordered) - 1
        name = str(cluster_set["metadata"]["name"])
        lines.append(f"{'└──' if last else '├──'} <{name}>")
        indent = "    " if last else "│   "
        namespaces = ", ".join(sorted(bound.get(name, [])))
        lines += _wrapped(f"{indent}├── <BoundNamespace>", namespaces, f"{indent}│   ", width)
        lines.append(f"{indent}└── <Status> {_status(cluster_set)}".rstrip())
    return lines


def _status(cluster_set: ManagedClusterSet) -> str:
    empty = conditions.find(
        shapes.mapping(cluster_set.get("status")).get("conditions"), wellknown.CLUSTER_SET_EMPTY
    )
    return str(empty.get("message") or "") if empty else ""


def _wrapped(head: str, text: str, continuation: str, width: int) -> list[str]:
    """``head text``, with a long list of namespaces continued under it (narrow terminals)."""
    if not text or len(head) + 1 + len(text) <= width:
        return [f"{head} {text}".rstrip()]
    lines, line = [], head
    pad = continuation + " " * (len(head) - len(continuation))
    for word in text.split(" "):
        if len(line) + 1 + len(word) > width and line not in (head, pad):
            lines.append(line)
            line = pad
        line = f"{line} {word}"
    lines.append(line)
    return lines
