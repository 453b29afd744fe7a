"""``pyocm up``: a hub and a fleet of embedded managed clusters in one process.

Everything a real fleet does happens here over loopback TLS: each cluster's agent joins
with a bootstrap token and a CSR, the hub accepts it, and the agents report status and
renew leases until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pyocm import hubmanager
from pyocm.api import kinds as ocm
from pyocm.apiserver.config import ServerConfig, parse_listen
from pyocm.apiserver.server import HubServer
from pyocm.cli.clusters import COLUMNS, cluster_rows
from pyocm.cli.common import (
    fail,
    fix_mmap_threshold,
    raise_open_file_limit,
    run,
    setup_logging,
    until_signal,
)
from pyocm.cli.hub import parse_addons
from pyocm.cli.reach import pyocm_command
from pyocm.klusterlet.agent import Klusterlet
from pyocm.kube import kinds
from pyocm.local import crdinstall
from pyocm.local.addonagents import AddonAgentRunner
from pyocm.local.embedded import EmbeddedCluster
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.managed import KubeManagedSide
from pyocm.registration.hub.accept import accept_cluster
from pyocm.registration.hub.manager import HubOptions
from pyocm.runtime.client import Api


def default_up_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pyocm" / "up"


def up(
    clusters: int = typer.Option(
        3, "--clusters", min=0, max=200, help="How many embedded managed clusters to start."
    ),
    data_dir: Path = typer.Option(
        None,
        "--data-dir",
        help="Where hub and clusters keep their data (default: $XDG_DATA_HOME/pyocm/up, else ~/.local/share/pyocm/up).",
    ),
    listen: str = typer.Option(
        "127.0.0.1:6443", "--listen", help="The hub's HOST:PORT; port 0 picks a free one."
    ),
    addons: str = typer.Option(
        "helloworld",
        "--addons",
        help="Comma-separated add-ons pyocm implements to run on the hub ('' for none).",
    ),
    log_level: str = typer.Option("WARNING", "--log-level"),
) -> None:
    """Start a hub and CLUSTERS managed clusters, join and accept them, and keep them running."""
    setup_logging(log_level)
    raise_open_file_limit()
    fix_mmap_threshold()
    try:
        host, port = parse_listen(listen)
        addon_names = parse_addons(addons)
    except ValueError as err:
        fail(str(err), code=2)
    root = (data_dir or default_up_dir()).expanduser().resolve()
    run(until_signal(_up(root, host, port, clusters, HubOptions(addons=addon_names))))
    typer.echo("pyocm up stopped")


async def _up(root: Path, host: str, port: int, count: int, options: HubOptions) -> None:
    server = HubServer(ServerConfig(data_dir=root / "hub", host=host, port=port))
    await server.start()
    fleet: list[EmbeddedCluster] = []
    tasks: list[asyncio.Task[object]] = []
    api = Api.from_kubeconfig(server.config.admin_kubeconfig)
    try:
        await crdinstall.install(api, crdinstall.ocm_crds())
        tasks.append(asyncio.create_task(hubmanager.build(api, options=options).run()))
        typer.echo(f"hub listening on {server.url}")
        typer.echo(f"admin kubeconfig: {server.config.admin_kubeconfig}")
        token = bootstraptoken.generate()
        await api.create(kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC)))
        bootstrap = build_kubeconfig(server=server.url, ca_pem=_ca(server), token=str(token))
        names = [f"cluster{index}" for index in range(1, count + 1)]
        for name in names:
            cluster = EmbeddedCluster(name=name, data_dir=root / "clusters" / name)
            await cluster.start()
            fleet.append(cluster)
            agent = RegistrationAgent(
                bootstrap=bootstrap,
                managed=KubeManagedSide(cluster.api),
                options=AgentOptions(cluster_name=name),
                on_state=_reporter(name),
            )
            # The klusterlet: registration, then the work agent with its credential.
            tasks.append(asyncio.create_task(Klusterlet.for_cluster(agent, cluster.api).run()))
            # No kubelet runs its Deployments; pyocm's own add-on agents are run here.
            tasks.append(asyncio.create_task(AddonAgentRunner(cluster.api).run()))
        for name in names:
            await accept_cluster(api, name, wait=True, timeout=60)
        await _wait_available(api, names)
        _show(list((await api.list_all(ocm.MANAGED_CLUSTER)).get("items") or []))
        typer.echo("")
        typer.echo("Try:")
        typer.echo(f"  export KUBECONFIG={server.config.admin_kubeconfig}")
        typer.echo("  kubectl get managedclusters")
        typer.echo(f"  {pyocm_command()} get clusters")
        typer.echo("Press Ctrl-C to stop.")
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await api.close()
        for cluster in fleet:
            await cluster.stop()
        await server.stop()


async def _wait_available(api: Api, names: list[str], *, timeout: float = 120.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        listed = (await api.list_all(ocm.MANAGED_CLUSTER)).get("items") or []
        rows = {row[0]: row for row in cluster_rows(listed, now=datetime.now(UTC))}
        if all(rows.get(name, ("",) * 4)[3] == "True" for name in names):
            typer.echo(f"all {len(names)} clusters are available")
            return
        if asyncio.get_running_loop().time() > deadline:
            fail(
                "clusters did not become available in time: "
                + ", ".join(n for n in names if rows.get(n, ("",) * 4)[3] != "True")
            )
        await asyncio.sleep(0.2)


def _show(clusters: list[dict[str, object]]) -> None:
    table = Table(box=None, header_style="bold")
    for column in COLUMNS:
        table.add_column(column)
    for row in cluster_rows(clusters, now=datetime.now(UTC)):  # type: ignore[arg-type]
        table.add_row(*row)
    Console(width=200).print(table)


def _ca(server: HubServer) -> bytes:
    assert server.state is not None, "the hub is started"
    return server.state.ca.cert_pem


def _reporter(name: str) -> Callable[[str], None]:
    return lambda state: typer.echo(f"{name}: {state}")
