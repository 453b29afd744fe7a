"""``pyocm create placement``, ``pyocm get placements`` and ``pyocm delete placement``,
shaped like clusteradm's ``create placement`` and ``get placements``.

A Placement lives in a workspace namespace and selects clusters from the cluster sets
bound there (ManagedClusterSetBindings); the placement controller writes its choice
into PlacementDecisions labelled ``cluster.open-cluster-management.io/placement=<name>``
and reports ``PlacementSatisfied`` in the Placement's status. These commands write and
read those objects only; they choose nothing themselves.

One difference from clusteradm: it refuses a ``--clustersets`` set not bound to the
namespace; pyocm creates the Placement and warns, because upstream's scheduler accepts
such a Placement and selects from the set as soon as a binding appears.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta1 import Placement, PlacementSpec
from pyocm.api.models.meta_v1 import ObjectMeta
from pyocm.cli.common import KUBECONFIG_HELP, connect, echo_list, fail, name_list, run
from pyocm.cli.watching import WATCH_HELP, Watched, WatchPrinter, list_and_watch
from pyocm.kube import kinds, names
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

RESOURCE = f"placement.{wellknown.CLUSTER_GROUP}"
OUTPUTS = ("table", "yaml", "json", "name")
HEADERS = ("NAME", "NAMESPACE", "SUCCEEDED", "SELECTED", "CLUSTERS")


def _kubeconfig() -> Any:
    return typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP)


def _namespace(text: str) -> str:
    if problems := names.is_dns1123_label(text):
        fail(f'namespace "{text}" is invalid: {"; ".join(problems)}', code=2)
    return text


def _placement_name(text: str) -> str:
    if problems := names.is_dns1123_subdomain(text):
        fail(f'placement name "{text}" is invalid: {"; ".join(problems)}', code=2)
    return text


def _set_names(text: str) -> list[str]:
    found = name_list([text], what="a cluster set name", flag="--clusterset")
    if not found:
        fail("--clusterset needs at least one cluster set name", code=2)
    return found


def _labels(texts: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        problems = names.is_qualified_name(key) + names.is_valid_label_value(value)
        if not sep or problems:
            fail(f'--label "{text}": {"; ".join(problems) or "expected KEY=VALUE"}', code=2)
        labels[key] = value
    return labels


# --- create ----------------------------------------------------------------------------


def placement_spec(
    cluster_sets: list[str], labels: dict[str, str], number: int | None
) -> PlacementSpec:
    """The spec clusteradm writes: the sets, one predicate matching every label, the count."""
    spec: PlacementSpec = {"clusterSets": cluster_sets}
    if labels:
        spec["predicates"] = [
            {"requiredClusterSelector": {"labelSelector": {"matchLabels": labels}}}
        ]
    if number is not None:
        spec["numberOfClusters"] = number
    return spec


def create_placement(
    name: str = typer.Argument(..., help="The placement's name."),
    namespace: str = typer.Option(
        ..., "-n", "--namespace", help="The workspace namespace the sets are bound to."
    ),
    clusterset: str = typer.Option(
        ..., "--clusterset", "--clustersets", help="Comma-separated cluster sets to select from."
    ),
    label: list[str] = typer.Option(
        [], "--label", help="KEY=VALUE a selected cluster must carry; repeatable (all must match)."
    ),
    number: int = typer.Option(
        None, "--number", "--count", min=0, help="How many clusters to select (default: all)."
    ),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace the spec of a placement that exists already (without it, that is an error).",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Create a Placement selecting clusters of the given sets in a workspace namespace."""
    meta: ObjectMeta = {"name": _placement_name(name), "namespace": _namespace(namespace)}
    spec = placement_spec(_set_names(clusterset), _labels(label), number)
    placement: Placement = {
        "apiVersion": ocm.PLACEMENT.api_version,
        "kind": "Placement",
        "metadata": meta,
        "spec": spec,
    }
    warnings, line = run(_create(kubeconfig, placement, overwrite=overwrite))
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(line)


async def _create(
    kubeconfig: Path | None, placement: Placement, *, overwrite: bool
) -> tuple[list[str], str]:
    meta = placement["metadata"]
    name, namespace = str(meta["name"]), str(meta["namespace"])
    async with connect(kubeconfig) as api:
        if not await _exists(api, kinds.NAMESPACE, namespace):
            fail(f'namespace "{namespace}" not found')
        warnings = [
            f'cluster set "{cluster_set}" is not bound to namespace "{namespace}": the placement '
            "selects none of its clusters until it is "
            f"(pyocm clusterset bind {cluster_set} --namespace {namespace})"
            for cluster_set in placement["spec"].get("clusterSets") or []
            if not await _exists(api, ocm.MANAGED_CLUSTER_SET_BINDING, cluster_set, namespace)
        ]
        try:
            await api.create(ocm.PLACEMENT, models.wire(placement))
        except ApiError as err:
            if err.code != 409:
                raise
            if not overwrite:
                fail(
                    f'placement "{name}" already exists in namespace "{namespace}" '
                    "(use --overwrite to replace its spec)"
                )
            await _replace_spec(api, placement)
            return warnings, f'placement "{name}" updated in namespace "{namespace}"'
    return warnings, f'placement "{name}" created in namespace "{namespace}"'


async def _replace_spec(api: Api, placement: Placement) -> None:
    """``--overwrite``, as clusteradm's: the existing placement gets the new spec whole,
    its metadata and status kept."""
    meta = placement["metadata"]
    current = await api.get(ocm.PLACEMENT, str(meta["name"]), namespace=meta.get("namespace"))
    current["spec"] = models.wire(placement["spec"])
    await api.update(ocm.PLACEMENT, current)


async def _exists(api: Api, kind: Any, name: str, namespace: str | None = None) -> bool:
    """Whether the object is there; a 403 leaves the hub to decide, as if it were."""
    try:
        await api.get(kind, name, namespace=namespace)
    except ApiError as err:
        if err.code == 404:
            return False
        if err.code != 403:
            raise
    return True


# --- get ---------------------------------------------------------------------------------


def get_placements(
    name: str = typer.Argument(None, help="Only the placement of this name."),
    namespace: str = typer.Option(
        None, "-n", "--namespace", help="The workspace namespace (default: every namespace)."
    ),
    output: str = typer.Option("table", "-o", "--output", help="table, yaml, json or name."),
    watch: bool = typer.Option(
        False,
        "-w",
        "--watch",
        help=WATCH_HELP + " CLUSTERS is read from the decisions at each change.",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """List Placements: whether each is satisfied, how many clusters and which it selected."""
    if output not in OUTPUTS:
        fail(f"--output must be one of {', '.join(OUTPUTS)}", code=2)
    if namespace is not None:
        _namespace(namespace)
    if watch:
        _watch(kubeconfig, namespace, name, output=output)
        return
    placements, chosen = run(_list(kubeconfig, namespace, name))
    if name and not placements:
        _none_named(name, namespace)
    if output == "table":
        _print_table(placements, chosen)
    elif output == "name":
        for placement in placements:
            typer.echo(f"{RESOURCE}/{placement['metadata']['name']}")
    else:
        echo_list(placements, output=output)


def _where(namespace: str | None) -> str:
    return f'namespace "{namespace}"' if namespace else "any namespace"


def _none_named(name: str, namespace: str | None) -> None:
    fail(f'no placement named "{name}" in {_where(namespace)}')


def _watch(
    kubeconfig: Path | None, namespace: str | None, name: str | None, *, output: str
) -> None:
    """``get placements -w``. The placement controller writes a placement's decisions
    before its status, so decisions read at a placement's change are those it reports."""
    if namespace is not None:
        run(_require_namespace(kubeconfig, namespace))
    chosen: Chosen = {}

    async def refresh(api: Api, placements: list[dict[str, Any]]) -> None:
        where: str | None = namespace
        label = wellknown.PLACEMENT_LABEL  # the list: every decision at once
        if len(placements) == 1:
            where, own = _key(placements[0])
            label = f"{wellknown.PLACEMENT_LABEL}={own}"
        found = await api.list_all(ocm.PLACEMENT_DECISION, namespace=where, labels=label)
        if len(placements) == 1:
            chosen[_key(placements[0])] = []  # none left is news too
        chosen.update(chosen_clusters(shapes.objects(found.get("items"))))

    watched = Watched(
        ocm.PLACEMENT,
        namespace=namespace,
        fields=f"metadata.name={name}" if name else None,
        refresh=refresh,
    )
    printer = WatchPrinter(
        output=output,
        kind=ocm.PLACEMENT,
        headers=HEADERS,
        rows=lambda placements: placement_rows(placements, chosen),
        name=lambda placement: f"{RESOURCE}/{placement['metadata']['name']}",
        empty=(lambda: _none_named(name, namespace)) if name else None,
    )
    list_and_watch(kubeconfig, watched, printer)


def _key(placement: dict[str, Any]) -> tuple[str, str]:
    meta = placement["metadata"]
    return str(meta.get("namespace", "")), str(meta["name"])


async def _require_namespace(kubeconfig: Path | None, namespace: str) -> None:
    async with connect(kubeconfig) as api:
        if not await _exists(api, kinds.NAMESPACE, namespace):
            fail(f'namespace "{namespace}" not found')


Chosen = dict[tuple[str, str], list[str]]


async def _list(
    kubeconfig: Path | None, namespace: str | None, name: str | None
) -> tuple[list[dict[str, Any]], Chosen]:
    async with connect(kubeconfig) as api:
        if namespace is not None and not await _exists(api, kinds.NAMESPACE, namespace):
            fail(f'namespace "{namespace}" not found')
        fields = f"metadata.name={name}" if name else None
        listed = await api.list_all(ocm.PLACEMENT, namespace=namespace, fields=fields)
        selector = f"{wellknown.PLACEMENT_LABEL}={name}" if name else wellknown.PLACEMENT_LABEL
        decisions = await api.list_all(ocm.PLACEMENT_DECISION, namespace=namespace, labels=selector)
    items = shapes.objects(listed.get("items"))
    for item in items:  # as kubectl prints list items: with their kind
        item.setdefault("apiVersion", ocm.PLACEMENT.api_version)
        item.setdefault("kind", "Placement")
    items.sort(key=lambda p: (str(p["metadata"].get("namespace")), str(p["metadata"]["name"])))
    return items, chosen_clusters(shapes.objects(decisions.get("items")))


def chosen_clusters(decisions: list[dict[str, Any]]) -> Chosen:
    """Cluster names per (namespace, placement), from its PlacementDecisions in page order."""
    decisions = sorted(decisions, key=lambda d: _page_order(shapes.mapping(d.get("metadata"))))
    chosen: Chosen = {}
    for decision in decisions:
        meta = shapes.mapping(decision.get("metadata"))
        owner = shapes.mapping(meta.get("labels")).get(wellknown.PLACEMENT_LABEL)
        if not isinstance(owner, str):
            continue
        clusters = chosen.setdefault((str(meta.get("namespace", "")), owner), [])
        for item in shapes.objects(shapes.mapping(decision.get("status")).get("decisions")):
            if isinstance(item.get("clusterName"), str):
                clusters.append(item["clusterName"])
    return chosen


def _page_order(meta: dict[str, Any]) -> tuple[str, str, int]:
    """Pages by their trailing number, so ``p-decision-10`` follows ``p-decision-9``."""
    name = str(meta.get("name", ""))
    found = re.fullmatch(r"(.*?)(\d+)", name)
    stem, number = (found.group(1), int(found.group(2))) if found else (name, -1)
    return str(meta.get("namespace", "")), stem, number


def placement_rows(placements: list[dict[str, Any]], chosen: Chosen) -> list[tuple[str, ...]]:
    """One row per placement, in :data:`HEADERS`' order (read defensively: as listed)."""
    rows: list[tuple[str, ...]] = []
    for placement in placements:
        meta = shapes.mapping(placement.get("metadata"))
        status = shapes.mapping(placement.get("status"))
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace", ""))
        satisfied = conditions.find(
            shapes.objects(status.get("conditions")), wellknown.PLACEMENT_SATISFIED
        )
        clusters = chosen.get((namespace, name), [])
        rows.append(
            (
                name,
                namespace,
                str(satisfied.get("status", "")) if satisfied else "",
                str(status.get("numberOfSelectedClusters", 0)),
                ",".join(clusters) if clusters else "<none>",
            )
        )
    return rows


def _print_table(placements: list[dict[str, Any]], chosen: Chosen) -> None:
    if not placements:
        typer.echo("No resources found", err=True)
        return
    table = Table(box=None, header_style="bold")
    for column in HEADERS:
        table.add_column(column)
    for row in placement_rows(placements, chosen):
        table.add_row(*row)
    Console(width=200).print(table)


# --- delete ------------------------------------------------------------------------------


def delete_placement(
    name: str = typer.Argument(..., help="The placement's name."),
    namespace: str = typer.Option(..., "-n", "--namespace", help="The placement's namespace."),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Delete a Placement; the hub's garbage collector removes its PlacementDecisions."""
    typer.echo(run(_delete(kubeconfig, _placement_name(name), _namespace(namespace))))


async def _delete(kubeconfig: Path | None, name: str, namespace: str) -> str:
    async with connect(kubeconfig) as api:
        try:
            placement = await api.get(ocm.PLACEMENT, name, namespace=namespace)
            uid = str(placement["metadata"]["uid"])
            await api.delete(ocm.PLACEMENT, name, namespace=namespace, uid=uid)
        except ApiError as err:
            if err.code == 404:
                fail(f'placement "{name}" not found in namespace "{namespace}"')
            raise
    return f'placement "{name}" deleted from namespace "{namespace}"'
