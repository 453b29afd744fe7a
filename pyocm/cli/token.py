"""``pyocm get token``: a bootstrap token for joining, and the exact command that uses it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import typer

from pyocm.cli.common import KUBECONFIG_HELP, connect, fail, run
from pyocm.cli.hub import parse_duration
from pyocm.kube import kinds
from pyocm.registration import bootstraptoken, clusterinfo


def get_token(
    ttl: str = typer.Option(
        "1h", "--ttl", help="How long the token may be used to join, e.g. 1h or 30m."
    ),
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
) -> None:
    """Create a bootstrap token and print the command a managed cluster runs to join."""
    try:
        lifetime = parse_duration(ttl)
    except ValueError as err:
        fail(str(err), code=2)
    command = run(_create(kubeconfig, lifetime.total_seconds()))
    typer.echo("To join a cluster to this hub, run on it:")
    typer.echo(f"  {command}")
    typer.echo(f"The token expires in {ttl}.")


async def _create(kubeconfig: Path | None, seconds: float) -> str:
    async with connect(kubeconfig) as api:
        token = bootstraptoken.generate()
        await api.create(
            kinds.SECRET,
            bootstraptoken.token_secret(
                token, now=datetime.now(UTC), ttl=timedelta(seconds=seconds)
            ),
        )
        info = await api.get(kinds.CONFIGMAP, "cluster-info", namespace="kube-public")
        ca_pem = clusterinfo.ca_of(info)
        return (
            f"pyocm join --hub-token {token} --hub-apiserver {api.server} "
            f"--ca-cert-hash {bootstraptoken.ca_cert_hash(ca_pem)} --cluster-name <cluster_name>"
        )
