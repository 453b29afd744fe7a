"""The ``pyocm`` command (clusteradm's verbs, plus the hub itself)."""

from __future__ import annotations

import typer

from pyocm.cli import hub

app = typer.Typer(
    name="pyocm",
    help="Open Cluster Management in Python: a hub with its own Kubernetes API server.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("hub")(hub.hub)


@app.callback()
def _root() -> None:
    """Open Cluster Management in Python."""


def main() -> None:
    app()
