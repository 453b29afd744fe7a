"""``pyocm bench``: benchmarks that print figures."""

from __future__ import annotations

import typer

from pyocm.bench import registration
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
