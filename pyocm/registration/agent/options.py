"""The registration agent's options (the klusterlet's flags, ocm-behaviour.md 1.1)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.registration.agent.status import ClaimOptions


@dataclass(frozen=True)
class AgentOptions:
    cluster_name: str = ""
    agent_id: str = ""
    hub_kubeconfig_secret: str = "hub-kubeconfig-secret"
    healthcheck_period: float = 60.0
    claims: ClaimOptions = field(default_factory=ClaimOptions)
    expiration_seconds: int | None = None
    external_server_urls: tuple[str, ...] = ()
    #: Labels under info.open-cluster-management.io/ to keep on the ManagedCluster
    #: (a None value removes the label); the hub must grant each one (labels.py).
    labels: tuple[tuple[str, str | None], ...] = ()
    poll: float = 1.0
    #: Where the bootstrap kubeconfig lives when none is given directly (upstream's
    #: --bootstrap-kubeconfig-secret, key ``kubeconfig``, in the agent namespace).
    bootstrap_secret: str = "bootstrap-hub-kubeconfig"
    #: How often a bootstrap kubeconfig kept in a Secret is checked for changes.
    bootstrap_check: float = 10.0
    #: Add-on registration and Lease health (upstream's AddonManagement gate).
    addons: AddOnOptions = field(default_factory=AddOnOptions)
