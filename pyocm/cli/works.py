"""``pyocm create work``, ``pyocm get works`` and ``pyocm delete work``, shaped like
clusteradm's commands of those names.

A ManifestWork lives in its cluster's namespace on the hub; the work agent of that
cluster applies its manifests and reports back in its status. These commands write and
read those objects only. Creating a work needs ``create`` on ``manifestworks`` in each
cluster namespace (no default role grants it: the hub admin binds one).

One difference from clusteradm: a work (or replica set) that exists already is an error
and the command exits 1, as ``kubectl create`` does (clusteradm prints "already exists"
and exits 0, so a script cannot tell that its manifests were not applied); --overwrite
replaces its manifests, as clusteradm's does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.api.models.work_v1alpha1 import ManifestWorkReplicaSet
from pyocm.cli import manifestfiles
from pyocm.cli.clusters import age
from pyocm.cli.common import KUBECONFIG_HELP, connect, echo_list, fail, run
from pyocm.cli.watching import WATCH_HELP, Watched, WatchPrinter, list_and_watch
from pyocm.kube import kinds, names
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

RESOURCE = f"manifestwork.{wellknown.WORK_GROUP}"
#: Conditions shown always, then those shown when some listed work has them.
ALWAYS = (wellknown.WORK_APPLIED, wellknown.WORK_AVAILABLE)
IF_PRESENT = (wellknown.WORK_PROGRESSING, wellknown.WORK_DEGRADED)
OUTPUTS = ("table", "yaml", "json", "name")


def _kubeconfig() -> Any:
    return typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP)


def _cluster_names(text: str, *, flag: str) -> list[str]:
    found = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not found:
        fail(f"{flag} needs at least one cluster name", code=2)
    for name in found:
        if problems := names.is_dns1123_label(name):
            fail(f'{flag}: "{name}" is not a cluster name: {"; ".join(problems)}', code=2)
    return found


def _work_name(name: str) -> str:
    if problems := names.is_dns1123_subdomain(name):
        fail(f'work name "{name}" is invalid: {"; ".join(problems)}', code=2)
    return name


# --- create ----------------------------------------------------------------------------


def create_work(
    name: str = typer.Argument(..., help="The work's name."),
    filename: list[str] = typer.Option(
        ...,
        "-f",
        "--filename",
        help="A file or directory of Kubernetes manifests (YAML or JSON), or - for stdin; repeatable.",
    ),
    clusters: str = typer.Option(
        None, "--clusters", help="Comma-separated names of the clusters to put the work on."
    ),
    placement: str = typer.Option(
        None,
        "--placement",
        help="An existing placement, <namespace>/<name> or a name with -n (needs --replicaset).",
    ),
    namespace: str = typer.Option(
        None, "-n", "--namespace", help="The placement's namespace, for --placement <name>."
    ),
    replicaset: bool = typer.Option(
        False,
        "-r",
        "--replicaset",
        help="Create a ManifestWorkReplicaSet: the hub (gate ManifestWorkReplicaSet on) puts "
        "the work on each cluster the placement selects.",
    ),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace the manifests of a work that exists already (without it, that is an error).",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Create a ManifestWork holding the manifests of the -f files in each cluster's
    namespace, or with --replicaset a ManifestWorkReplicaSet for a placement's clusters."""
    _work_name(name)
    if not clusters and not placement:
        fail("--clusters or --placement must be specified", code=2)
    if clusters and placement:
        fail("--clusters and --placement can only specify one", code=2)
    if replicaset and not placement:
        fail("--placement must be specified when enable --replicaset", code=2)
    if placement and not replicaset:
        # clusteradm's other mode (plain works on the decided clusters) is not built.
        fail(
            "--placement needs --replicaset: pyocm puts a work on a placement's clusters "
            "through a ManifestWorkReplicaSet",
            code=2,
        )
    try:
        manifests = [m.obj for m in manifestfiles.read(filename)]
    except manifestfiles.ManifestFileError as err:
        fail(str(err))
    if placement:
        where = _placement_ref(placement, namespace)
        outcomes = [run(_create_set(kubeconfig, name, where, manifests, overwrite=overwrite))]
    else:
        targets = _cluster_names(clusters, flag="--clusters")
        outcomes = run(_create(kubeconfig, name, targets, manifests, overwrite=overwrite))
    # As kubectl create: each object that exists already is an error and the command
    # fails, while the others are still created.
    for ok, line in outcomes:
        typer.echo(line if ok else f"error: {line}", err=not ok)
    if not all(ok for ok, _ in outcomes):
        raise typer.Exit(1)


def _placement_ref(text: str, namespace: str | None) -> tuple[str, str]:
    """``(namespace, name)`` from ``<namespace>/<name>`` or a name and ``-n``."""
    parts = text.split("/")
    if len(parts) > 2:
        fail(
            f"the name of the placement {text} must be in the format of <namespace>/<name>", code=2
        )
    if len(parts) == 2:
        if namespace and namespace != parts[0]:
            fail(f'--placement {text} is in namespace "{parts[0]}", not "{namespace}"', code=2)
        namespace, name = parts
    elif not namespace:
        fail(f"--placement {text} needs a namespace: <namespace>/<name>, or -n", code=2)
    else:
        name = text
    for value, what in ((namespace, "namespace"), (name, "placement name")):
        if problems := names.is_dns1123_subdomain(value):
            fail(f'{what} "{value}" is invalid: {"; ".join(problems)}', code=2)
    return namespace, name


async def _create_set(
    kubeconfig: Path | None,
    name: str,
    where: tuple[str, str],
    manifests: list[dict[str, Any]],
    *,
    overwrite: bool,
) -> tuple[bool, str]:
    """Create (or with ``overwrite`` update) the ManifestWorkReplicaSet ``name`` in the
    placement's namespace, as clusteradm: only the manifests and the placement reference
    are set, the rest of an existing set is kept. Whether it went well, and what was done."""
    namespace, placement = where
    async with connect(kubeconfig) as api:
        try:
            await api.get(ocm.PLACEMENT, placement, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                fail(f'placement "{placement}" not found in namespace "{namespace}"')
            raise
        try:
            current = await api.get(ocm.MANIFEST_WORK_REPLICA_SET, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            current = None
        exists = (
            f"manifestworkreplicaset {name} in namespace {namespace} already exists "
            "(use --overwrite to replace its manifests)"
        )
        if current is None:
            created = await _created(
                api,
                ocm.MANIFEST_WORK_REPLICA_SET,
                {
                    "apiVersion": ocm.MANIFEST_WORK_REPLICA_SET.api_version,
                    "kind": "ManifestWorkReplicaSet",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {
                        "manifestWorkTemplate": {"workload": {"manifests": manifests}},
                        "placementRefs": [{"name": placement}],
                    },
                },
            )
            if created:
                return True, f"create manifestworkreplicaset {name} in namespace {namespace}"
            return False, exists
        if not overwrite:
            return False, exists
        updated = models.view(ManifestWorkReplicaSet, current)
        template = updated["spec"].setdefault("manifestWorkTemplate", {})
        template.setdefault("workload", {})["manifests"] = manifests  # type: ignore[typeddict-item]
        updated["spec"]["placementRefs"] = [{"name": placement}]
        await api.update(ocm.MANIFEST_WORK_REPLICA_SET, models.wire(updated))
        return True, f"update manifestworkreplicaset {name} in namespace {namespace}"


async def _create(
    kubeconfig: Path | None,
    name: str,
    clusters: list[str],
    manifests: list[dict[str, Any]],
    *,
    overwrite: bool,
) -> list[tuple[bool, str]]:
    async with connect(kubeconfig) as api:
        for cluster in clusters:  # every cluster first: nothing is written for a bad list
            await _check_cluster(api, cluster)
        lines = []
        for cluster in clusters:
            lines.append(await _put(api, name, cluster, manifests, overwrite=overwrite))
        return lines


async def _check_cluster(api: Api, cluster: str) -> None:
    """The cluster is registered and has its namespace; a 403 leaves the hub to decide."""
    for kind, name, missing in (
        (ocm.MANAGED_CLUSTER, cluster, f"no managed cluster named {cluster}"),
        (
            kinds.NAMESPACE,
            cluster,
            f'managed cluster {cluster} has no namespace "{cluster}" yet: '
            f"accept it first (pyocm accept --clusters {cluster})",
        ),
    ):
        try:
            await api.get(kind, name)
        except ApiError as err:
            if err.code == 404:
                fail(missing)
            if err.code != 403:
                raise


async def _put(
    api: Api, name: str, cluster: str, manifests: list[dict[str, Any]], *, overwrite: bool
) -> tuple[bool, str]:
    """Create the work in ``cluster``, or with ``overwrite`` replace the manifests of the
    one there. Whether it went well, and what was done."""
    exists = f"work {name} in cluster {cluster} already exists (use --overwrite to replace its manifests)"
    try:
        current = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
    except ApiError as err:
        if err.code != 404:
            raise
        work: ManifestWork = {
            "apiVersion": ocm.MANIFEST_WORK.api_version,
            "kind": "ManifestWork",
            "metadata": {"name": name, "namespace": cluster},
            "spec": {"workload": {"manifests": manifests}},
        }
        if await _created(api, ocm.MANIFEST_WORK, models.wire(work)):
            return True, f"create work {name} in cluster {cluster}"
        return False, exists
    if not overwrite:
        return False, exists
    # As clusteradm: only the manifests are replaced; the rest of the spec is kept.
    updated = models.view(ManifestWork, current)
    updated.setdefault("spec", {}).setdefault("workload", {})["manifests"] = manifests
    await api.update(ocm.MANIFEST_WORK, models.wire(updated))
    return True, f"update work {name} in cluster {cluster}"


async def _created(api: Api, kind: Any, body: dict[str, Any]) -> bool:
    """Create ``body``; False when the hub says it exists (made since it was looked up)."""
    try:
        await api.create(kind, body)
    except ApiError as err:
        if err.code == 409:
            return False
        raise
    return True


# --- get ---------------------------------------------------------------------------------


def get_works(
    name: str = typer.Argument(None, help="Only the works of this name."),
    cluster: str = typer.Option(
        None,
        "--cluster",
        "--clusters",
        help="Comma-separated cluster names (default: every cluster).",
    ),
    output: str = typer.Option("table", "-o", "--output", help="table, yaml, json or name."),
    watch: bool = typer.Option(
        False,
        "-w",
        "--watch",
        help=WATCH_HELP + " The Progressing and Degraded columns are always shown then.",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """List ManifestWorks: cluster, manifests, and the Applied and Available conditions."""
    if output not in OUTPUTS:
        fail(f"--output must be one of {', '.join(OUTPUTS)}", code=2)
    clusters = _cluster_names(cluster, flag="--cluster") if cluster is not None else None
    if watch:
        _watch(kubeconfig, clusters, name, output=output)
        return
    works = run(_list(kubeconfig, clusters, name))
    if name and not works:
        _none_named(name, clusters)
    if output == "table":
        _print_table(works)
    elif output == "name":
        for work in works:
            typer.echo(f"{RESOURCE}/{work['metadata']['name']}")
    else:
        echo_list(works, output=output)


def _none_named(name: str, clusters: list[str] | None) -> None:
    where = f"cluster {', '.join(clusters)}" if clusters else "any cluster"
    fail(f"no work named {name} in {where}")


def _watch(
    kubeconfig: Path | None, clusters: list[str] | None, name: str | None, *, output: str
) -> None:
    """``get works -w``: every condition has its column, since none can join the header
    later; the server selects by cluster when there is one."""
    if clusters:
        run(_check_clusters(kubeconfig, clusters))
    wanted = set(clusters or ())
    watched = Watched(
        ocm.MANIFEST_WORK,
        namespace=clusters[0] if clusters and len(clusters) == 1 else None,
        fields=f"metadata.name={name}" if name else None,
        keep=lambda work: not wanted or str(work["metadata"].get("namespace")) in wanted,
    )
    shown = [*ALWAYS, *IF_PRESENT]
    printer = WatchPrinter(
        output=output,
        kind=ocm.MANIFEST_WORK,
        headers=_headers(shown),
        rows=lambda works: _rows(works, shown, now=datetime.now(UTC)),
        name=lambda work: f"{RESOURCE}/{work['metadata']['name']}",
        empty=(lambda: _none_named(name, clusters)) if name else None,
    )
    list_and_watch(kubeconfig, watched, printer)


async def _check_clusters(kubeconfig: Path | None, clusters: list[str]) -> None:
    async with connect(kubeconfig) as api:
        for cluster in clusters:
            await _require_cluster(api, cluster)


async def _require_cluster(api: Api, cluster: str) -> None:
    try:
        await api.get(ocm.MANAGED_CLUSTER, cluster)
    except ApiError as err:
        if err.code == 404:
            fail(f"no managed cluster named {cluster}")
        raise


async def _list(
    kubeconfig: Path | None, clusters: list[str] | None, name: str | None
) -> list[dict[str, Any]]:
    fields = f"metadata.name={name}" if name else None
    async with connect(kubeconfig) as api:
        if clusters is None:
            items = (await api.list_all(ocm.MANIFEST_WORK, fields=fields)).get("items") or []
        else:
            items = []
            for cluster in clusters:
                await _require_cluster(api, cluster)
                listed = await api.list_all(ocm.MANIFEST_WORK, namespace=cluster, fields=fields)
                items.extend(listed.get("items") or [])
    for item in items:  # as kubectl prints list items: with their kind
        item.setdefault("apiVersion", ocm.MANIFEST_WORK.api_version)
        item.setdefault("kind", "ManifestWork")
    return sorted(
        items, key=lambda w: (str(w["metadata"].get("namespace")), str(w["metadata"]["name"]))
    )


def _print_table(works: list[dict[str, Any]]) -> None:
    if not works:
        typer.echo("No resources found", err=True)
        return
    headers, rows = work_rows(works, now=datetime.now(UTC))
    table = Table(box=None, header_style="bold")
    for column in headers:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)


def work_rows(
    works: Iterable[dict[str, Any]], *, now: datetime
) -> tuple[list[str], list[tuple[str, ...]]]:
    """The table of ``works`` (as listed: read defensively): columns and rows.

    Progressing and Degraded get a column only when some work reports them.
    """
    listed = list(works)
    found = [_conditions(work) for work in listed]
    shown = [*ALWAYS, *(t for t in IF_PRESENT if any(conditions.find(c, t) for c in found))]
    return _headers(shown), _rows(listed, shown, now=now)


def _headers(shown: list[str]) -> list[str]:
    return ["NAME", "CLUSTER", "MANIFESTS", *(t.upper() for t in shown), "AGE"]


def _conditions(work: dict[str, Any]) -> list[dict[str, Any]]:
    return shapes.objects(shapes.mapping(work.get("status")).get("conditions"))


def _rows(works: list[dict[str, Any]], shown: list[str], *, now: datetime) -> list[tuple[str, ...]]:
    """A row per work, with a column for each condition type in ``shown``."""
    rows = []
    for work in works:
        present = _conditions(work)
        meta = shapes.mapping(work.get("metadata"))
        workload = shapes.mapping(shapes.mapping(work.get("spec")).get("workload"))
        rows.append(
            (
                str(meta.get("name", "")),
                str(meta.get("namespace", "")),
                str(len(shapes.objects(workload.get("manifests")))),
                *(_state(present, t) for t in shown),
                age(meta.get("creationTimestamp"), now=now),
            )
        )
    return rows


def _state(found: list[dict[str, Any]], type: str) -> str:
    condition = conditions.find(found, type)
    return str(condition.get("status")) if condition else ""


# --- delete ------------------------------------------------------------------------------


def delete_work(
    name: str = typer.Argument(..., help="The work's name."),
    clusters: str = typer.Option(
        ..., "--clusters", "--cluster", help="Comma-separated names of the clusters."
    ),
    timeout: float = typer.Option(
        10.0,
        "--timeout",
        min=0.0,
        help="Seconds to wait for each work to go (its agent cleans up first); 0: do not wait.",
    ),
    kubeconfig: Path = _kubeconfig(),
) -> None:
    """Delete the ManifestWork from each cluster; the work agent removes what it applied."""
    _work_name(name)
    targets = _cluster_names(clusters, flag="--clusters")
    outcomes = run(_delete_all(kubeconfig, name, targets, timeout=timeout))
    for ok, line in outcomes:
        typer.echo(line if ok else f"error: {line}", err=not ok)
    if not all(ok for ok, _ in outcomes):
        raise typer.Exit(1)


async def _delete_all(
    kubeconfig: Path | None, name: str, clusters: list[str], *, timeout: float
) -> list[tuple[bool, str]]:
    async with connect(kubeconfig) as api:
        return [await _delete(api, name, cluster, timeout=timeout) for cluster in clusters]


async def _delete(api: Api, name: str, cluster: str, *, timeout: float) -> tuple[bool, str]:
    try:
        work = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
        uid = str(work["metadata"]["uid"])
        await api.delete(ocm.MANIFEST_WORK, name, namespace=cluster, uid=uid)
    except ApiError as err:
        if err.code == 404:
            return False, f"work {name} not found in cluster {cluster}"
        raise
    if timeout == 0:
        return True, f"work {name} in cluster {cluster} is being deleted"
    left = await _wait_gone(api, name, cluster, uid, timeout=timeout)
    if left is None:
        return True, f"work {name} in cluster {cluster} is deleted"
    return False, (
        f"work {name} in cluster {cluster} is still being deleted after {timeout:g}s: "
        f"waiting for its finalizers {', '.join(left) or '(none)'}; the cluster's work agent "
        "removes them once it has removed what the work applied"
    )


async def _wait_gone(
    api: Api, name: str, cluster: str, uid: str, *, timeout: float
) -> list[str] | None:
    """None once the work of ``uid`` is gone, else its finalizers when ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            work = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if work["metadata"].get("uid") != uid:
            return None  # gone, and a namesake made since
        if time.monotonic() >= deadline:
            return [str(f) for f in work["metadata"].get("finalizers") or []]
        await asyncio.sleep(0.2)
