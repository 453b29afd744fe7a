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

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

Obj = dict[str, Any]
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


def cluster_selector(selector_type: str, labels: Mapping[str, str]) -> Obj:
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


async def create_set(api: Api, name: str, selector: Obj) -> Outcome:
    try:
        await api.create(
            ocm.MANAGED_CLUSTER_SET,
            {"metadata": {"name": name}, "spec": {"clusterSelector": selector}},
        )
    except ApiError as err:
        if err.code != 409:
            raise
        current = await api.get(ocm.MANAGED_CLUSTER_SET, name)
        found = (current.get("spec") or {}).get("clusterSelector") or {}
        if found != selector:
            raise ClusterSetError(
                f"clusterset {name} already exists with another selector: {_describe(found)}"
            ) from None
        return Outcome(f"clusterset {name} already exists", changed=False)
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
        cluster_set = await api.get(ocm.MANAGED_CLUSTER_SET, name)
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
        if (current["metadata"].get("labels") or {}).get(key) == value:
            outcomes.append(Outcome(f"{cluster} is already in clusterset {name}", changed=False))
            continue
        await api.patch(ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {key: value}}})
        outcomes.append(Outcome(f"{cluster} is now in clusterset {name} ({key}={value})"))
    return outcomes


def _membership_label(cluster_set: Obj) -> tuple[str, str]:
    name = cluster_set["metadata"]["name"]
    selector = (cluster_set.get("spec") or {}).get("clusterSelector") or {}
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        return wellknown.CLUSTER_SET_LABEL, name
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = selector.get("exclusiveLabel") or {}
        return str(exclusive.get("key")), str(exclusive.get("value"))
    raise ClusterSetError(
        f"clusterset {name} selects clusters with a label selector ({_describe(selector)}); "
        "label the clusters to match it instead"
    )


async def bind(api: Api, name: str, namespace: str) -> Outcome:
    body = {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterSet": name}}
    try:
        await api.create(ocm.MANAGED_CLUSTER_SET_BINDING, body)
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


def _describe(selector: Obj) -> str:
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind == wellknown.SELECTOR_LABEL_SELECTOR:
        match = (selector.get("labelSelector") or {}).get("matchLabels") or {}
        terms = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
        return f"{kind} {terms or '(every cluster)'}"
    if kind == wellknown.SELECTOR_EXCLUSIVE_LABEL:
        exclusive = selector.get("exclusiveLabel") or {}
        return f"{kind} {exclusive.get('key')}={exclusive.get('value')}"
    return str(kind)


def tree(sets: Iterable[Obj], bindings: Iterable[Obj], *, width: int = 80) -> list[str]:
    """The sets as clusteradm draws them: each with its bound namespaces and status."""
    bound: dict[str, list[str]] = {}
    for binding in bindings:
        target = str((binding.get("spec") or {}).get("clusterSet") or "")
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


def _status(cluster_set: Obj) -> str:
    empty = conditions.find(
        (cluster_set.get("status") or {}).get("conditions"), wellknown.CLUSTER_SET_EMPTY
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
