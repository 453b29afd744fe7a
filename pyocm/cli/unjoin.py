"""``pyocm unjoin``: remove the agent's hub credential from a managed cluster."""

from __future__ import annotations

from pathlib import Path

import typer

from pyocm.cli.agent import clusters_dir, recorded_data_dir
from pyocm.cli.common import fail, run
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.local.embedded import EmbeddedCluster
from pyocm.registration.agent.managed import AGENT_NAMESPACE
from pyocm.runtime.client import Api


def unjoin(
    cluster_name: str = typer.Option(
        ..., "--cluster-name", help="The cluster to take off its hub."
    ),
    managed_kubeconfig: Path = typer.Option(
        None, "--managed-kubeconfig", help="The managed cluster (default: its embedded cluster)."
    ),
    data_dir: Path = typer.Option(
        None,
        "--data-dir",
        help="The embedded cluster's data dir (default: where 'pyocm join' put it).",
    ),
    hub_kubeconfig_secret: str = typer.Option(
        "hub-kubeconfig-secret",
        "--hub-kubeconfig-secret",
        help="The Secret in open-cluster-management-agent holding the hub kubeconfig.",
    ),
) -> None:
    """Delete the cluster's hub credential (stop its agent first); the hub admin then deletes the ManagedCluster."""
    run(_unjoin(cluster_name, managed_kubeconfig, data_dir, hub_kubeconfig_secret))
    typer.echo(
        f"{cluster_name} no longer holds a hub credential; on the hub run: kubectl delete managedcluster {cluster_name}"
    )


async def _unjoin(name: str, kubeconfig: Path | None, data_dir: Path | None, secret: str) -> None:
    embedded = None
    if kubeconfig is None:
        folder = data_dir or _joined_dir(name)
        if not folder.is_dir():
            fail(
                f"no embedded cluster {name} at {folder}; pass --data-dir if it was joined with "
                "one, or --managed-kubeconfig for other clusters"
            )
        embedded = EmbeddedCluster(name=name, data_dir=folder)
        await embedded.start()
        api = embedded.api
    else:
        api = Api.from_kubeconfig(kubeconfig)
    try:
        try:
            await api.delete(kinds.SECRET, secret, namespace=AGENT_NAMESPACE)
        except ApiError as err:
            if err.code != 404:
                raise
            fail(f"{name} holds no hub credential (no secret {AGENT_NAMESPACE}/{secret})")
    finally:
        if embedded is not None:
            await embedded.stop()
        else:
            await api.close()


def _joined_dir(name: str) -> Path:
    """Where ``pyocm join`` last kept ``name``'s embedded cluster: the dir it recorded
    (a join with ``--data-dir``) while that still exists, else the default."""
    recorded = recorded_data_dir(name)
    if recorded is not None and recorded.is_dir():
        return recorded
    return clusters_dir() / name
