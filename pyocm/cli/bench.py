"""``pyocm bench``: benchmarks that print figures."""

from __future__ import annotations

import shutil

import typer

from pyocm.bench import apiserver, fleet, placement, registration
from pyocm.cli.common import fail, raise_open_file_limit, run

app = typer.Typer(help="Benchmarks that print figures (see BENCHMARKS.md).", no_args_is_help=True)


@app.command("registration")
def bench_registration(
    clusters: int = typer.Option(
        10, "--clusters", min=1, help="Clusters to join, one after another."
    ),
) -> None:
    """Time from accept to Available, and from agent start to Joined with auto-approval."""
    for line in run(registration.run(clusters=clusters)):
        typer.echo(line)


@app.command("apiserver")
def bench_apiserver(
    seconds: float = typer.Option(5.0, "--seconds", help="How long each request-rate run lasts."),
    clients: int = typer.Option(16, "--clients", min=1, help="Concurrent request loops."),
    watchers: int = typer.Option(1000, "--watchers", min=1, help="Watches for the fan-out figure."),
    storage: str = typer.Option(
        "sqlite",
        "--storage",
        help="The hub's store: sqlite, etcd (a single-member etcd started for the run), or"
        " etcd://HOST:PORT[,...] (an existing etcd; keys stay under a prefix of the run's own).",
    ),
) -> None:
    """GET and durable PUT rates against a bare aiohttp TLS baseline, and watch fan-out."""
    if storage not in ("sqlite", "etcd") and not storage.startswith("etcd://"):
        fail("--storage is sqlite, etcd or etcd://HOST:PORT[,HOST:PORT...]")
    if storage == "etcd" and shutil.which("etcd") is None:
        fail("--storage etcd runs etcd, which is not installed (apt-get install etcd-server)")
    bench = apiserver.run(seconds=seconds, workers=clients, watchers=watchers, storage=storage)
    for line in run(bench):
        typer.echo(line)


@app.command("fleet")
def bench_fleet(
    scenario: str = typer.Option(
        "steady",
        "--scenario",
        help="steady, burst, heartbeat-churn, rotation-storm, works, addons or template (see"
        " pyocm/bench/fleet.py; in addons, the add-on agents are simulated; in template,"
        " the agent Deployment's status is).",
    ),
    clusters: int = typer.Option(200, "--clusters", min=1, help="Simulated clusters."),
    duration: float = typer.Option(
        60.0, "--duration", min=1, help="Seconds measured once every cluster is available."
    ),
    join_rate: float = typer.Option(
        0.0, "--join-rate", min=0, help="Agents started per second (0: the scenario's)."
    ),
    lease_duration: int = typer.Option(
        0, "--lease-duration", min=0, help="leaseDurationSeconds (0: the scenario's)."
    ),
    sim_processes: int = typer.Option(
        1,
        "--sim-processes",
        min=1,
        help="Simulator processes sharing the clusters (one drives a few thousand).",
    ),
    works_per_cluster: int = typer.Option(
        5, "--works-per-cluster", min=1, help="ManifestWorks per cluster (works scenario)."
    ),
    storage: str = typer.Option(
        "sqlite",
        "--storage",
        help="The hub's store: sqlite, or etcd (a 3-member etcd cluster started for the run).",
    ),
    replicas: int = typer.Option(
        1, "--replicas", min=1, help="Hub processes behind one port (needs --storage etcd)."
    ),
    agents: str = typer.Option(
        "all",
        "--agents",
        help="What each simulated cluster runs: all (registration, the work agent, the"
        " add-on side) or registration (alone: half the hub connections).",
    ),
) -> None:
    """A hub process, a simulated fleet, and what it costs the hub."""
    if storage == "etcd" and shutil.which("etcd") is None:
        fail("--storage etcd runs etcd, which is not installed (apt-get install etcd-server)")
    raise_open_file_limit()  # the simulator processes inherit it
    try:
        chosen = fleet.Scenario.named(
            scenario,
            clusters=clusters,
            duration=duration,
            join_rate=join_rate or None,
            lease_seconds=lease_duration or None,
            sim_processes=sim_processes,
            works_per_cluster=works_per_cluster,
            storage=storage,
            replicas=replicas,
            agents=agents,
        )
    except ValueError as err:
        fail(str(err), code=2)
    report = run(fleet.run(chosen, command=fleet.command_line()))
    for line in report.lines:
        typer.echo(line)


@app.command("placement")
def bench_placement(
    clusters: int = typer.Option(10_000, "--clusters", min=1, help="Agentless clusters."),
    placements: int = typer.Option(1_000, "--placements", min=1, help="Placements kept current."),
    changes: int = typer.Option(50, "--changes", min=1, help="Timed spec changes."),
    duration: float = typer.Option(
        60.0, "--duration", min=1, help="Seconds of cluster label churn measured."
    ),
    policy: str = typer.Option(
        placement.POLICIES[0],
        "--policy",
        help="Prioritizers of the placements kept current: steady-cpu (Steady and"
        " ResourceAllocatableCPU) or default (upstream's Balance and Steady).",
    ),
) -> None:
    """Placement scheduling latency and the hub CPU to keep placements current."""
    raise_open_file_limit()
    try:
        options = placement.Options(
            clusters=clusters,
            placements=placements,
            changes=changes,
            duration=duration,
            policy=policy,
        )
    except ValueError as err:
        fail(str(err), code=2)
    report = run(placement.run(options, command=fleet.command_line()))
    for line in report.lines:
        typer.echo(line)
