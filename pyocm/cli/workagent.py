"""``pyocm work-agent``: the work agent alone, with upstream's flags (``work agent``)."""

from __future__ import annotations

from pathlib import Path

import typer

from pyocm.cli.common import connect_managed, fail, run, setup_logging, until_signal
from pyocm.cli.hub import parse_duration
from pyocm.cli.metricsserver import DISABLED, parse_bind_address, serving_metrics
from pyocm.cli.metricsserver import HELP as METRICS_HELP
from pyocm.klusterlet.crds import ensure_applied_work_crd
from pyocm.runtime.client import Api
from pyocm.work.agent.agent import WorkAgent
from pyocm.work.agent.options import OptionsError, WorkAgentOptions
from pyocm.work.agent.spoke import KubeSpoke

#: The work agent's flags, shared with ``pyocm agent`` (upstream's names and defaults).
STATUS_SYNC_INTERVAL = typer.Option(
    "10s", "--status-sync-interval", help="Interval to sync resource status to hub."
)
EVICTION_GRACE_PERIOD = typer.Option(
    "60m",
    "--appliedmanifestwork-eviction-grace-period",
    help="Grace period for appliedmanifestwork eviction.",
)
MAX_JSON_RAW_LENGTH = typer.Option(
    1024,
    "--max-json-raw-length",
    help="The maximum size of the JSON raw string returned from status feedback.",
)
WORKERS = typer.Option(
    10,
    "--workload-agent-workers",
    help="The number of workers for the workload agent controllers.",
)
DISABLE_WORK_AGENT = typer.Option(
    False,
    "--disable-work-agent",
    help="Run registration alone: no work agent applies this cluster's ManifestWorks.",
)


def _seconds(flag: str, text: str) -> float:
    try:
        return parse_duration(text).total_seconds()
    except ValueError as err:
        fail(f"{flag}: {err}", code=2)


def work_options(
    *,
    cluster_name: str = "",
    agent_id: str = "",
    status_sync_interval: str,
    eviction_grace_period: str,
    max_json_raw_length: int,
    workers: int,
) -> WorkAgentOptions:
    """The options the work agent's flags say, or exit 2 naming the bad flag."""
    try:
        return WorkAgentOptions(
            cluster_name=cluster_name,
            agent_id=agent_id,
            status_sync_interval=_seconds("--status-sync-interval", status_sync_interval),
            appliedmanifestwork_eviction_grace_period=_seconds(
                "--appliedmanifestwork-eviction-grace-period", eviction_grace_period
            ),
            max_json_raw_length=max_json_raw_length,
            workers=workers,
        )
    except OptionsError as err:
        fail(str(err), code=2)


def work_agent(
    cluster_name: str = typer.Option(
        "", "--spoke-cluster-name", "--cluster-name", help="Name of the spoke cluster."
    ),
    hub_kubeconfig: Path = typer.Option(
        ...,
        "--hub-kubeconfig",
        "--workload-source-config",
        help="Kubeconfig of the hub, with the cluster's own credential (the hub-kubeconfig-secret's).",
    ),
    spoke_kubeconfig: Path = typer.Option(
        None,
        "--spoke-kubeconfig",
        help="Kubeconfig of the managed cluster (default: the pod's ServiceAccount, run in it).",
    ),
    agent_id: str = typer.Option("", "--agent-id", help="ID of the agent (default: the hub hash)."),
    status_sync_interval: str = STATUS_SYNC_INTERVAL,
    eviction_grace_period: str = EVICTION_GRACE_PERIOD,
    max_json_raw_length: int = MAX_JSON_RAW_LENGTH,
    workers: int = WORKERS,
    metrics_bind_address: str = typer.Option(DISABLED, "--metrics-bind-address", help=METRICS_HELP),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run the work agent: apply this cluster's ManifestWorks and report their status."""
    setup_logging(log_level)
    try:
        parse_bind_address(metrics_bind_address)
    except ValueError as err:
        fail(f"--metrics-bind-address: {err}", code=2)
    for flag, path in (
        ("--hub-kubeconfig", hub_kubeconfig),
        ("--spoke-kubeconfig", spoke_kubeconfig),
    ):
        if path is not None and not path.is_file():
            fail(f"{flag} {path} does not exist", code=2)
    options = work_options(
        cluster_name=cluster_name,
        agent_id=agent_id,
        status_sync_interval=status_sync_interval,
        eviction_grace_period=eviction_grace_period,
        max_json_raw_length=max_json_raw_length,
        workers=workers,
    )
    try:
        options.check_cluster()
    except OptionsError as err:
        fail(str(err), code=2)
    run(_work_agent(hub_kubeconfig, spoke_kubeconfig, options, metrics_bind_address))


async def _work_agent(
    hub_kubeconfig: Path,
    spoke_kubeconfig: Path | None,
    options: WorkAgentOptions,
    metrics_address: str,
) -> None:
    async with (
        serving_metrics(metrics_address),
        Api.from_kubeconfig(hub_kubeconfig) as hub,
        connect_managed(spoke_kubeconfig) as spoke,
    ):
        # No klusterlet operator puts the CRD there first: the agent does (crds.py).
        await ensure_applied_work_crd(spoke)
        agent = WorkAgent(hub, KubeSpoke(spoke), options=options)
        await until_signal(agent.run())
