"""``pyocm create|delete clusterset``, ``pyocm clusterset set|bind|unbind`` and
``pyocm get clustersets``, shaped like clusteradm's commands."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import typer

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet, ManagedClusterSetBinding
from pyocm.cli.clusters import age, check_output
from pyocm.cli.common import (
    KUBECONFIG_HELP,
    connect,
    echo_objects,
    echo_table,
    fail,
    run,
)
from pyocm.cli.watching import WATCH_HELP, Watched, WatchPrinter, list_and_watch
from pyocm.clustersets import admin
from pyocm.kube import names
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

T = TypeVar("T")

OUTPUTS = ("tree", "table", "wide", "yaml", "json", "name")
HEADERS = ("NAME", "BOUND NAMESPACES", "STATUS", "MANAGED NAMESPACES")
WIDE_HEADERS = (*HEADERS, "SELECTOR TYPE", "AGE")
#: How many member names a message lists before "and N more".
SHOWN = 10

app = typer.Typer(help="Put clusters into a set; bind a set to a namespace.", no_args_is_help=True)

SELECTOR_HELP = (
    "ExclusiveClusterSetLabel (members carry cluster.open-cluster-management.io/clusterset=NAME), "
    "LabelSelector (members match every --label) or ExclusiveLabel (members carry the one --label, "
    "under cluster.open-cluster-management.io/ or info.open-cluster-management.io/)."
)


def _kubeconfig() -> Any:
    return typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP)


def _with_api(kubeconfig: Path | None, work: Callable[[Api], Awaitable[T]]) -> T:
    async def go() -> T:
        async with connect(kubeconfig) as api:
            try:
                return await work(api)
            except admin.ClusterSetError as err:
                fail(str(err))

    return run(go())


def _parse_labels(texts: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        problems = names.is_qualified_name(key) + names.is_valid_label_value(value)
        if not sep or problems:
            detail = "; ".join(problems) or "expected KEY=VALUE"
            fail(f'--label "{text}": {detail}', code=2)
        labels[key] = value
    return labels


def create_clusterset(
    name: str = typer.Argument(..., help="The set's name."),
    selector_type: str = typer.Option(
        "ExclusiveClusterSetLabel", "--selector-type", help=SELECTOR_HELP
    ),
    label: list[str] = typer.Option([], "--label", help="KEY=VALUE; repeatable."),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Create a ManagedClusterSet."""
    try:
        selector = admin.cluster_selector(selector_type, _parse_labels(label))
    except admin.ClusterSetError as err:
        fail(str(err), code=2)
    typer.echo(_with_api(kubeconfig, lambda api: admin.create_set(api, name, selector)).message)


def delete_clusterset(
    name: str = typer.Argument(..., help="The set's name."),
    force: bool = typer.Option(
        False, "--force", help="Delete it even while clusters are in it (they keep its label)."
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Delete a ManagedClusterSet; refused while clusters are in it, unless --force (its
    bindings turn unbound)."""
    outcome, kept = _with_api(kubeconfig, lambda api: _delete(api, name, force=force))
    typer.echo(outcome.message)
    if kept:
        typer.echo(
            f"warning: {_count(kept)} keep the label {wellknown.CLUSTER_SET_LABEL}={name}: "
            f"{_some(kept)}",
            err=True,
        )


async def _delete(api: Api, name: str, *, force: bool) -> tuple[admin.Outcome, list[str]]:
    """Delete set ``name``, refusing (unless ``force``) while clusters carry its label: they
    would keep naming a set that is gone, join any set created later under that name, and
    leave the placements that reach them through it without a word."""
    members = await _labelled_members(api, name)
    if members and not force:
        other = "default" if name != "default" else "OTHER-SET"
        listed = ",".join(members) if len(members) <= SHOWN else "..."
        raise admin.ClusterSetError(
            f"clusterset {name} still has {_count(members)}: {_some(members)}. Deleting it "
            f"would leave them labelled {wellknown.CLUSTER_SET_LABEL}={name}, naming a set "
            "that no longer exists, and drop them from the placements that select them "
            f"through it. Move them to another set first (pyocm clusterset set {other} "
            f"--clusters {listed}), or pass --force to delete it anyway"
        )
    return await admin.delete_set(api, name), members


async def _labelled_members(api: Api, name: str) -> list[str]:
    """The clusters in set ``name`` through the clusterset label (ExclusiveClusterSetLabel
    sets). Members of label-selector sets are chosen by the clusters' own labels, which
    mean something without the set, so they are not counted."""
    try:
        found = models.view(ManagedClusterSet, await api.get(ocm.MANAGED_CLUSTER_SET, name))
    except ApiError as err:
        if err.code == 404:
            raise admin.ClusterSetError(f"no clusterset named {name}") from None
        raise
    selector = shapes.mapping(shapes.mapping(found.get("spec")).get("clusterSelector"))
    kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
    if kind != wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL:
        return []
    listed = await api.list_all(ocm.MANAGED_CLUSTER, labels=f"{wellknown.CLUSTER_SET_LABEL}={name}")
    return sorted(str(c["metadata"]["name"]) for c in shapes.objects(listed.get("items")))


def _count(clusters: list[str]) -> str:
    return f"{len(clusters)} cluster{'s' if len(clusters) != 1 else ''}"


def _some(clusters: list[str]) -> str:
    """The first :data:`SHOWN` names, and how many more."""
    more = len(clusters) - SHOWN
    return ", ".join(clusters[:SHOWN]) + (f" and {more} more" if more > 0 else "")


@app.command("set")
def set_clusters(
    name: str = typer.Argument(..., help="The set's name."),
    clusters: str = typer.Option(..., "--clusters", help="Comma-separated cluster names."),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Put clusters into a set (moving them out of the set they were in)."""
    wanted = [c.strip() for c in clusters.split(",") if c.strip()]
    if not wanted:
        fail("--clusters needs at least one cluster name", code=2)
    for outcome in _with_api(kubeconfig, lambda api: admin.assign(api, name, wanted)):
        typer.echo(outcome.message)


@app.command("bind")
def bind(
    name: str = typer.Argument(..., help="The set's name."),
    namespace: str = typer.Option(..., "--namespace", help="The workspace namespace."),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Bind a set to a workspace namespace (ManagedClusterSetBinding)."""
    typer.echo(_with_api(kubeconfig, lambda api: admin.bind(api, name, namespace)).message)


@app.command("unbind")
def unbind(
    name: str = typer.Argument(..., help="The set's name."),
    namespace: str = typer.Option(..., "--namespace", help="The workspace namespace."),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Remove a set's binding from a namespace."""
    typer.echo(_with_api(kubeconfig, lambda api: admin.unbind(api, name, namespace)).message)


def get_clustersets(
    output: str = typer.Option(
        "tree", "-o", "--output", help="tree (as clusteradm), table, wide, yaml, json or name."
    ),
    no_headers: bool = typer.Option(
        False, "--no-headers", help="Leave out the header line of table and wide."
    ),
    watch: bool = typer.Option(
        False, "-w", "--watch", help=WATCH_HELP + " The tree is shown as the table."
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Show every set with its bound namespaces and status; -o wide adds its selector
    type and age."""
    check_output(output, OUTPUTS)
    if watch:
        _watch_sets(kubeconfig, output=output, no_headers=no_headers)
        return

    async def load(api: Api) -> tuple[list[ManagedClusterSet], list[ManagedClusterSetBinding]]:
        # As listed, not read through a schema: admin.tree reads them defensively.
        sets = await api.list_all(ocm.MANAGED_CLUSTER_SET)
        bindings = await api.list_all(ocm.MANAGED_CLUSTER_SET_BINDING)
        return list(sets.get("items") or []), list(bindings.get("items") or [])

    sets, bindings = _with_api(kubeconfig, load)
    sets.sort(key=lambda s: str(s["metadata"]["name"]))
    if output == "tree":
        width = shutil.get_terminal_size((80, 24)).columns
        for line in admin.tree(sets, bindings, width=width):
            typer.echo(line)
        return

    def table() -> None:
        wide = output == "wide"
        rows = set_rows(sets, bindings, wide=wide, now=datetime.now(UTC))
        echo_table(WIDE_HEADERS if wide else HEADERS, rows, no_headers=no_headers)

    echo_objects(sets, output=output, kind=ocm.MANAGED_CLUSTER_SET, table=table)


def _watch_sets(kubeconfig: Path | None, *, output: str, no_headers: bool) -> None:
    """``get clustersets -w``: a tree cannot grow a line per change, so rows as -o table.
    The bound namespaces are those when the watch began (bindings are not watched)."""
    listed = _with_api(kubeconfig, lambda api: api.list_all(ocm.MANAGED_CLUSTER_SET_BINDING))
    bindings = [
        models.view(ManagedClusterSetBinding, item) for item in shapes.objects(listed.get("items"))
    ]
    wide = output == "wide"
    printer = WatchPrinter(
        output="table" if output == "tree" else output,
        kind=ocm.MANAGED_CLUSTER_SET,
        headers=WIDE_HEADERS if wide else HEADERS,
        rows=lambda items: set_rows(
            [models.view(ManagedClusterSet, item) for item in items],
            bindings,
            wide=wide,
            now=datetime.now(UTC),
        ),
        no_headers=no_headers,
    )
    list_and_watch(kubeconfig, Watched(ocm.MANAGED_CLUSTER_SET), printer)


def set_rows(
    sets: list[ManagedClusterSet],
    bindings: list[ManagedClusterSetBinding],
    *,
    wide: bool,
    now: datetime,
) -> list[tuple[str, ...]]:
    """clusteradm's table rows (name, bound namespaces, status, managed namespaces);
    ``wide`` adds the selector and the age (sets and bindings as listed: read defensively)."""
    bound: dict[str, list[str]] = {}
    for binding in bindings:
        target = str(shapes.mapping(binding.get("spec")).get("clusterSet") or "")
        bound.setdefault(target, []).append(str(binding["metadata"]["namespace"]))
    rows = []
    for item in sets:
        name = str(item["metadata"]["name"])
        spec = shapes.mapping(item.get("spec"))
        managed = [str(ns.get("name", "")) for ns in shapes.objects(spec.get("managedNamespaces"))]
        row: tuple[str, ...] = (
            name,
            ",".join(sorted(bound.get(name, []))),
            _empty_message(item),
            ",".join(managed),
        )
        if wide:
            selector = shapes.mapping(spec.get("clusterSelector"))
            kind = selector.get("selectorType") or wellknown.SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL
            row += (str(kind), age(item["metadata"].get("creationTimestamp"), now=now))
        rows.append(row)
    return rows


def _empty_message(item: ManagedClusterSet) -> str:
    """The ClusterSetEmpty condition's message ("N ManagedClusters selected"), as
    clusteradm's STATUS column shows it."""
    status = shapes.mapping(item.get("status"))
    found = conditions.find(status.get("conditions"), wellknown.CLUSTER_SET_EMPTY)
    return str(found.get("message") or "") if found else ""
