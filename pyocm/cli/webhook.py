"""``pyocm webhook``: OCM's admission and conversion webhooks for a real kube-apiserver.

One process serves what upstream splits over its registration, work and add-on webhook
servers (their paths are kept, so upstream's webhook configurations point at it
unchanged), plus pyocm's own rules. A pyocm hub that uses it runs with
``--no-ocm-admission`` so the rules are not applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import typer

from pyocm.cli.common import KUBECONFIG_HELP, connect, fail, run, setup_logging, until_signal
from pyocm.cli.hub import parse_feature_gates
from pyocm.cli.metricsserver import DISABLED, parse_bind_address, serving_metrics
from pyocm.cli.metricsserver import HELP as METRICS_HELP
from pyocm.hooks.request import DEFAULT_MANIFEST_LIMIT, Config
from pyocm.webhook.certs import DEFAULT_CERT_DIR, ReloadingCertificate
from pyocm.webhook.seams import api_seams
from pyocm.webhook.server import build_app, serving


def webhook(
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
    host: str = typer.Option("", "--host", help="Address to serve on (default: every interface)."),
    port: int = typer.Option(
        9443, "--port", min=0, max=65535, help="Port to serve on; 0 picks a free one."
    ),
    cert_dir: Path = typer.Option(
        DEFAULT_CERT_DIR,
        "--cert-dir",
        help="Directory of the serving tls.crt and tls.key, reloaded when they change.",
    ),
    feature_gates: str = typer.Option(
        "",
        "--feature-gates",
        help="Comma-separated Gate=true|false: DefaultClusterSet (default true), "
        "NilExecutorValidating, ManifestWorkReplicaSet.",
    ),
    manifest_limit: int = typer.Option(
        DEFAULT_MANIFEST_LIMIT,
        "--manifest-limit",
        "--manifestLimit",
        min=1,
        help="Most bytes a ManifestWork's manifests may take together (upstream's work webhook flag).",
    ),
    metrics_bind_address: str = typer.Option(DISABLED, "--metrics-bind-address", help=METRICS_HELP),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Serve OCM's admission webhooks and the add-on conversion over TLS."""
    setup_logging(log_level)
    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as err:
        fail(str(err), code=2)
    try:
        parse_bind_address(metrics_bind_address)
    except ValueError as err:
        fail(f"--metrics-bind-address: {err}", code=2)
    try:
        certificate = ReloadingCertificate(cert_dir)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        fail(f"--cert-dir: no serving certificate in {cert_dir}: {err}")
    config = Config.of(gates, manifest_limit=manifest_limit)
    run(until_signal(_serve(kubeconfig, config, certificate, host, port, metrics_bind_address)))


async def _serve(
    kubeconfig: Path | None,
    config: Config,
    certificate: ReloadingCertificate,
    host: str,
    port: int,
    metrics_address: str,
) -> None:
    bound: list[str] = []
    ready = {"webhook-server": lambda: bool(bound)}
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(serving_metrics(metrics_address, ready=ready))
        api = await stack.enter_async_context(connect(kubeconfig))
        app = build_app(config=config, seams=api_seams(api))
        urls = await stack.enter_async_context(
            serving(app, host=host or None, port=port, certificate=certificate)
        )
        bound.extend(urls)
        await asyncio.Event().wait()  # until a signal cancels it
