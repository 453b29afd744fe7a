"""``pyocm bench``: benchmarks that print figures."""

from __future__ import annotations

import typer

from pyocm.bench import apiserver, registration
from pyocm.cli.common import run

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
) -> None:
    """GET and durable PUT rates against a bare aiohttp TLS baseline, and watch fan-out."""
    for line in run(apiserver.run(seconds=seconds, workers=clients, watchers=watchers)):
        typer.echo(line)
