"""``pyocm accept``, ``pyocm deny`` and ``pyocm get clusters``: the hub admin's side of a join."""

from __future__ import annotations

import contextlib
import functools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.cli import progress
from pyocm.cli.common import (
    KUBECONFIG_HELP,
    connect,
    echo_objects,
    echo_table,
    fail,
    run,
)
from pyocm.cli.watching import WATCH_HELP, Watched, WatchPrinter, list_and_watch
from pyocm.kube import timefmt
from pyocm.local import workloads
from pyocm.registration.hub.accept import AcceptError, accept_cluster, find_cluster

#: ``pyocm get clusters``' columns; WORKLOADS says whether workload status on the cluster
#: is ``simulated`` (an embedded cluster: no kubelet) or ``real``.
COLUMNS = ("NAME", "ACCEPTED", "JOINED", "AVAILABLE", "AGE", "KUBERNETES", "CLAIMS", "WORKLOADS")
WIDE_COLUMNS = (*COLUMNS, "CLUSTERSET", "CPU", "MEMORY", "URL")
OUTPUTS = ("table", "wide", "yaml", "json", "name")


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        fail("--clusters needs at least one cluster name", code=2)
    return names


def accept(
    clusters: str = typer.Option(
        ..., "--clusters", help="Comma-separated names of the clusters to accept."
    ),
    wait: bool = typer.Option(
        False, "--wait", help="Wait (up to --timeout) for a cluster's join request to arrive."
    ),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds to wait with --wait."),
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
) -> None:
    """Approve the clusters' join requests and accept them (hubAcceptsClient: true)."""
    names = _names(clusters)
    run(_accept_all(kubeconfig, names, wait=wait, timeout=timeout))


async def _accept_all(
    kubeconfig: Path | None, names: list[str], *, wait: bool, timeout: float
) -> None:
    async with connect(kubeconfig) as api:
        for name in names:
            shown = (
                progress.waiting(f"cluster {name} to ask to join", limit=timeout)
                if wait
                else contextlib.nullcontext()
            )
            try:
                async with shown:
                    approved = await accept_cluster(
                        api,
                        name,
                        wait=wait,
                        timeout=timeout,
                        on_refusal=_refused,
                        on_request=functools.partial(_arrived, name, wait=wait),
                    )
            except AcceptError as err:
                fail(str(err))
            typer.echo(
                f"accepted {name}" + (f" (approved {', '.join(approved)})" if approved else "")
            )


def _arrived(name: str, csrs: list[str], *, wait: bool) -> None:
    """After a wait, that the cluster's request came (accepting can take seconds more)."""
    if wait and csrs:
        typer.echo(f"cluster {name} asked to join ({', '.join(csrs)}); accepting", err=True)


def _refused(reason: str) -> None:
    """A pending CSR accept leaves alone, and why (it names the CSR and its requester)."""
    typer.echo(f"not approved: {reason}", err=True)


def deny(
    clusters: str = typer.Option(
        ..., "--clusters", help="Comma-separated names of the clusters to deny."
    ),
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
) -> None:
    """Deny the clusters (hubAcceptsClient: false): their access is cut back at once."""
    run(_deny(kubeconfig, _names(clusters)))


async def _deny(kubeconfig: Path | None, names: list[str]) -> None:
    async with connect(kubeconfig) as api:
        for name in names:
            if await find_cluster(api, name) is None:
                fail(f"no managed cluster named {name}")
            await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"hubAcceptsClient": False}})
            typer.echo(f"denied {name}")


def get_clusters(
    output: str = typer.Option(
        "table", "-o", "--output", help="table, wide, yaml, json or name (as kubectl)."
    ),
    no_headers: bool = typer.Option(
        False, "--no-headers", help="Leave out the header line of table and wide."
    ),
    watch: bool = typer.Option(False, "-w", "--watch", help=WATCH_HELP),
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
) -> None:
    """List managed clusters: accepted, joined, available, age, Kubernetes version, claims,
    and whether their workloads are simulated; -o wide adds set, capacity and URL."""
    check_output(output, OUTPUTS)
    if watch:
        wide = output == "wide"
        printer = WatchPrinter(
            output=output,
            kind=ocm.MANAGED_CLUSTER,
            headers=WIDE_COLUMNS if wide else COLUMNS,
            rows=lambda items: (wide_rows if wide else cluster_rows)(
                [models.view(ManagedCluster, item) for item in items], now=datetime.now(UTC)
            ),
            no_headers=no_headers,
        )
        list_and_watch(kubeconfig, Watched(ocm.MANAGED_CLUSTER), printer)
        return
    listed = sorted(run(_list(kubeconfig)), key=lambda c: str(c["metadata"]["name"]))

    def table() -> None:
        now = datetime.now(UTC)
        if output == "wide":
            echo_table(WIDE_COLUMNS, wide_rows(listed, now=now), no_headers=no_headers)
        else:
            echo_table(COLUMNS, cluster_rows(listed, now=now), no_headers=no_headers)

    echo_objects(listed, output=output, kind=ocm.MANAGED_CLUSTER, table=table)


def check_output(output: str, allowed: tuple[str, ...]) -> None:
    """A usage error (exit 2, as kubectl's) for an output format the command lacks."""
    if output not in allowed:
        fail(f"--output must be one of {', '.join(allowed)}, not {output!r}", code=2)


async def _list(kubeconfig: Path | None) -> list[ManagedCluster]:
    async with connect(kubeconfig) as api:
        return list((await api.list_all(ocm.MANAGED_CLUSTER)).get("items") or [])


def wide_rows(clusters: list[ManagedCluster], *, now: datetime) -> list[tuple[str, ...]]:
    """:func:`cluster_rows` with what clusteradm's table adds (the cluster's set, its CPU
    and memory capacity) and the URL its agent reports for its API server."""
    by_name = {str(c["metadata"]["name"]): c for c in clusters}
    rows = []
    for row in cluster_rows(clusters, now=now):
        cluster = by_name[row[0]]
        labels = shapes.mapping(cluster["metadata"].get("labels"))
        capacity = shapes.mapping(shapes.mapping(cluster.get("status")).get("capacity"))
        configs = shapes.objects(
            shapes.mapping(cluster.get("spec")).get("managedClusterClientConfigs")
        )
        rows.append(
            (
                *row,
                str(labels.get(wellknown.CLUSTER_SET_LABEL, "")),
                str(capacity.get("cpu", "")),
                str(capacity.get("memory", "")),
                str(configs[0].get("url", "")) if configs else "",
            )
        )
    return rows


def cluster_rows(clusters: list[ManagedCluster], *, now: datetime) -> list[tuple[str, ...]]:
    """A table row for each of ``clusters`` (as listed: read defensively)."""
    rows: list[tuple[str, ...]] = []
    for cluster in sorted(clusters, key=lambda c: str(c["metadata"]["name"])):
        status = shapes.mapping(cluster.get("status"))
        found = status.get("conditions") or []
        rows.append(
            (
                str(cluster["metadata"]["name"]),
                str(bool(shapes.mapping(cluster.get("spec")).get("hubAcceptsClient"))).lower(),
                _state(found, wellknown.CLUSTER_JOINED),
                _state(found, wellknown.CLUSTER_AVAILABLE),
                age(cluster["metadata"].get("creationTimestamp"), now=now),
                str(shapes.mapping(status.get("version")).get("kubernetes", "")),
                str(len(status.get("clusterClaims") or [])),
                workloads_of(status.get("clusterClaims")),
            )
        )
    return rows


def workloads_of(claims: object) -> str:
    """The value of the cluster's ``workloads.pyocm.io`` claim (``simulated`` on embedded
    clusters), ``real`` when it reports claims without that one (its own kubelet and
    controllers report workload status), and empty before it reports any."""
    if not isinstance(claims, list) or not claims:
        return ""
    for claim in shapes.objects(claims):
        if claim.get("name") == workloads.CLAIM_NAME:
            return str(claim.get("value", ""))
    return "real"


def _state(found: list[dict[str, Any]], type: str) -> str:
    condition = conditions.find(found, type)
    return str(condition.get("status")) if condition else ""


def age(created: str | None, *, now: datetime) -> str:
    """kubectl's short ages: 45s, 12m, 3h, 5d."""
    if not created:
        return ""
    seconds = max(0, int((now - timefmt.parse_time(created)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit != "m" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
