"""The ``pyocm`` command (clusteradm's verbs, plus the hub itself)."""

from __future__ import annotations

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
    workagent,
    works,
)

app = typer.Typer(
    name="pyocm",
    help="Open Cluster Management in Python: a hub with its own Kubernetes API server.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("hub")(hub.hub)
app.command("up")(up.up)
app.command("controller")(controller.controller)
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


@app.callback()
def _root() -> None:
    """Open Cluster Management in Python."""


def main() -> None:
    app()
