"""``pyocm controller``: the hub's registration controllers against any Kubernetes API server."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import typer

from pyocm import hubmanager
from pyocm.cli.common import KUBECONFIG_HELP, connect, fail, run, setup_logging, until_signal
from pyocm.cli.hub import parse_addons, parse_feature_gates
from pyocm.cli.metricsserver import DISABLED, parse_bind_address, serving_metrics
from pyocm.cli.metricsserver import HELP as METRICS_HELP
from pyocm.kube import kinds, names
from pyocm.local import crdinstall
from pyocm.registration.hub.manager import (
    LEADER_LEASE,
    LEADER_NAMESPACE,
    HubOptions,
)
from pyocm.runtime.ensure import ensure
from pyocm.runtime.leaderelection import LeaderElector
from pyocm.runtime.manager import LeadershipLost, Manager


def controller(
    kubeconfig: Path = typer.Option(None, "--kubeconfig", help=KUBECONFIG_HELP),
    leader_elect: bool = typer.Option(
        True, "--leader-elect/--no-leader-elect", help="Run only while holding the Lease."
    ),
    install_crds: bool = typer.Option(
        True, "--install-crds/--no-install-crds", help="Install or update the OCM CRDs first."
    ),
    feature_gates: str = typer.Option(
        "", "--feature-gates", help="Comma-separated Gate=true|false."
    ),
    auto_approved_csr_users: str = typer.Option(
        "",
        "--auto-approved-csr-users",
        help="Comma-separated users whose join CSRs are approved without an admin (needs ManagedClusterAutoApproval).",
    ),
    addons: str = typer.Option(
        "", "--addons", help="Comma-separated add-ons pyocm implements to run, e.g. helloworld."
    ),
    metrics_bind_address: str = typer.Option(DISABLED, "--metrics-bind-address", help=METRICS_HELP),
    webhook_service: str = typer.Option(
        "",
        "--webhook-service",
        metavar="NAMESPACE/NAME",
        help=(
            "The Service of the OCM webhooks ('pyocm webhook'): keep their serving certificate "
            "in Secret NAME-serving-cert and put its CA into the webhook configurations and "
            "CRD conversions calling it, as upstream's cluster-manager operator does. "
            "Empty: off."
        ),
    ),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run the hub's registration controllers against the API server of --kubeconfig."""
    setup_logging(log_level)
    try:
        gates = parse_feature_gates(feature_gates)
        addon_names = parse_addons(addons)
    except ValueError as err:
        fail(str(err), code=2)
    try:
        parse_bind_address(metrics_bind_address)
    except ValueError as err:
        fail(f"--metrics-bind-address: {err}", code=2)
    service = None
    if webhook_service:
        try:
            service = parse_service(webhook_service)
        except ValueError as err:
            fail(f"--webhook-service: {err}", code=2)
    users = tuple(u.strip() for u in auto_approved_csr_users.split(",") if u.strip())
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    options = HubOptions(
        identity=identity, feature_gates=gates, auto_approved_users=users, addons=addon_names
    )
    try:
        run(
            until_signal(
                _run(
                    kubeconfig,
                    options,
                    leader_elect=leader_elect,
                    install_crds=install_crds,
                    metrics_address=metrics_bind_address,
                    webhook_service=service,
                )
            )
        )
    except LeadershipLost as err:
        fail(f"{err}; exiting so a supervisor restarts this replica")


async def _run(
    kubeconfig: Path | None,
    options: HubOptions,
    *,
    leader_elect: bool,
    install_crds: bool,
    metrics_address: str = DISABLED,
    webhook_service: tuple[str, str] | None = None,
) -> None:
    # Metrics are served whether or not this replica leads, as controller-runtime's are;
    # readiness waits for the caches of a replica that leads.
    built: list[Manager] = []
    ready = {"informer-sync": lambda: bool(built) and all(m.ready for m in built)}
    async with serving_metrics(metrics_address, ready=ready), connect(kubeconfig) as api:
        if install_crds:
            await crdinstall.install(api, crdinstall.ocm_crds())
        manager = hubmanager.build(api, options=options, webhook_service=webhook_service)
        built.append(manager)
        elector = None
        if leader_elect:
            # Read first: a deployed controller may read its namespace but not create
            # namespaces, and a create is refused (403) before it could be a conflict.
            await ensure(
                api, kinds.NAMESPACE, {"metadata": {"name": LEADER_NAMESPACE}}, create_only=True
            )
            elector = LeaderElector(
                api, namespace=LEADER_NAMESPACE, name=LEADER_LEASE, identity=options.identity
            )
        await manager.run(elector=elector)


def parse_service(text: str) -> tuple[str, str]:
    """(namespace, name) of ``NAMESPACE/NAME``, each a DNS-1123 label as Service names are."""
    namespace, slash, name = text.partition("/")
    for part in (namespace, name):
        problems = names.is_dns1123_label(part)
        if not slash or problems:
            raise ValueError(f'"{text}" is not NAMESPACE/NAME of a Service')
    return namespace, name
