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
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager

#: Upstream's reporting controller name for its events.
EVENT_SOURCE = "placement-controller"
CONTROLLER_NAME = "SchedulingController"
#: Seconds a placement woken by a cluster change waits, so a burst of cluster changes
#: (a fleet joining, a relabelling) costs one pass per placement.
CLUSTER_DELAY = 0.5


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
        decisions=informers.decisions,
        unaffected=scheduling.unaffected,
    )
    controller.watch(informers.placements)
    controller.watch(informers.decisions, enqueuer.for_decision)
    controller.watch(informers.bindings, enqueuer.for_binding)
    controller.watch(informers.cluster_sets, enqueuer.for_cluster_set)

    # A cluster change is judged as a whole (old and new together), not object by object
    # as watch's mappers are: a handler of its own. The watch below maps nothing; it is
    # there so the controller waits for the cluster cache before its first pass.
    def on_cluster(change: Change) -> None:
        if cluster_may_matter(change):
            for key in enqueuer.for_cluster_change(change):
                controller.enqueue(key, after=CLUSTER_DELAY)

    informers.clusters.add_handler(on_cluster)
    controller.watch(informers.clusters, _no_keys)
    controller.watch(informers.scores, enqueuer.for_score)
    return controller


def _no_keys(_cluster: object) -> list[str]:
    return []
