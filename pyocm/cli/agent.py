"""``pyocm join`` (the clusteradm way) and ``pyocm agent`` (the klusterlet's flags): both
run the klusterlet, registration and then the work agent (``--disable-work-agent``:
registration alone)."""

from __future__ import annotations

import os
from pathlib import Path

import typer
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.cli import workagent
from pyocm.cli.common import connect_managed, fail, run, setup_logging, until_signal
from pyocm.cli.hub import parse_duration
from pyocm.cli.metricsserver import DISABLED, parse_bind_address, serving_metrics
from pyocm.cli.metricsserver import HELP as METRICS_HELP
from pyocm.klusterlet.agent import DEFAULT_WORK, Klusterlet
from pyocm.kube import names
from pyocm.local.embedded import EmbeddedCluster
from pyocm.pki.kubeconfig import build_kubeconfig
from pyocm.registration import bootstraptoken, clusterinfo
from pyocm.registration.agent.agent import AgentOptions, RegistrationAgent
from pyocm.registration.agent.labels import parse_label
from pyocm.registration.agent.managed import KubeManagedSide
from pyocm.registration.agent.status import ClaimOptions
from pyocm.runtime.client import Api
from pyocm.work.agent.options import WorkAgentOptions

LABEL_HELP = (
    "KEY=VALUE: a label under info.open-cluster-management.io/ to publish on this cluster "
    "(KEY- removes it); repeatable. The hub must grant the agent create on "
    "managedclusters/label for it."
)


def _labels(texts: list[str]) -> tuple[tuple[str, str | None], ...]:
    try:
        return tuple(parse_label(text) for text in texts)
    except ValueError as err:
        fail(f"--cluster-label {err}", code=2)


def clusters_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pyocm" / "clusters"


def _record_path(name: str) -> Path:
    # NAME.data-dir is never a cluster's own folder: a cluster name has no dot.
    return clusters_dir() / f"{name}.data-dir"


def record_data_dir(name: str, folder: Path) -> None:
    """Note where ``pyocm join`` keeps cluster ``name``'s embedded cluster, so that
    ``pyocm unjoin`` finds it without being told ``--data-dir`` again."""
    record = _record_path(name)
    if folder.resolve() == (clusters_dir() / name).resolve():
        record.unlink(missing_ok=True)
        return
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(f"{folder.resolve()}\n")


def recorded_data_dir(name: str) -> Path | None:
    """The data dir the last ``pyocm join --cluster-name name`` used, if not the default."""
    try:
        text = _record_path(name).read_text().strip()
    except OSError:
        return None
    return Path(text) if text else None


def check_cluster_name(name: str) -> None:
    """Upstream's agents refuse a cluster name that is not a DNS-1123 label (it names a
    namespace on the hub) with this message; ``clusteradm join`` checks it before it
    deploys anything, and so does ``pyocm join``."""
    if problems := names.is_dns1123_label(name):
        fail(f"--cluster-name: metadata.name format is not correct: {','.join(problems)}", code=2)


def join(
    hub_token: str = typer.Option(
        ..., "--hub-token", help="The bootstrap token from 'pyocm get token'."
    ),
    hub_apiserver: str = typer.Option(
        ..., "--hub-apiserver", help="The hub's URL, https://HOST:PORT."
    ),
    cluster_name: str = typer.Option(
        ..., "--cluster-name", help="This cluster's name on the hub (a DNS label)."
    ),
    ca_cert_hash: str = typer.Option(
        ...,
        "--ca-cert-hash",
        help="sha256:<hex> of the hub CA's public key, from 'pyocm get token'.",
    ),
    managed_kubeconfig: Path = typer.Option(
        None,
        "--managed-kubeconfig",
        help="The managed cluster's kubeconfig; without it an embedded cluster is started.",
    ),
    data_dir: Path = typer.Option(
        None,
        "--data-dir",
        help="Embedded cluster's data (default: $XDG_DATA_HOME/pyocm/clusters/NAME, else ~/.local/share/pyocm/clusters/NAME).",
    ),
    cluster_label: list[str] = typer.Option([], "--cluster-label", help=LABEL_HELP),
    disable_work_agent: bool = workagent.DISABLE_WORK_AGENT,
    log_level: str = typer.Option("WARNING", "--log-level"),
) -> None:
    """Join this cluster to a hub and keep its agents running (Ctrl-C to stop)."""
    setup_logging(log_level)
    check_cluster_name(cluster_name)
    labels = _labels(cluster_label)
    try:
        token = bootstraptoken.parse(hub_token)
    except ValueError as err:
        fail(f"--hub-token: {err}", code=2)
    if not hub_apiserver.startswith("https://"):
        fail("--hub-apiserver must be an https:// URL", code=2)
    run(
        _join(
            token,
            hub_apiserver.rstrip("/"),
            cluster_name,
            ca_cert_hash,
            managed_kubeconfig,
            data_dir,
            labels,
            None if disable_work_agent else DEFAULT_WORK,
        )
    )
    typer.echo("pyocm join stopped")


async def _join(
    token: bootstraptoken.BootstrapToken,
    server: str,
    name: str,
    ca_hash: str,
    managed_kubeconfig: Path | None,
    data_dir: Path | None,
    labels: tuple[tuple[str, str | None], ...],
    work: WorkAgentOptions | None,
) -> None:
    ca_pem = await clusterinfo.discover_ca(server, ca_cert_hash=ca_hash)
    # Before anything is created here: a refused token leaves nothing behind.
    await clusterinfo.check_token(server, ca_pem=ca_pem, token=str(token))
    bootstrap = build_kubeconfig(server=server, ca_pem=ca_pem, token=str(token))
    embedded: EmbeddedCluster | None = None
    if managed_kubeconfig is None:
        folder = data_dir or clusters_dir() / name
        embedded = EmbeddedCluster(name=name, data_dir=folder)
        await embedded.start()
        record_data_dir(name, folder)
        typer.echo(
            f"started an embedded managed cluster at {embedded.url} (kubeconfig {embedded.kubeconfig})"
        )
        api = embedded.api
    else:
        api = Api.from_kubeconfig(managed_kubeconfig)
    try:
        agent = RegistrationAgent(
            bootstrap=bootstrap,
            managed=KubeManagedSide(api),
            options=AgentOptions(cluster_name=name, labels=labels),
            on_state=lambda state: typer.echo(f"{name}: {state}"),
        )
        await until_signal(Klusterlet.for_cluster(agent, api, work=work).run())
    finally:
        if embedded is not None:
            await embedded.stop()
        else:
            await api.close()


def agent(
    cluster_name: str = typer.Option(
        "",
        "--spoke-cluster-name",
        "--cluster-name",
        help="Cluster name (default: kept, else generated).",
    ),
    agent_id: str = typer.Option(
        "", "--agent-id", help="Agent id (default: kept, else 5 random characters)."
    ),
    bootstrap_kubeconfig: Path = typer.Option(
        None, "--bootstrap-kubeconfig", help="Kubeconfig with the hub's bootstrap credential."
    ),
    bootstrap_kubeconfig_secret: str = typer.Option(
        "bootstrap-hub-kubeconfig",
        "--bootstrap-kubeconfig-secret",
        help="Without --bootstrap-kubeconfig: the Secret (key kubeconfig) in open-cluster-management-agent "
        "on the managed cluster; a change to it makes the agent bootstrap again.",
    ),
    spoke_kubeconfig: Path = typer.Option(
        None,
        "--spoke-kubeconfig",
        help="Kubeconfig of the managed cluster (default: the pod's ServiceAccount, run in it).",
    ),
    hub_kubeconfig_secret: str = typer.Option(
        "hub-kubeconfig-secret",
        "--hub-kubeconfig-secret",
        help="The Secret in open-cluster-management-agent holding the hub kubeconfig.",
    ),
    cluster_healthcheck_period: str = typer.Option(
        "1m",
        "--cluster-healthcheck-period",
        help="How often to check the managed cluster's API server health, e.g. 1m.",
    ),
    max_custom_cluster_claims: int = typer.Option(
        20, "--max-custom-cluster-claims", help="Most custom cluster claims to report."
    ),
    reserved_cluster_claim_suffixes: str = typer.Option(
        "",
        "--reserved-cluster-claim-suffixes",
        help="Comma-separated claim name suffixes marking reserved claims (not capped as custom ones).",
    ),
    client_cert_expiration_seconds: int = typer.Option(
        0,
        "--client-cert-expiration-seconds",
        help="Validity to ask for the client certificate, in seconds (0: the hub's signing duration).",
    ),
    spoke_external_server_urls: str = typer.Option(
        "",
        "--spoke-external-server-urls",
        help="Comma-separated https URLs at which the hub can reach this cluster's API server.",
    ),
    cluster_label: list[str] = typer.Option([], "--cluster-label", help=LABEL_HELP),
    metrics_bind_address: str = typer.Option(DISABLED, "--metrics-bind-address", help=METRICS_HELP),
    disable_work_agent: bool = workagent.DISABLE_WORK_AGENT,
    status_sync_interval: str = workagent.STATUS_SYNC_INTERVAL,
    eviction_grace_period: str = workagent.EVICTION_GRACE_PERIOD,
    max_json_raw_length: int = workagent.MAX_JSON_RAW_LENGTH,
    workers: int = workagent.WORKERS,
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run the klusterlet: the registration agent, then the work agent (upstream's flag names)."""
    setup_logging(log_level)
    labels = _labels(cluster_label)
    try:
        parse_bind_address(metrics_bind_address)
    except ValueError as err:
        fail(f"--metrics-bind-address: {err}", code=2)
    try:
        period = parse_duration(cluster_healthcheck_period).total_seconds()
    except ValueError as err:
        fail(f"--cluster-healthcheck-period: {err}", code=2)
    if client_cert_expiration_seconds and client_cert_expiration_seconds < 3600:
        fail("client certificate expiration seconds must greater or qual to 3600", code=2)
    urls = tuple(u.strip() for u in spoke_external_server_urls.split(",") if u.strip())
    for url in urls:
        if not url.startswith("https://"):
            fail(f'"{url}" is invalid', code=2)
    bootstrap = None
    if bootstrap_kubeconfig is not None:
        if not bootstrap_kubeconfig.is_file():
            fail(f"bootstrap-kubeconfig {bootstrap_kubeconfig} does not exist")
        bootstrap = yaml.safe_load(bootstrap_kubeconfig.read_text())
    options = AgentOptions(
        bootstrap_secret=bootstrap_kubeconfig_secret,
        cluster_name=cluster_name,
        agent_id=agent_id,
        hub_kubeconfig_secret=hub_kubeconfig_secret,
        healthcheck_period=period,
        claims=ClaimOptions(
            max_custom=max_custom_cluster_claims,
            reserved_suffixes=tuple(
                s.strip() for s in reserved_cluster_claim_suffixes.split(",") if s.strip()
            ),
        ),
        expiration_seconds=client_cert_expiration_seconds or None,
        external_server_urls=urls,
        labels=labels,
    )
    work = workagent.work_options(
        status_sync_interval=status_sync_interval,
        eviction_grace_period=eviction_grace_period,
        max_json_raw_length=max_json_raw_length,
        workers=workers,
    )
    run(
        _agent(
            bootstrap,
            spoke_kubeconfig,
            options,
            None if disable_work_agent else work,
            metrics_address=metrics_bind_address,
        )
    )


async def _agent(
    bootstrap: dict[str, object] | None,
    spoke_kubeconfig: Path | None,
    options: AgentOptions,
    work: WorkAgentOptions | None,
    *,
    metrics_address: str = DISABLED,
) -> None:
    async with serving_metrics(metrics_address), connect_managed(spoke_kubeconfig) as api:
        agent = RegistrationAgent(
            bootstrap=bootstrap, managed=KubeManagedSide(api), options=options
        )
        await until_signal(Klusterlet.for_cluster(agent, api, work=work).run())
