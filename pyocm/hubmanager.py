"""Every hub controller pyocm has, in one manager: what ``pyocm hub``, ``pyocm controller``
and ``pyocm up`` run. Each feature adds its controllers here; none imports another."""

from __future__ import annotations

from collections.abc import Sequence

from pyocm.base.clock import Clock
from pyocm.clustersets.controllers import add_clusterset_controllers
from pyocm.placement.manager import EVENT_SOURCE, add_placement_controllers
from pyocm.registration.hub.approvers import CsrApprover
from pyocm.registration.hub.manager import HubOptions, build_hub_manager
from pyocm.registration.hub.signers import SignerRegistry
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.manager import Manager
from pyocm.work.hub.gc import add_work_controllers


def build(
    api: Api,
    *,
    options: HubOptions | None = None,
    clock: Clock | None = None,
    approvers: Sequence[CsrApprover] = (),
    signers: SignerRegistry | None = None,
) -> Manager:
    """``approvers`` and ``signers``: an add-on's CSR rules and custom signers
    (:func:`~pyocm.registration.hub.manager.build_hub_manager`)."""
    options = options or HubOptions()
    manager = build_hub_manager(
        api, options=options, clock=clock, approvers=approvers, signers=signers
    )
    recorder = Recorder(
        api, controller="clusterset-controller", instance=options.identity, clock=manager.clock
    )
    add_clusterset_controllers(
        manager, recorder=recorder, default_sets=options.gate("DefaultClusterSet")
    )
    add_work_controllers(manager, replica_sets=options.gate("ManifestWorkReplicaSet"))
    add_placement_controllers(
        manager,
        recorder=Recorder(
            api, controller=EVENT_SOURCE, instance=options.identity, clock=manager.clock
        ),
    )
    return manager
