"""What an add-on tells the hub's add-on manager: the interface add-ons implement.

This is the Python shape of upstream addon-framework's ``agent.AgentAddon`` (names and
defaults as there, so an add-on ported from Go reads the same): the add-on's name, the
manifests its agent needs on a cluster, how the agent registers to the hub (one or more
client certificates, who approves and signs them, what the agent may do on the hub),
how its health is told, and which configuration kinds it reads. The manager's
controllers (install, configuration, registration, deployment, health) read only this.

Callbacks that read the hub are ``async`` and receive the hub client; a callback that
cannot decide yet raises :class:`SubjectNotReady` (upstream's ``SubjectNotReadyError``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfig as ManifestConfig
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfigFeedbackRule as FeedbackRule
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfigResourceIdentifier as ResourceIdentifier,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestStatusFeedback as StatusFeedback,
)
from pyocm.registration.agent import certs
from pyocm.runtime.client import Api

Obj = dict[str, Any]

#: The signer of a client certificate for the hub's own API server.
KUBE_CLIENT_SIGNER = certs.SIGNER
PREFIX = "system:open-cluster-management:"


class SubjectNotReady(Exception):
    """The registration subject is not known yet (the agent has not reported it)."""

    def __str__(self) -> str:
        return "registration subject not ready"


def default_user(cluster: str, addon: str, agent: str) -> str:
    """``DefaultUser``: the user an add-on agent's certificate names."""
    return f"{PREFIX}cluster:{cluster}:addon:{addon}:agent:{agent}"


def default_groups(cluster: str, addon: str) -> tuple[str, ...]:
    """``DefaultGroups``: the groups an add-on agent's certificate names."""
    return (f"{PREFIX}cluster:{cluster}:addon:{addon}", f"{PREFIX}addon:{addon}")


@dataclass(frozen=True)
class Subject:
    """Who a registration's certificate says the agent is."""

    user: str = ""
    groups: tuple[str, ...] = ()
    organization_units: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegistrationConfig:
    """One certificate the agent holds: ``signer_name`` ``kubernetes.io/kube-apiserver-client``
    is a KubeClient registration (a kubeconfig for the hub), any other a CustomSigner one.
    ``driver`` is the KubeClient driver (``csr``, or ``token`` where the agent asks for
    a ServiceAccount token instead)."""

    signer_name: str
    subject: Subject
    driver: str = ""

    @property
    def kube_client(self) -> bool:
        return self.signer_name == KUBE_CLIENT_SIGNER


def kube_client_configurations(
    addon: str, agent: str
) -> Callable[[ManagedCluster, ManagedClusterAddOn], Awaitable[list[RegistrationConfig]]]:
    """``KubeClientSignerConfigurations``: one KubeClient registration with the default
    user and groups."""

    async def configurations(
        cluster: ManagedCluster, _addon: ManagedClusterAddOn
    ) -> list[RegistrationConfig]:
        name = cluster["metadata"]["name"]
        subject = Subject(default_user(name, addon, agent), default_groups(name, addon))
        return [RegistrationConfig(KUBE_CLIENT_SIGNER, subject)]

    return configurations


#: ``CSRApproveFunc``: whether to approve this add-on CSR (a CertificateSigningRequest).
CsrApprove = Callable[[ManagedCluster, ManagedClusterAddOn, Obj], Awaitable[bool]]
#: ``CSRSignerFunc``: the PEM certificate for an approved CSR of a custom signer (b"" to
#: leave it unsigned).
CsrSign = Callable[[Api, ManagedCluster, ManagedClusterAddOn, Obj], Awaitable[bytes]]
#: ``PermissionConfigFunc``: grant the agent what it may do on the hub; raises
#: :class:`SubjectNotReady` when the MCA's registrations have no subject yet.
PermissionConfig = Callable[[Api, ManagedCluster, ManagedClusterAddOn], Awaitable[None]]
#: ``AgentInstallNamespaceFunc``: the namespace to install the agent in ("" for the default).
InstallNamespace = Callable[[Api, ManagedClusterAddOn], Awaitable[str]]
#: ``RegistrationConfigurationsFunc``.
Configurations = Callable[
    [ManagedCluster, ManagedClusterAddOn], Awaitable[list[RegistrationConfig]]
]


@dataclass(frozen=True)
class RegistrationOption:
    """How the agent registers (``RegistrationOption``)."""

    configurations: Configurations
    approve: CsrApprove | None = None
    permissions: PermissionConfig | None = None
    sign: CsrSign | None = None


class HealthProberType(StrEnum):
    NONE = "None"
    LEASE = "Lease"
    WORK = "Work"
    DEPLOYMENT_AVAILABILITY = "DeploymentAvailability"
    WORKLOAD_AVAILABILITY = "WorkloadAvailability"


@dataclass(frozen=True)
class ProbeField:
    """``ProbeField``: the status feedback the work agent is asked for about one
    deployed resource (``name`` and ``namespace`` may hold ``*`` wildcards)."""

    resource: ResourceIdentifier
    rules: Sequence[FeedbackRule]


@dataclass(frozen=True)
class FieldResult:
    """``FieldResult``: the feedback the work agent returned for one resource."""

    resource: ResourceIdentifier
    feedback: StatusFeedback


class Unhealthy(Exception):
    """What a :data:`HealthChecker` raises: the add-on is unavailable, for this reason."""


#: ``AddonHealthCheckerFunc``: judge the probe results; raise :class:`Unhealthy` if the
#: add-on is not available.
HealthChecker = Callable[[Sequence[FieldResult], ManagedCluster, ManagedClusterAddOn], None]


@dataclass(frozen=True)
class WorkHealthProber:
    """``WorkHealthProber``, for the ``Work`` prober: what feedback to ask for and how
    to judge it (no checker: any result is available)."""

    probe_fields: Sequence[ProbeField] = ()
    health_checker: HealthChecker | None = None


@dataclass(frozen=True)
class ConfigGVR:
    """A configuration kind the add-on reads (``SupportedConfigGVRs``)."""

    group: str
    version: str
    resource: str


#: The configuration kinds every add-on may name: AddOnDeploymentConfig.
ADDON_DEPLOYMENT_CONFIG = ConfigGVR(
    "addon.open-cluster-management.io", "v1alpha1", "addondeploymentconfigs"
)
#: The template an add-on defined by an AddOnTemplate runs from.
ADDON_TEMPLATE = ConfigGVR("addon.open-cluster-management.io", "v1alpha1", "addontemplates")
#: The framework's ``BuiltInAddOnConfigGVRs``.
BUILT_IN_CONFIGS = (ADDON_DEPLOYMENT_CONFIG, ADDON_TEMPLATE)
#: ``ManagedClusterAddOnFilterFunc``: whether the framework's controllers act on an MCA.
McaFilter = Callable[[ManagedClusterAddOn], bool]
#: ``AgentDeployTriggerClusterFilter``: whether a change of the cluster's labels or
#: annotations (old, new) asks for the add-on's manifests to be rendered again (its
#: Available condition changing always does; other changes are not offered).
DeployTrigger = Callable[[ManagedCluster, ManagedCluster], bool]


@dataclass(frozen=True)
class AgentAddonOptions:
    """``AgentAddonOptions``: ``health`` None leaves health to the spoke's Lease check
    (mode unchanged, as upstream's nil HealthProber); ``work_prober`` is the
    ``HealthProber.WorkProber`` of a ``Work`` prober (without one, the add-on is
    Available once its works exist, as upstream); ``manifest_configs`` are merged into
    the deploy works' ``manifestConfigs`` (``ManifestConfigs``); ``mca_filter`` limits
    which of the add-on's MCAs the registration, deploy, approval and signing controllers
    act on (upstream's manager-wide filter, set in template mode); ``deploy_trigger``
    names the other cluster changes that re-render the add-on."""

    name: str
    registration: RegistrationOption | None = None
    health: HealthProberType | None = None
    work_prober: WorkHealthProber | None = None
    manifest_configs: Sequence[ManifestConfig] = field(default_factory=tuple)
    install_namespace: InstallNamespace | None = None
    supported_configs: Sequence[ConfigGVR] = field(default_factory=tuple)
    config_check: bool = False
    mca_filter: McaFilter | None = None
    deploy_trigger: DeployTrigger | None = None

    def accepts(self, addon: ManagedClusterAddOn) -> bool:
        return self.mca_filter is None or self.mca_filter(addon)


class AgentAddon(Protocol):
    """An add-on as the manager sees it (``agent.AgentAddon``)."""

    def options(self) -> AgentAddonOptions: ...

    async def manifests(self, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> list[Obj]:
        """The objects the agent needs on ``cluster``, for ``addon`` as it is now."""
        ...
