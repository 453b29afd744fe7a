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
the labelled cluster's agent asked, its subject (user, groups, units) is the one the
template names, and it asks for no other name than the add-on's DNS name: any other
request would get a certificate the add-on's CA vouches for, for a name of the
requester's choosing. A CustomSigner registration naming a ``kubernetes.io/`` signer is
not honoured at all (it would be the hub's own CA signing a subject of the template's
choice).

Every callback reads the MCA's desired template as cached at that moment, so a new
template version takes effect at the next pass.
"""

from __future__ import annotations

import base64
import binascii
import logging
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
    requester,
)
from pyocm.addon.registration.permissions import (
    CurrentCluster,
    HubPermission,
    SingleNamespace,
    permission_binding,
)
from pyocm.addon.registration.sign import DEFAULT_CA_NAMESPACE, ca_secret_signer, refused
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
from pyocm.pki.csr import CsrError, parse_csr
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure

log = logging.getLogger(__name__)
KUBE_CLIENT = "KubeClient"
CUSTOM_SIGNER = "CustomSigner"
#: Who upstream's add-on manager is (see ``_may_read_ca``).
ADDON_MANAGER_USER = "system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa"
ADDON_MANAGER_GROUPS = (
    "system:serviceaccounts",
    "system:serviceaccounts:open-cluster-management-hub",
    "system:authenticated",
)
#: Signers a CustomSigner registration may not name (see ``_custom_signer``).
KUBERNETES_SIGNERS = "kubernetes.io/"


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
            elif _custom_signer(registration):
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
                _custom_signer(registration)
                and signer == registration["customSigner"]["signerName"]
            ):
                configs = await self.configurations(cluster, addon)
                wanted = next(c.subject for c in configs if c.signer_name == signer)
                return _asked_by_agent_for(csr, cluster, self.addon, wanted)
        return False

    async def sign(
        self, api: Api, cluster: ManagedCluster, addon: ManagedClusterAddOn, csr: Obj
    ) -> bytes:
        """``TemplateCSRSignFunc``: sign with the CA of the registration naming the
        CSR's signer (b"" when none does)."""
        template = self._template("CSRSign", cluster, addon)
        signer = shapes.mapping(csr.get("spec")).get("signerName")
        for registration in _registrations(template):
            if not _custom_signer(registration):
                continue
            config = registration["customSigner"]
            if config["signerName"] != signer:
                continue
            ca = config.get("signingCA") or {"name": ""}
            name, namespace = ca.get("name", ""), ca.get("namespace") or DEFAULT_CA_NAMESPACE
            await _may_read_ca(api, namespace, name)
            signing = ca_secret_signer(
                signer_name=config["signerName"], secret=name, namespace=namespace, clock=self.clock
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


async def _may_read_ca(api: Api, namespace: str, name: str) -> None:
    """Refuse to sign unless upstream's add-on manager could read the CA Secret.

    Upstream reads it as ``addon-manager-controller-sa``, which has no right to Secrets
    until someone grants it (the seed's signca-secret-role.yaml and rolebinding do):
    a template author cannot have the hub sign with a CA they could not name otherwise.
    pyocm's add-on manager runs with the hub's rights, so it asks whether that identity
    may ``get`` the Secret and refuses as upstream's failed read would say."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": ADDON_MANAGER_USER,
            "groups": list(ADDON_MANAGER_GROUPS),
            "resourceAttributes": {
                "namespace": namespace,
                "verb": "get",
                "resource": "secrets",
                "name": name,
            },
        },
    }
    answer = await api.create(kinds.SUBJECT_ACCESS_REVIEW, review)
    if not shapes.mapping(answer.get("status")).get("allowed"):
        raise refused(
            f'get custom signer ca {namespace}/{name} failed: secrets "{name}" is forbidden: '
            f'User "{ADDON_MANAGER_USER}" cannot get resource "secrets" in API group "" '
            f'in the namespace "{namespace}"'
        )


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


def _custom_signer(registration: AddOnTemplateSpecRegistrationItem) -> bool:
    """A CustomSigner registration pyocm honours: one naming a Kubernetes signer
    (``kubernetes.io/...``, the hub's own client signer among them) would have the hub
    issue a hub credential for a subject the template chooses, so it is skipped (logged);
    upstream approves it."""
    if registration["type"] != CUSTOM_SIGNER or "customSigner" not in registration:
        return False
    signer = registration["customSigner"]["signerName"]
    if signer.startswith(KUBERNETES_SIGNERS):
        log.warning("CustomSigner registration with signer %s skipped: a Kubernetes signer", signer)
        return False
    return True


def _registrations(template: AddOnTemplate) -> Sequence[AddOnTemplateSpecRegistrationItem]:
    return template["spec"].get("registration") or []


def _asked_by_agent_for(csr: Obj, cluster: ManagedCluster, addon: str, wanted: Subject) -> bool:
    """The cluster's agent asked for exactly the subject ``wanted`` (user, groups and
    units), with no name but the add-on's own DNS name, which pyocm's agents put in."""
    if not is_cluster_agent(requester(csr), cluster["metadata"]["name"]):
        return False
    spec = shapes.mapping(csr.get("spec"))
    try:
        info = parse_csr(base64.b64decode(str(spec.get("request") or ""), validate=True))
    except (CsrError, binascii.Error, ValueError):
        return False
    return (
        info.common_name == wanted.user
        and set(info.organizations) == set(wanted.groups)
        and set(info.organizational_units) == set(wanted.organization_units)
        and set(info.dns_names) <= {f"{addon}.addon.open-cluster-management.io"}
        and not (info.ips or info.emails or info.uris)
    )
