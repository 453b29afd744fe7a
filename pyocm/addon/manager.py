"""Every add-on controller of the hub, in one call: what ``pyocm hub``, ``pyocm
controller`` and ``pyocm up`` run (upstream's ocm addon-manager, plus the framework
managers of the add-ons pyocm itself implements).

* For every ClusterManagementAddOn the add-on manager manages (lifecycle annotation
  absent or ``addon-manager``): install strategies, owners, annotations, configuration
  and rollout, progressing (:mod:`pyocm.addon.hub`). An add-on with a manager of its own
  (upstream's Go add-on managers) needs no more than this from the hub.
* For the add-ons implemented in pyocm (``addons``, by name): registration (status,
  CSR approval and signing, hub permissions), deployment through ManifestWork and
  health (:mod:`pyocm.addon.registration`, :mod:`pyocm.addon.deploy`).

Add-on CSRs for the hub's own signer are approved in the hub's CSR approval chain, which
the registration manager builds: create the approver with :func:`addon_approver` before
the hub manager and hand it to both.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyocm.addon.agent import AgentAddon
from pyocm.addon.deploy.manager import add_addon_deploy_controllers
from pyocm.addon.hub.manager import add_addon_manager_controllers
from pyocm.addon.registration.approve import AddonCsrApprover
from pyocm.addon.registration.manager import add_addon_registration_controllers
from pyocm.runtime.events import Recorder
from pyocm.runtime.manager import Manager

#: Upstream's event source for the add-on manager's events.
EVENT_SOURCE = "addon-manager-controller"


def addon_approver(addons: Mapping[str, AgentAddon]) -> AddonCsrApprover:
    """The CSR approver of ``addons``, for the hub manager's approval chain."""
    return AddonCsrApprover(addons)


def add_addon_controllers(
    manager: Manager,
    *,
    addons: Mapping[str, AgentAddon],
    approver: AddonCsrApprover,
    identity: str,
) -> None:
    """Add every add-on controller to ``manager``; ``approver`` must be in its CSR
    approval chain (:func:`addon_approver`)."""
    recorder = Recorder(
        manager.api, controller=EVENT_SOURCE, instance=identity, clock=manager.clock
    )
    add_addon_manager_controllers(manager, recorder=recorder, addons=addons)
    if not addons:
        return
    add_addon_registration_controllers(manager, addons=addons, recorder=recorder, approver=approver)
    add_addon_deploy_controllers(manager, addons=addons.values())
