"""Every add-on controller of the hub, in one call: what ``pyocm hub``, ``pyocm
controller`` and ``pyocm up`` run (upstream's ocm addon-manager, plus the framework
managers of the add-ons pyocm itself implements).

* For every ClusterManagementAddOn the add-on manager manages (lifecycle annotation
  absent or ``addon-manager``): install strategies, owners, annotations, configuration
  and rollout, progressing (:mod:`pyocm.addon.hub`). An add-on with a manager of its own
  (upstream's Go add-on managers) needs no more than this from the hub.
* For the add-ons implemented in pyocm (``addons``, by name) and the template add-ons
  (seed 003: a CMA whose default configs name an AddOnTemplate, :mod:`pyocm.addon.template`):
  registration (status, CSR approval and signing, hub permissions), deployment through
  ManifestWork and health (:mod:`pyocm.addon.registration`, :mod:`pyocm.addon.deploy`),
  all looked up in one :class:`~pyocm.addon.registry.AddonRegistry`.

Add-on CSRs for the hub's own signer are approved in the hub's CSR approval chain, which
the registration manager builds: create the approver with :func:`addon_approver` before
the hub manager and hand it to both.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyocm.addon.agent import (
    ADDON_DEPLOYMENT_CONFIG,
    ADDON_TEMPLATE,
    KUBE_CLIENT_SIGNER,
    AgentAddon,
)
from pyocm.addon.deploy.manager import add_addon_deploy_controllers
from pyocm.addon.hub import common, hashes
from pyocm.addon.hub.manager import add_addon_manager_controllers
from pyocm.addon.registration.approve import AddonCsrApprover
from pyocm.addon.registration.manager import add_addon_registration_controllers
from pyocm.addon.registry import AddonRegistry
from pyocm.addon.template.agent import Caches, TemplateAddon
from pyocm.addon.template.controller import (
    CONTROLLER_NAME,
    MISSING_CONTROLLER_NAME,
    TemplateAddonController,
    references_template,
)
from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.runtime.controller import Controller
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager

#: The controllers judging add-on CSRs: the hub's approval chain (kube-apiserver-client),
#: the custom signers' approval, and their signing.
CSR_CONTROLLERS = ("csr-approval", "addon-custom-signer-csr-approval", "addon-csr-signing")
#: Upstream's event source for the add-on manager's events.
EVENT_SOURCE = "addon-manager-controller"


def addon_approver(addons: Mapping[str, AgentAddon]) -> AddonCsrApprover:
    """The CSR approver of ``addons`` (pass the :class:`AddonRegistry` the controllers
    get, so template add-ons are approved too), for the hub manager's approval chain."""
    return AddonCsrApprover(addons)


def add_addon_controllers(
    manager: Manager,
    *,
    addons: AddonRegistry,
    approver: AddonCsrApprover,
    identity: str,
) -> None:
    """Add every add-on controller to ``manager``; ``approver`` must be in its CSR
    approval chain (:func:`addon_approver`)."""
    recorder = Recorder(
        manager.api, controller=EVENT_SOURCE, instance=identity, clock=manager.clock
    )
    made = add_addon_manager_controllers(manager, recorder=recorder, addons=addons)
    registration = add_addon_registration_controllers(
        manager, addons=addons, recorder=recorder, approver=approver
    )
    deploy = add_addon_deploy_controllers(manager, addons=addons)
    templates = add_template_controller(manager, registry=addons)
    by_mca = [
        registration,
        deploy,
        *manager.controllers_named(MISSING_CONTROLLER_NAME),
        *(c for c in made if c.name == hashes.MCA_CONTROLLER_NAME),
    ]
    by_name = [templates, *(c for c in made if c.name == hashes.CMA_CONTROLLER_NAME)]
    mcas = manager.informer(ocm.MANAGED_CLUSTER_ADDON)
    by_csr = [c for name in CSR_CONTROLLERS for c in manager.controllers_named(name)]
    csrs = [
        manager.informer(kinds.CSR, fields=f"spec.signerName={KUBE_CLIENT_SIGNER}"),
        manager.informer(
            kinds.CSR,
            fields=f"spec.signerName!={KUBE_CLIENT_SIGNER}",
            labels=wellknown.ADDON_NAME_LABEL,
        ),
    ]

    def added(name: str) -> None:
        """Upstream's ``Trigger`` when a template add-on's manager starts: its MCAs are
        looked at again by the controllers that skipped them until now, and so are its
        CSRs (pending or unsigned ones the approval and signing controllers passed over
        before it joined, after a hub restart say: they have no resync)."""
        for key in mcas.store.index_keys(common.MCA_BY_NAME, name):
            for controller in by_mca:
                controller.enqueue(key)
        for controller in by_name:
            controller.enqueue(name)
        for informer in csrs:
            for csr in informer.store.objects():
                labels = csr["metadata"].get("labels") or {}
                if labels.get(wellknown.ADDON_NAME_LABEL) == name:
                    for controller in by_csr:
                        controller.enqueue(csr["metadata"]["name"])

    addons.on_added(added)


def add_template_controller(manager: Manager, *, registry: AddonRegistry) -> Controller:
    """The controller starting and stopping template add-ons in ``registry``."""
    cmas = manager.informer(ocm.CLUSTER_MANAGEMENT_ADDON)
    mcas = common.index_mcas(manager.informer(ocm.MANAGED_CLUSTER_ADDON))
    mcas.add_index(hashes.MCA_BY_CONFIG, hashes.mca_configs)
    templates = manager.informer(hashes.config_kind(ADDON_TEMPLATE))
    caches = Caches(
        templates=templates.store,
        deployment_configs=manager.informer(hashes.config_kind(ADDON_DEPLOYMENT_CONFIG)).store,
        cmas=cmas.store,
    )

    def make(name: str) -> TemplateAddon:
        return TemplateAddon(name, caches=caches, clock=manager.clock)

    control = TemplateAddonController(
        manager.api, registry, cmas, mcas, templates, make, manager.clock
    )
    controller = manager.controller(CONTROLLER_NAME, control.reconcile)
    controller.watch(cmas)
    # Only deletions matter here: the last MCA of an add-on gone lets it leave.
    controller.watch(mcas, common.mca_name, predicate=_deleted)
    missing = manager.controller(MISSING_CONTROLLER_NAME, control.report_missing_template)
    missing.watch(mcas, predicate=references_template)
    missing.watch(templates, control.mcas_of_template)
    return controller


def _deleted(change: Change) -> bool:
    return change.new is None
