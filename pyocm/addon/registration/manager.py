"""Wire the add-on registration controllers into a hub manager.

Add-on CSRs for the kube-apiserver-client signer go through the hub's CSR approval
chain: the :class:`~pyocm.addon.registration.approve.AddonCsrApprover` is built first
and handed to the hub manager with its approvers, then bound here to this manager's
caches. CustomSigner CSRs, whose signers only the add-ons know, come through an
informer of their own, approved through the same chain and signed by their add-on::

    addons = {"hello": HelloAddon()}
    approver = AddonCsrApprover(addons)
    manager = build_hub_manager(api, approvers=[approver])
    add_addon_registration_controllers(manager, addons=addons, recorder=recorder, approver=approver)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.addon.agent import KUBE_CLIENT_SIGNER, AgentAddon
from pyocm.addon.registration.approve import AddonCsrApprover
from pyocm.addon.registration.controller import CONTROLLER_NAME, RegistrationController
from pyocm.addon.registration.signing import AddonCsrSigningController
from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.registration.hub.csrapproval import CsrApprovalController
from pyocm.runtime.cache import key_of
from pyocm.runtime.controller import Controller
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager


def add_addon_registration_controllers(
    manager: Manager,
    *,
    addons: Mapping[str, AgentAddon],
    recorder: Recorder,
    approver: AddonCsrApprover,
) -> Controller:
    """Add the registration, custom-signer approval and signing controllers for
    ``addons`` (add-on name -> AgentAddon); ``approver`` must be among the hub
    manager's approvers for kube-apiserver-client add-on CSRs to be approved. Returns
    the registration controller (keys ``<cluster>/<addon>``)."""
    api, clock = manager.api, manager.clock
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    mcas = manager.informer(ocm.MANAGED_CLUSTER_ADDON)
    approver.bind(clusters=clusters.store, addons=mcas.store)

    def known(change: Change) -> bool:
        return change.obj["metadata"]["name"] in addons

    registration = RegistrationController(
        api, addons=addons, clusters=clusters, mcas=mcas, clock=clock
    )
    controller = manager.controller(CONTROLLER_NAME, registration.reconcile)
    controller.watch(mcas, predicate=known)

    # A cluster that comes after its add-ons (upstream waits for the add-on's next
    # resync): its add-ons' keys, once it exists.
    def cluster_addons(cluster: dict[str, Any]) -> list[str]:
        name = key_of(cluster)
        return [f"{name}/{addon}" for addon in addons if mcas.store.get(f"{name}/{addon}")]

    controller.watch(clusters, cluster_addons, predicate=lambda c: c.old is None)

    custom = manager.informer(
        kinds.CSR,
        fields=f"spec.signerName!={KUBE_CLIENT_SIGNER}",
        labels=wellknown.ADDON_NAME_LABEL,
    )
    approval = CsrApprovalController(
        api, custom, clusters, clock=clock, recorder=recorder, approvers=[approver]
    )
    manager.controller("addon-custom-signer-csr-approval", approval.reconcile).watch(custom)
    signing = AddonCsrSigningController(
        api,
        addons=addons,
        csrs=custom,
        clusters=clusters,
        mcas=mcas,
        recorder=recorder,
        clock=clock,
    )
    manager.controller("addon-csr-signing", signing.reconcile).watch(custom)
    return controller
