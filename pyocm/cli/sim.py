"""``pyocm sim``: a fleet of simulated managed clusters against a running hub."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import typer

from pyocm.bench.stats import percentile
from pyocm.cli.common import (
    KUBECONFIG_HELP,
    connect,
    fail,
    kubeconfig_path,
    raise_open_file_limit,
    run,
    setup_logging,
    until_signal,
)
from pyocm.pki.kubeconfig import load_kubeconfig
from pyocm.sim.fleet import Fleet, FleetOptions

PROGRESS_EVERY = 5.0


def sim(
    clusters: int = typer.Option(..., "--clusters", help="How many clusters to simulate."),
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
    auto_accept: bool = typer.Option(
        False, "--auto-accept", help="Accept each cluster as soon as its agent asks to join."
    ),
    join_rate: float = typer.Option(20.0, "--join-rate", help="Agents started per second."),
    lease_duration: int = typer.Option(
        60, "--lease-duration", help="leaseDurationSeconds given to clusters accepted here."
    ),
    healthcheck_period: float = typer.Option(
        60.0, "--healthcheck-period", help="Seconds between an agent's status reports."
    ),
    churn: float = typer.Option(
        0.0, "--churn", help="Clusters per minute that go away and come back."
    ),
    churn_downtime: float = typer.Option(
        30.0, "--churn-downtime", help="Seconds a churned cluster stays away."
    ),
    prefix: str = typer.Option("sim-", "--prefix", help="Cluster names are PREFIX1, PREFIX2, ..."),
    log_level: str = typer.Option("WARNING", "--log-level"),
) -> None:
    """Run CLUSTERS simulated managed clusters, each a real agent, until Ctrl-C."""
    setup_logging(log_level)
    raise_open_file_limit()
    try:
        options = FleetOptions(
            clusters=clusters,
            prefix=prefix,
            join_rate=join_rate,
            auto_accept=auto_accept,
            lease_seconds=lease_duration,
            healthcheck_period=healthcheck_period,
            churn=churn,
            churn_downtime=churn_downtime,
        )
    except ValueError as err:
        fail(str(err), code=2)
    run(_sim(kubeconfig, options))


async def _sim(kubeconfig: Path | None, options: FleetOptions) -> None:
    info = load_kubeconfig(kubeconfig_path(kubeconfig))
    async with connect(kubeconfig) as admin:
        fleet = Fleet(admin, server=info.server, ca_pem=info.ca_pem, options=options)
        typer.echo(
            f"simulating {options.clusters} clusters against {info.server}"
            + (" (accepting them as they join)" if options.auto_accept else "")
        )
        typer.echo(
            "workload status and add-on agents are simulated: an add-on agent renews its"
            " add-on's Lease once its Secret is written, and never connects to the hub"
        )
        announced: list[str] = []
        reporter = asyncio.create_task(_report(fleet, announced))
        try:
            await until_signal(fleet.run())
        finally:
            reporter.cancel()
            await asyncio.gather(reporter, return_exceptions=True)
        typer.echo(_stopped(_summary(fleet), announced))


def _stopped(summary: str, announced: list[str]) -> str:
    """The last line: the join figures unless they are the ones already announced with
    "all N clusters are available" (printing them again read as a second announcement)."""
    if announced and announced[-1] == summary:
        return "pyocm sim stopped"
    return f"pyocm sim stopped; {summary}"


async def _report(fleet: Fleet, announced: list[str]) -> None:
    """Progress every few seconds; once every cluster is available, say so with the join
    figures (recorded in ``announced``)."""
    start = time.monotonic()
    while True:
        await asyncio.sleep(PROGRESS_EVERY)
        counts = fleet.counts()
        shown = ", ".join(f"{n} {state}" for state, n in counts.most_common())
        typer.echo(f"{time.monotonic() - start:5.0f}s  {shown}")
        if not announced and counts.get("available") == len(fleet.members):
            announced.append(_summary(fleet))
            typer.echo(f"all {len(fleet.members)} clusters are available; {announced[-1]}")


def _summary(fleet: Fleet) -> str:
    seconds = fleet.join_seconds()
    if not seconds:
        return "no cluster became available"
    p99 = percentile(seconds, 0.99)
    return (
        f"start to available: n={len(seconds)} p50={statistics.median(seconds):.2f}s "
        f"p99={p99:.2f}s max={seconds[-1]:.2f}s"
    )
