"""``pyocm create|delete clusterset``, ``pyocm clusterset set|bind|unbind`` and
``pyocm get clustersets``, shaped like clusteradm's commands."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta2 import ManagedClusterSet, ManagedClusterSetBinding
from pyocm.cli.common import KUBECONFIG_HELP, connect, fail, run
from pyocm.clustersets import admin
from pyocm.kube import names
from pyocm.runtime.client import Api

T = TypeVar("T")

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
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Delete a ManagedClusterSet (its clusters keep their labels; its bindings turn unbound)."""
    typer.echo(_with_api(kubeconfig, lambda api: admin.delete_set(api, name)).message)


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


def get_clustersets(kubeconfig: Path = _kubeconfig()) -> None:
    """Show every set with its bound namespaces and status."""

    async def load(api: Api) -> tuple[list[ManagedClusterSet], list[ManagedClusterSetBinding]]:
        # As listed, not read through a schema: admin.tree reads them defensively.
        sets = await api.list_all(ocm.MANAGED_CLUSTER_SET)
        bindings = await api.list_all(ocm.MANAGED_CLUSTER_SET_BINDING)
        return list(sets.get("items") or []), list(bindings.get("items") or [])

    sets, bindings = _with_api(kubeconfig, load)
    width = shutil.get_terminal_size((80, 24)).columns
    for line in admin.tree(sets, bindings, width=width):
        typer.echo(line)
