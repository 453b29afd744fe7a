"""``pyocm addon enable``, ``pyocm addon disable`` and ``pyocm get addon``, shaped like
clusteradm's commands of the same names.

Enabling an add-on on a cluster is creating its ManagedClusterAddOn (named after the
add-on) in the cluster's namespace on the hub; disabling is deleting it. The add-on's
manager does the rest: deploys the agent, registers it, reports its health in the
ManagedClusterAddOn's conditions, which ``pyocm get addon`` shows per cluster. Like
clusteradm these commands write v1alpha1, with the install namespace in
``spec.installNamespace``.

Differences from clusteradm, so that bad input loses nothing: every cluster is checked
before anything is written; enabling an add-on that is already enabled merges the given
annotations into its own (clusteradm replaces them, dropping those its manager keeps);
disabling goes on past a cluster where the add-on is not enabled, names each such
cluster, and exits 1.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from pyocm.addon import helloworld
from pyocm.addon.builtin import is_helloworld
from pyocm.addon.helloworld.agent import (
    AgentOptions,
    HelloworldAgent,
    run_with_issued_credential,
)
from pyocm.api import catalog, conditions, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.cli.clusters import workloads_of
from pyocm.cli.common import (
    KUBECONFIG_HELP,
    connect,
    echo_list,
    fail,
    name_list,
    run,
    setup_logging,
    until_signal,
)
from pyocm.cli.watching import WATCH_HELP, Watched, WatchPrinter, list_and_watch
from pyocm.kube import kinds, names
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

_FOUND = catalog.find(group=wellknown.ADDON_GROUP, version="v1alpha1", kind="ManagedClusterAddOn")
#: What clusteradm reads and writes: the storage version.
MCA = Kind(_FOUND.group, _FOUND.version, _FOUND.kind, _FOUND.plural, _FOUND.namespaced)
OUTPUTS = ("table", "yaml", "json", "name")
SHOWN_CONDITIONS = ("Available", "ManifestApplied", "RegistrationApplied")
HEADERS = ("NAME", "CLUSTER", "NAMESPACE", *(c.upper() for c in SHOWN_CONDITIONS))
RESOURCE = f"managedclusteraddon.{wellknown.ADDON_GROUP}"

app = typer.Typer(help="Enable and disable add-ons on managed clusters.", no_args_is_help=True)


def _kubeconfig() -> Any:
    return typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP)


def _annotations(texts: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for text in texts:
        for part in (p for p in text.split(",") if p):
            key, sep, value = part.partition("=")
            problems = names.is_qualified_name(key)
            if not sep or problems:
                fail(f'--annotate "{part}": {"; ".join(problems) or "expected KEY=VALUE"}', code=2)
            found[key] = value
    return found


# --- enable ------------------------------------------------------------------------------


@app.command("enable")
def enable(
    addon_names: list[str] = typer.Option(
        ..., "--names", help="Add-ons to enable (comma-separated or repeated)."
    ),
    cluster_names: list[str] = typer.Option(
        ..., "--clusters", help="Managed clusters to enable them on (comma-separated or repeated)."
    ),
    namespace: str = typer.Option(
        wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE,
        "-n",
        "--namespace",
        help="Namespace on the cluster to install into.",
    ),
    annotate: list[str] = typer.Option(
        [], "--annotate", help="KEY=VALUE annotations for the ManagedClusterAddOns; repeatable."
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Enable add-ons on managed clusters: create each one's ManagedClusterAddOn."""
    addons = name_list(addon_names, what="an add-on name", flag="--names")
    clusters = name_list(cluster_names, what="a cluster name", flag="--clusters")
    if problems := names.is_dns1123_label(namespace):
        fail(f'--namespace "{namespace}" is invalid: {"; ".join(problems)}', code=2)
    if not addons or not clusters:
        fail("--names and --clusters each need at least one name", code=2)
    for line in run(_enable(kubeconfig, addons, clusters, namespace, _annotations(annotate))):
        typer.echo(line)


async def _enable(
    kubeconfig: Path | None,
    addons: list[str],
    clusters: list[str],
    namespace: str,
    annotations: dict[str, str],
) -> list[str]:
    async with connect(kubeconfig) as api:
        await _require_clusters(api, clusters)
        lines = []
        for addon in addons:
            for cluster in clusters:
                await _apply(api, addon, cluster, namespace, annotations)
                lines.append(
                    f"Deploying {addon} add-on to namespaces {namespace} of managed cluster:"
                    f" {cluster}."
                )
    return lines


async def _require_clusters(api: Api, clusters: list[str]) -> None:
    """Fail, before any write, naming every cluster that is not there or has no namespace
    on the hub yet (the hub makes it once the cluster is accepted)."""
    missing, unaccepted = [], []
    for cluster in clusters:
        if not await _exists(api, ocm.MANAGED_CLUSTER, cluster):
            missing.append(cluster)
        elif not await _exists(api, kinds.NAMESPACE, cluster):
            unaccepted.append(cluster)
    if missing:
        fail(f"managed cluster(s) not found: {', '.join(missing)}")
    if unaccepted:
        fail(
            f"no namespace on the hub yet for cluster(s) {', '.join(unaccepted)}:"
            " accept them first (pyocm accept --clusters ...)"
        )


async def _apply(
    api: Api, addon: str, cluster: str, namespace: str, annotations: dict[str, str]
) -> None:
    body: dict[str, Any] = {
        "apiVersion": MCA.api_version,
        "kind": MCA.kind,
        "metadata": {"name": addon, "namespace": cluster},
        "spec": {"installNamespace": namespace},
    }
    if annotations:
        body["metadata"]["annotations"] = annotations
    try:
        await api.create(MCA, body)
    except ApiError as err:
        if err.code != 409:
            raise
        patch = {"metadata": {"annotations": annotations}, "spec": body["spec"]}
        await api.patch(MCA, addon, patch, namespace=cluster)


async def _exists(api: Api, kind: Kind, name: str) -> bool:
    try:
        await api.get(kind, name)
    except ApiError as err:
        if err.code == 404:
            return False
        if err.code != 403:
            raise
    return True


# --- disable -----------------------------------------------------------------------------


@app.command("disable")
def disable(
    addon_names: list[str] = typer.Option(
        ..., "--names", help="Add-ons to disable (comma-separated or repeated)."
    ),
    cluster_names: list[str] = typer.Option(
        [], "--clusters", help="Managed clusters to disable them on (comma-separated or repeated)."
    ),
    all_clusters: bool = typer.Option(
        False, "--all-clusters", help="Every cluster the add-ons are enabled on."
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Disable add-ons on managed clusters: delete each one's ManagedClusterAddOn (its
    manager then removes what it deployed and granted)."""
    addons = name_list(addon_names, what="an add-on name", flag="--names")
    clusters = name_list(cluster_names, what="a cluster name", flag="--clusters")
    if not addons:
        fail("--names needs at least one add-on name", code=2)
    if bool(clusters) == all_clusters:
        fail("give either --clusters or --all-clusters", code=2)
    lines, absent = run(_disable(kubeconfig, addons, clusters, all_clusters=all_clusters))
    for line in lines:
        typer.echo(line)
    for addon, cluster in absent:
        typer.echo(f'error: add-on "{addon}" is not enabled on cluster "{cluster}"', err=True)
    if absent:
        raise typer.Exit(1)


async def _disable(
    kubeconfig: Path | None, addons: list[str], clusters: list[str], *, all_clusters: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    async with connect(kubeconfig) as api:
        if not all_clusters:
            await _require_clusters(api, clusters)
        lines: list[str] = []
        absent: list[tuple[str, str]] = []
        for addon in addons:
            targets = await _enabled_on(api, addon) if all_clusters else clusters
            for cluster in targets:
                try:
                    await api.delete(MCA, addon, namespace=cluster)
                except ApiError as err:
                    if err.code != 404:
                        raise
                    absent.append((addon, cluster))
                    continue
                lines.append(f"Undeploying {addon} add-on from managed cluster: {cluster}.")
    return lines, absent


async def _enabled_on(api: Api, addon: str) -> list[str]:
    listed = await api.list_all(MCA, fields=f"metadata.name={addon}")
    return sorted(
        str(shapes.mapping(item.get("metadata")).get("namespace", ""))
        for item in shapes.objects(listed.get("items"))
    )


# --- agent -------------------------------------------------------------------------------


@app.command("agent")
def agent(
    name: str = typer.Argument(..., help="The add-on whose agent to run: helloworld."),
    cluster_name: str = typer.Option(..., "--cluster-name", help="The managed cluster's name."),
    addon_namespace: str = typer.Option(
        helloworld.INSTALL_NAMESPACE, "--addon-namespace", help="The agent's install namespace."
    ),
    kubeconfig: Path = typer.Option(
        None,
        "--kubeconfig",
        help="The managed cluster's kubeconfig (default: $KUBECONFIG, else the pod's ServiceAccount).",
    ),
    hub_kubeconfig: Path = typer.Option(
        None,
        "--hub-kubeconfig",
        help="The hub kubeconfig the add-on's registration issued, as files (default: read"
        " the <addon>-hub-kubeconfig Secret on the managed cluster, and follow its rotation).",
    ),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run an add-on's agent as a process against a managed cluster, with the hub
    credential its registration issued (what the agent's Deployment runs)."""
    if not is_helloworld(name):  # helloworld, or a test copy of it under another name
        fail(f'unknown add-on agent "{name}" (pyocm has: {helloworld.ADDON_NAME})', code=2)
    setup_logging(log_level)
    options = AgentOptions(cluster=cluster_name, namespace=addon_namespace, addon=name)
    run(until_signal(_run_agent(kubeconfig, hub_kubeconfig, options)))


async def _run_agent(
    kubeconfig: Path | None, hub_kubeconfig: Path | None, options: AgentOptions
) -> None:
    async with connect(kubeconfig) as spoke:
        if hub_kubeconfig is None:
            await run_with_issued_credential(spoke, options)
            return
        async with Api.from_kubeconfig(hub_kubeconfig) as hub:
            await HelloworldAgent(hub=hub, spoke=spoke, options=options).run()


# --- get ---------------------------------------------------------------------------------


def get_addons(
    addon_names: list[str] = typer.Argument(None, help="Only these add-ons (default: all)."),
    cluster_names: list[str] = typer.Option(
        [], "--cluster", "--clusters", help="Only on these clusters (comma-separated or repeated)."
    ),
    output: str = typer.Option("table", "-o", "--output", help="table, yaml, json or name."),
    watch: bool = typer.Option(
        False,
        "-w",
        "--watch",
        help=WATCH_HELP + " Whether a cluster is simulated is read when the watch begins.",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """List enabled add-ons per cluster with their Available, ManifestApplied and
    RegistrationApplied conditions."""
    if output not in OUTPUTS:
        fail(f"--output must be one of {', '.join(OUTPUTS)}", code=2)
    addons = name_list(addon_names or [], what="an add-on name", flag="NAME")
    clusters = name_list(cluster_names, what="a cluster name", flag="--cluster")
    if watch:
        _watch(kubeconfig, set(addons), set(clusters), output=output)
        return
    items, simulated = run(_list(kubeconfig, set(addons), set(clusters)))
    if output == "table":
        _print_table(items, simulated)
    elif output == "name":
        for item in items:
            typer.echo(_name_line(item))
    else:
        echo_list(items, output=output)


def _name_line(item: dict[str, Any]) -> str:
    return f"{RESOURCE}/{_meta(item, 'name')} -n {_meta(item, 'namespace')}"


def _watch(kubeconfig: Path | None, addons: set[str], clusters: set[str], *, output: str) -> None:
    """``get addon -w``: the server selects by name or cluster when there is one of it."""
    simulated = run(_simulated(kubeconfig))
    watched = Watched(
        MCA,
        namespace=next(iter(clusters)) if len(clusters) == 1 else None,
        fields=f"metadata.name={next(iter(addons))}" if len(addons) == 1 else None,
        keep=lambda item: _selected(item, addons, clusters),
        order=lambda item: (_meta(item, "name"), _meta(item, "namespace")),
    )
    printer = WatchPrinter(
        output=output,
        kind=MCA,
        headers=HEADERS,
        rows=lambda items: addon_rows(items, simulated),
        name=_name_line,
    )
    list_and_watch(kubeconfig, watched, printer)


def _selected(item: dict[str, Any], addons: set[str], clusters: set[str]) -> bool:
    return (not addons or _meta(item, "name") in addons) and (
        not clusters or _meta(item, "namespace") in clusters
    )


async def _list(
    kubeconfig: Path | None, addons: set[str], clusters: set[str]
) -> tuple[list[dict[str, Any]], set[str]]:
    """The MCAs, and the clusters whose workload status is simulated."""
    async with connect(kubeconfig) as api:
        listed = await api.list_all(MCA)
        simulated = await _simulated_on(api)
    items = [
        item for item in shapes.objects(listed.get("items")) if _selected(item, addons, clusters)
    ]
    for item in items:  # as kubectl prints list items: with their kind
        item.setdefault("apiVersion", MCA.api_version)
        item.setdefault("kind", MCA.kind)
    items.sort(key=lambda item: (_meta(item, "name"), _meta(item, "namespace")))
    return items, simulated


async def _simulated(kubeconfig: Path | None) -> set[str]:
    async with connect(kubeconfig) as api:
        return await _simulated_on(api)


async def _simulated_on(api: Api) -> set[str]:
    """The clusters whose workload status is simulated (no kubelet)."""
    managed = await api.list_all(ocm.MANAGED_CLUSTER)
    return {
        _meta(cluster, "name")
        for cluster in shapes.objects(managed.get("items"))
        if workloads_of(shapes.mapping(cluster.get("status")).get("clusterClaims")) == "simulated"
    }


def _meta(item: dict[str, Any], field: str) -> str:
    return str(shapes.mapping(item.get("metadata")).get(field, ""))


def addon_rows(
    items: list[dict[str, Any]], simulated: Collection[str] = ()
) -> list[tuple[str, ...]]:
    """One row per ManagedClusterAddOn, in :data:`HEADERS`' order (read defensively).
    An add-on healthy from its workloads' status (health check ``Customized``) on a
    cluster in ``simulated`` (no kubelet: that status is made up) says so."""
    rows = []
    for item in items:
        status = shapes.mapping(item.get("status"))
        found = shapes.objects(status.get("conditions"))
        shown = []
        for kind in SHOWN_CONDITIONS:
            condition = conditions.find(found, kind)
            shown.append(str(condition.get("status", "")) if condition else "<none>")
        mode = shapes.mapping(status.get("healthCheck")).get("mode")
        if mode == "Customized" and _meta(item, "namespace") in simulated and shown[0] != "<none>":
            shown[0] += " (simulated)"
        namespace = status.get("namespace") or shapes.mapping(item.get("spec")).get(
            "installNamespace", ""
        )
        rows.append((_meta(item, "name"), _meta(item, "namespace"), str(namespace), *shown))
    return rows


def _print_table(items: list[dict[str, Any]], simulated: set[str]) -> None:
    if not items:
        typer.echo("No resources found", err=True)
        return
    table = Table(box=None, header_style="bold")
    for column in HEADERS:
        table.add_column(column)
    for row in addon_rows(items, simulated):
        table.add_row(*row)
    Console(width=200).print(table)
