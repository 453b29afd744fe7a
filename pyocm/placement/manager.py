"""The placement controller's wiring into a hub manager (upstream's
``controllers/manager.go``): the informers it shares, the watches that wake it
(:mod:`pyocm.placement.enqueue`), one worker as upstream runs."""

from __future__ import annotations

from pyocm.api import kinds as ocm
from pyocm.placement.controller import Informers, SchedulingController
from pyocm.placement.decisions import DecisionWriter
from pyocm.placement.enqueue import Enqueuer, cluster_may_matter
from pyocm.runtime.controller import Controller
from pyocm.runtime.events import Recorder
from pyocm.runtime.manager import Manager

#: Upstream's reporting controller name for its events.
EVENT_SOURCE = "placement-controller"
CONTROLLER_NAME = "SchedulingController"


def add_placement_controllers(manager: Manager, *, recorder: Recorder) -> Controller:
    """Add the scheduling controller to ``manager``; ``recorder`` writes its events
    (upstream reports them as ``placement-controller``). Returns the controller."""
    informers = Informers(
        placements=manager.informer(ocm.PLACEMENT),
        decisions=manager.informer(ocm.PLACEMENT_DECISION),
        clusters=manager.informer(ocm.MANAGED_CLUSTER),
        cluster_sets=manager.informer(ocm.MANAGED_CLUSTER_SET),
        bindings=manager.informer(ocm.MANAGED_CLUSTER_SET_BINDING),
        scores=manager.informer(ocm.ADD_ON_PLACEMENT_SCORE),
    )
    writer = DecisionWriter(manager.api, informers.decisions, recorder=recorder)
    scheduling = SchedulingController(manager.api, informers, writer=writer, clock=manager.clock)
    controller = manager.controller(CONTROLLER_NAME, scheduling.reconcile)
    enqueuer = Enqueuer(
        placements=informers.placements,
        cluster_sets=informers.cluster_sets,
        bindings=informers.bindings,
        clusters=informers.clusters,
    )
    controller.watch(informers.placements)
    controller.watch(informers.decisions, enqueuer.for_decision)
    controller.watch(informers.bindings, enqueuer.for_binding)
    controller.watch(informers.cluster_sets, enqueuer.for_cluster_set)
    controller.watch(informers.clusters, enqueuer.for_cluster, predicate=cluster_may_matter)
    controller.watch(informers.scores, enqueuer.for_score)
    return controller
