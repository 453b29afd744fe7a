"""How a template add-on's agent registers, from its template's ``registration``
(upstream ``templateagent/registration.go``; ocm-behaviour.md 4.9).

* KubeClient: a certificate for the hub's API server with the default user (agent
  ``<addon>-agent``) and groups, approved by upstream's default rules; its
  ``hubPermissions`` become RoleBindings (CurrentCluster: the ClusterRole in the
  cluster's namespace, owned by the MCA; SingleNamespace: the role in that namespace).
* CustomSigner: a certificate of the template's signer with the template's subject (or
  the default one), signed by the hub with the CA in ``signingCA``, a
  ``kubernetes.io/tls`` Secret (in the add-on manager's namespace when none is named).

Upstream approves every CustomSigner CSR of the add-on. pyocm approves one only when
the labelled cluster's agent asked and its subject is the one the template names: any
other request would get a certificate the add-on's CA vouches for, for a name of the
requester's choosing.

Every callback reads the MCA's desired template as cached at that moment, so a new
template version takes effect at the next pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyocm.addon.agent import (
    KUBE_CLIENT_SIGNER,
    Obj,
    RegistrationConfig,
    RegistrationOption,
    Subject,
    default_groups,
    default_user,
)
from pyocm.addon.registration.approve import (
    is_cluster_agent,
    kube_client_csr_approver,
    request_subject,
    requester,
)
from pyocm.addon.registration.permissions import (
    CurrentCluster,
    HubPermission,
    SingleNamespace,
    permission_binding,
)
from pyocm.addon.registration.sign import ca_secret_signer
from pyocm.addon.template import refs
from pyocm.api import shapes
from pyocm.api.models.addon_v1alpha1 import (
    AddOnTemplate,
    AddOnTemplateSpecRegistrationItem,
    AddOnTemplateSpecRegistrationItemKubeClient,
)
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock
from pyocm.kube import kinds
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure

KUBE_CLIENT = "KubeClient"
CUSTOM_SIGNER = "CustomSigner"


class TemplateRegistration:
    """The :class:`~pyocm.addon.agent.RegistrationOption` of template add-on ``addon``."""

    def __init__(self, addon: str, *, templates: Store, clock: Clock) -> None:
        self.addon = addon
        self.agent = f"{addon}-agent"
        self.templates = templates
        self.clock = clock

    def option(self) -> RegistrationOption:
        return RegistrationOption(
            configurations=self.configurations,
            approve=self.approve,
            permissions=self.permissions,
            sign=self.sign,
        )

    def _template(
        self, what: str, cluster: ManagedCluster, addon: ManagedClusterAddOn
    ) -> AddOnTemplate:
        where = f"{cluster['metadata']['name']}/{self.addon}"
        try:
            found = refs.desired_template(
                self.templates, self.addon, addon.get("status", {}).get("configReferences") or []
            )
        except refs.TemplateError as err:
            raise refs.TemplateError(
                f"{what} failed to get addon template for addon {where}: {err}"
            ) from None
        if found is None:
            raise refs.TemplateError(
                f"{what} failed to get addon template for addon {where}, template is nil"
            )
        return found

    async def configurations(
        self, cluster: ManagedCluster, addon: ManagedClusterAddOn
    ) -> list[RegistrationConfig]:
        """``TemplateCSRConfigurationsFunc``."""
        template = self._template("CSRConfigurations", cluster, addon)
        name = cluster["metadata"]["name"]
        default = Subject(
            default_user(name, self.addon, self.agent), default_groups(name, self.addon)
        )
        found: list[RegistrationConfig] = []
        for registration in _registrations(template):
            if registration["type"] == KUBE_CLIENT:
                found.append(RegistrationConfig(KUBE_CLIENT_SIGNER, default))
            elif registration["type"] == CUSTOM_SIGNER and "customSigner" in registration:
                signer = registration["customSigner"]
                subject = default
                if "subject" in signer:
                    given = signer["subject"]
                    subject = Subject(
                        given.get("user", ""),
                        tuple(given.get("groups") or ()),
                        tuple(given.get("organizationUnit") or ()),
                    )
                found.append(RegistrationConfig(signer["signerName"], subject))
        return found

    async def approve(self, cluster: ManagedCluster, addon: ManagedClusterAddOn, csr: Obj) -> bool:
        """``TemplateCSRApproveCheckFunc``: the first registration of the CSR's kind
        decides (see the module docstring for CustomSigner)."""
        try:
            template = self._template("CSRApproveCheck", cluster, addon)
        except refs.TemplateError:
            return False
        signer = shapes.mapping(csr.get("spec")).get("signerName")
        for registration in _registrations(template):
            if registration["type"] == KUBE_CLIENT and signer == KUBE_CLIENT_SIGNER:
                return await kube_client_csr_approver(self.agent)(cluster, addon, csr)
            if (
                registration["type"] == CUSTOM_SIGNER
                and "customSigner" in registration
                and signer == registration["customSigner"]["signerName"]
            ):
                configs = await self.configurations(cluster, addon)
                wanted = next(c.subject for c in configs if c.signer_name == signer)
                return _asked_by_agent_for(csr, cluster, wanted)
        return False

    async def sign(
        self, api: Api, cluster: ManagedCluster, addon: ManagedClusterAddOn, csr: Obj
    ) -> bytes:
        """``TemplateCSRSignFunc``: sign with the CA of the registration naming the
        CSR's signer (b"" when none does)."""
        template = self._template("CSRSign", cluster, addon)
        signer = shapes.mapping(csr.get("spec")).get("signerName")
        for registration in _registrations(template):
            if registration["type"] != CUSTOM_SIGNER or "customSigner" not in registration:
                continue
            config = registration["customSigner"]
            if config["signerName"] != signer:
                continue
            ca = config.get("signingCA") or {"name": ""}
            signing = ca_secret_signer(
                signer_name=config["signerName"],
                secret=ca.get("name", ""),
                namespace=ca.get("namespace", ""),
                clock=self.clock,
            )
            return await signing(api, cluster, addon, csr)
        return b""

    async def permissions(
        self, api: Api, cluster: ManagedCluster, addon: ManagedClusterAddOn
    ) -> None:
        """``TemplatePermissionConfigFunc``: a RoleBinding for every hub permission of
        every KubeClient registration."""
        template = self._template("PermissionConfig", cluster, addon)
        for registration in _registrations(template):
            if registration["type"] != KUBE_CLIENT or "kubeClient" not in registration:
                continue
            for permission in hub_permissions(registration["kubeClient"]):
                binding = permission_binding(permission, cluster, addon)
                await ensure(api, kinds.ROLE_BINDING, dict(binding))


def hub_permissions(config: AddOnTemplateSpecRegistrationItemKubeClient) -> list[HubPermission]:
    """The permissions a KubeClient registration asks for; raises
    :class:`~pyocm.addon.template.refs.TemplateError` for one missing its settings."""
    found: list[HubPermission] = []
    for permission in config.get("hubPermissions") or []:
        if permission["type"] == "CurrentCluster":
            current = permission.get("currentCluster")
            if current is None:
                raise refs.TemplateError(
                    "current cluster is required when the HubPermission type is CurrentCluster"
                )
            found.append(CurrentCluster(current["clusterRoleName"]))
        elif permission["type"] == "SingleNamespace":
            single = permission.get("singleNamespace")
            if single is None:
                raise refs.TemplateError(
                    "single namespace is required when the HubPermission type is SingleNamespace"
                )
            role = single["roleRef"]
            found.append(
                SingleNamespace(
                    single["namespace"],
                    {
                        "apiGroup": role.get("apiGroup", ""),
                        "kind": role["kind"],
                        "name": role["name"],
                    },
                )
            )
    return found


def _registrations(template: AddOnTemplate) -> Sequence[AddOnTemplateSpecRegistrationItem]:
    return template["spec"].get("registration") or []


def _asked_by_agent_for(csr: Obj, cluster: ManagedCluster, wanted: Subject) -> bool:
    """The cluster's agent asked, for exactly the subject ``wanted`` (user and groups)."""
    if not is_cluster_agent(requester(csr), cluster["metadata"]["name"]):
        return False
    subject = request_subject(csr)
    if subject is None:
        return False
    common_name, organizations = subject
    return common_name == wanted.user and set(organizations) == set(wanted.groups)
