"""The ``pyocm`` command (clusteradm's verbs, plus the hub itself)."""

from __future__ import annotations

from importlib.metadata import version as package_version

import typer

from pyocm.cli import (
    addons,
    agent,
    bench,
    clusters,
    clustersets,
    controller,
    hub,
    placements,
    sim,
    token,
    unjoin,
    up,
    webhook,
    workagent,
    works,
)
from pyocm.cli.plainhelp import PlainHelpGroup

app = typer.Typer(
    name="pyocm",
    help="Open Cluster Management in Python: a hub with its own Kubernetes API server.",
    no_args_is_help=True,
    # Help names values, not Python types (plainhelp), laid out as click does rather than
    # in Rich panels, which cut long option names short in an 80-column terminal.
    cls=PlainHelpGroup,
    rich_markup_mode=None,
    # -h as kubectl and clusteradm take it; child commands inherit the names.
    context_settings={"help_option_names": ["--help", "-h"], "max_content_width": 120},
    # Shell completion (--install-completion, --show-completion) is typer's default.
)
app.command("hub")(hub.hub)
app.command("up")(up.up)
app.command("controller")(controller.controller)
app.command("webhook")(webhook.webhook)
app.command("agent")(agent.agent)
app.command("join")(agent.join)
app.command("work-agent")(workagent.work_agent)
app.command("unjoin")(unjoin.unjoin)
app.command("accept")(clusters.accept)
app.command("deny")(clusters.deny)
app.command("sim")(sim.sim)

app.add_typer(clustersets.app, name="clusterset")
app.add_typer(addons.app, name="addon")

get = typer.Typer(
    help="Show hub objects: token, clusters, clustersets, works, placements, addon.",
    no_args_is_help=True,
)
get.command("token")(token.get_token)
get.command("clusters")(clusters.get_clusters)
get.command("clustersets")(clustersets.get_clustersets)
get.command("works")(works.get_works)
get.command("placements")(placements.get_placements)
get.command("addon")(addons.get_addons)
app.add_typer(get, name="get")

create = typer.Typer(help="Create hub objects: clusterset, work, placement.", no_args_is_help=True)
create.command("clusterset")(clustersets.create_clusterset)
create.command("work")(works.create_work)
create.command("placement")(placements.create_placement)
app.add_typer(create, name="create")

delete = typer.Typer(help="Delete hub objects: clusterset, work, placement.", no_args_is_help=True)
delete.command("clusterset")(clustersets.delete_clusterset)
delete.command("work")(works.delete_work)
delete.command("placement")(placements.delete_placement)
app.add_typer(delete, name="delete")
app.add_typer(bench.app, name="bench")


def _version() -> str:
    return f"pyocm {package_version('pyocm')}"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(_version())
        raise typer.Exit()


@app.callback()
def _root(
    _show_version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print pyocm's version and exit.",
    ),
) -> None:
    """Open Cluster Management in Python."""


@app.command("version")
def version() -> None:
    """Print pyocm's version (as --version)."""
    typer.echo(_version())


def main() -> None:
    # The program's own name, also under `python -m pyocm`: usage lines and the shell
    # completion script (its _PYOCM_COMPLETE variable) are named after it.
    app(prog_name="pyocm")
