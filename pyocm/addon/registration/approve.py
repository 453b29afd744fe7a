"""Approving add-on agents' CSRs: upstream's default rules, and the approver the hub's
CSR approval chain asks (pyocm/registration/hub/approvers.py).

An add-on CSR is one named ``addon*`` whose ``open-cluster-management.io/addon-name``
label names a registered add-on (upstream's ``csrApprovingController`` filter). Its
add-on's ``approve`` callback (``CSRApproveCheck``) decides, given the cluster and the
ManagedClusterAddOn the CSR's labels name; with no callback, or no such cluster or
add-on, the CSR stays pending. :func:`default_csr_approver` is upstream's
``DefaultCSRApprover``: the subject must be the add-on agent's default user and groups
for the labelled cluster and add-on, and the requester the cluster's agent.

Two checks are pyocm's, so that no CSR gets a subject outside its add-on and cluster:

* the requester must be the labelled cluster's agent, ``system:open-cluster-management:
  <cluster>:<agent>``; upstream checks only that prefix, which the agent of a cluster
  named ``<cluster>x`` also has;
* the CSR's signer must be one the ManagedClusterAddOn's ``status.registrations``
  names, whatever the add-on's own callback would say (agents ask only for those).
"""

from __future__ import annotations

import base64
import binascii
import copy
import logging
from collections.abc import Mapping

from pyocm.addon.agent import (
    KUBE_CLIENT_SIGNER,
    PREFIX,
    AgentAddon,
    CsrApprove,
    Obj,
    default_groups,
    default_user,
)
from pyocm.api import models, shapes, wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.pki.csr import CsrError, read_subject
from pyocm.registration.hub.approvers import DECLINE, Verdict, approve
from pyocm.runtime.cache import Store

log = logging.getLogger(__name__)
#: The one group besides the defaults an agent's request may name.
AUTHENTICATED = "system:authenticated"

#: The condition's message upstream's add-on approver writes.
APPROVE_MESSAGE = "Auto approving addon agent certificate."
#: The reason of the event pyocm records when it approves an add-on CSR.
APPROVE_EVENT_REASON = "AddonCSRAutoApproved"
#: The gRPC server's identity: it creates CSRs on behalf of agents, who are named in
#: this annotation (upstream's ``CSRUsernameAnnotation``).
GRPC_SERVICE_ACCOUNT = "system:serviceaccount:open-cluster-management-hub:grpc-server-sa"
CSR_USERNAME_ANNOTATION = "open-cluster-management.io/csr-user"


def requester(csr: Mapping[str, object]) -> str:
    """Who asked for ``csr``: ``spec.username``, or for the gRPC server the agent it names."""
    username = str(shapes.mapping(csr.get("spec")).get("username") or "")
    if username != GRPC_SERVICE_ACCOUNT:
        return username
    annotations = shapes.string_map(shapes.mapping(csr.get("metadata")).get("annotations"))
    return annotations.get(CSR_USERNAME_ANNOTATION, "")


def is_cluster_agent(username: str, cluster: str) -> bool:
    """``system:open-cluster-management:<cluster>:<agent>``: upstream's prefix check, with
    the cluster name ending where the prefix does (see the module docstring)."""
    rest = username.removeprefix(f"{PREFIX}{cluster}")
    if rest == username or not rest.startswith(":"):
        return False
    agent = rest[1:]
    return bool(agent) and ":" not in agent


def request_subject(csr: Mapping[str, object]) -> tuple[str, tuple[str, ...]] | None:
    """(CN, O) of the CSR's request, or None when it is no readable request."""
    spec = shapes.mapping(csr.get("spec"))
    try:
        return read_subject(base64.b64decode(str(spec.get("request") or ""), validate=True))
    except (CsrError, binascii.Error, ValueError):
        return None


def default_csr_approver(agent: str) -> CsrApprove:
    """``DefaultCSRApprover(agentName)``: approve when the request's O holds both default
    groups among 2 or 3 distinct entries (the third was ``system:authenticated``), its CN
    is the default user for ``agent``, and the cluster's agent asked."""

    async def check(cluster: ManagedCluster, addon: ManagedClusterAddOn, csr: Obj) -> bool:
        cluster_name = cluster["metadata"]["name"]
        addon_name = addon["metadata"]["name"]
        name = csr["metadata"]["name"]
        subject = request_subject(csr)
        if subject is None:
            log.info("CSR Approve Check Failed csr %s was not recognized", name)
            return False
        common_name, organizations = subject
        orgs = set(organizations)
        if len(orgs) not in (2, 3):
            log.info("CSR Approve Check Failed csr %s org count is %d", name, len(orgs))
            return False
        wanted = default_groups(cluster_name, addon_name)
        missing = [g for g in wanted if g not in orgs]
        if missing:
            log.info("CSR Approve Check Failed csr %s orgs lack %s", name, missing[0])
            return False
        # Upstream allows any third group (it was meant for system:authenticated); any
        # other would put the agent in a group the hub grants more to, such as another
        # cluster's: only that one is allowed here.
        if orgs - {*wanted, AUTHENTICATED}:
            log.info("CSR Approve Check Failed csr %s asks for another group", name)
            return False
        if common_name != default_user(cluster_name, addon_name, agent):
            log.info("CSR Approve Check Failed csr %s commonName not right", name)
            return False
        if not is_cluster_agent(requester(csr), cluster_name):
            log.info("CSR %s for cluster %s not approved: illegal requester", name, cluster_name)
            return False
        return True

    return check


def kube_client_csr_approver(agent: str) -> CsrApprove:
    """``KubeClientCSRApprover``: the default rules, for kube-apiserver-client CSRs only."""
    rules = default_csr_approver(agent)

    async def check(cluster: ManagedCluster, addon: ManagedClusterAddOn, csr: Obj) -> bool:
        signer = shapes.mapping(csr.get("spec")).get("signerName")
        return signer == KUBE_CLIENT_SIGNER and await rules(cluster, addon, csr)

    return check


def registered_signers(addon: ManagedClusterAddOn) -> set[str]:
    """The signers the ManagedClusterAddOn's ``status.registrations`` name."""
    signers: set[str] = set()
    for registration in addon.get("status", {}).get("registrations") or []:
        if registration.get("type") == "kubeClient":
            signers.add(KUBE_CLIENT_SIGNER)
        elif registration.get("type") == "customSigner":
            signers.add(registration.get("customSigner", {}).get("signerName", ""))
    return signers


def addon_of(csr: Mapping[str, object], addons: Mapping[str, AgentAddon]) -> str | None:
    """The registered add-on whose CSR this is (upstream's filter), else None."""
    meta = shapes.mapping(csr.get("metadata"))
    if not str(meta.get("name") or "").startswith("addon"):
        return None
    name = shapes.string_map(meta.get("labels")).get(wellknown.ADDON_NAME_LABEL)
    return name if name in addons else None


class AddonCsrApprover:
    """The hub CSR approval chain's approver for add-on CSRs.

    It reads clusters and ManagedClusterAddOns from the add-on manager's caches, which
    :func:`~pyocm.addon.registration.manager.add_addon_registration_controllers` binds
    (the hub's manager is built with its approvers before add-on controllers join it)."""

    def __init__(self, addons: Mapping[str, AgentAddon]) -> None:
        self.addons = addons
        self._clusters: Store | None = None
        self._addons: Store | None = None

    def bind(self, *, clusters: Store, addons: Store) -> None:
        self._clusters, self._addons = clusters, addons

    async def review(self, csr: Obj) -> Verdict | None:
        addon_name = addon_of(csr, self.addons)
        if addon_name is None:
            return None
        if self._clusters is None or self._addons is None:
            raise RuntimeError("AddonCsrApprover used before add_addon_registration_controllers")
        options = self.addons[addon_name].options()
        registration = options.registration
        labels = shapes.string_map(shapes.mapping(csr.get("metadata")).get("labels"))
        cluster_name = labels.get(wellknown.CLUSTER_NAME_LABEL)
        if registration is None or registration.approve is None or not cluster_name:
            return DECLINE
        cluster = self._clusters.get(cluster_name)
        addon = self._addons.get(f"{cluster_name}/{addon_name}")
        if cluster is None or addon is None:
            return DECLINE
        typed = models.view(ManagedClusterAddOn, copy.deepcopy(addon))
        if not options.accepts(typed):
            return DECLINE
        signer = shapes.mapping(csr.get("spec")).get("signerName")
        if signer not in registered_signers(typed):
            name = shapes.mapping(csr.get("metadata")).get("name")
            log.info("not approving CSR %s: %s is no signer of its add-on", name, signer)
            return DECLINE
        approved = await registration.approve(
            models.view(ManagedCluster, copy.deepcopy(cluster)), typed, copy.deepcopy(csr)
        )
        return approve(APPROVE_EVENT_REASON, APPROVE_MESSAGE) if approved else DECLINE
