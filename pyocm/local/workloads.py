"""Simulated workload status on an embedded managed cluster, in the spirit of kwok.

An embedded cluster has no kubelet and no kube controllers, so a Deployment a
ManifestWork puts there would never become ready. :class:`SimulatedWorkloads` writes the
status a healthy cluster would (:func:`pyocm.kube.workloadsim.simulated_status`: replicas
ready and available, Jobs complete, Pods Running and Ready, claims Bound) through each
object's ``status`` subresource. It is a simulation: no container runs. Every condition
it writes says so in its message, and :func:`label_cluster` publishes the ClusterClaim
``workloads.pyocm.io: simulated``, which the registration agent reports on the hub's
ManagedCluster and ``pyocm get clusters`` shows. A cluster joined with
``--managed-kubeconfig`` (a real one, whose kubelet does the work) never runs it.

One level-based controller per kind, over the Manager's informers: a reconcile reads the
object from the API, computes its simulated status and writes it only when it differs
from the stored one (a Conflict from a concurrent writer is retried by the controller).
DaemonSets are also reconciled when Nodes come or go, since they count them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models
from pyocm.api.models.cluster_v1alpha1 import ClusterClaim
from pyocm.base.clock import Clock
from pyocm.kube import kinds as kube
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.kube.workloadsim import SimulationError, simulated_status
from pyocm.runtime.cache import split_key
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer
from pyocm.runtime.manager import Manager

log = logging.getLogger(__name__)
Obj = dict[str, Any]

#: The kinds given a simulated status (see pyocm.kube.workloadsim for those left alone).
SIMULATED_KINDS: tuple[Kind, ...] = (
    kube.DEPLOYMENT,
    kube.REPLICA_SET,
    kube.STATEFUL_SET,
    kube.DAEMON_SET,
    kube.JOB,
    kube.POD,
    kube.PERSISTENT_VOLUME_CLAIM,
)
#: The ClusterClaim an embedded cluster with simulated workloads publishes, and its value.
CLAIM_NAME = "workloads.pyocm.io"
CLAIM_SIMULATED = "simulated"


class SimulatedWorkloads:
    """Run with :meth:`run` (until cancelled); ``kinds`` narrows what is simulated."""

    def __init__(
        self,
        api: Api,
        *,
        clock: Clock | None = None,
        kinds: Iterable[Kind] = SIMULATED_KINDS,
    ) -> None:
        self.api = api
        self.manager = Manager(api, clock=clock)
        self.clock = self.manager.clock
        self.nodes = self.manager.informer(kube.NODE)
        for kind in kinds:
            informer = self.manager.informer(kind)
            controller = self.manager.controller(
                f"simulated-{kind.plural}", partial(self.reconcile, kind)
            )
            controller.watch(informer)
            if kind == kube.DAEMON_SET:
                controller.watch(self.nodes, partial(_every_key, informer))

    async def run(self) -> None:
        await self.manager.run()

    async def reconcile(self, kind: Kind, key: str) -> None:
        """Write ``key``'s simulated status if the stored one differs."""
        namespace, name = split_key(key)
        try:
            obj = await self.api.get(kind, name, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                return
            raise
        try:
            status = simulated_status(kind, obj, nodes=len(self.nodes.store), now=self.clock.now())
        except SimulationError as err:
            # Retrying cannot help: the object must change first, and a change wakes us.
            log.warning("%s %s: no simulated status: %s", kind.kind, key, err)
            return
        if status is None or status == obj.get("status"):
            return
        # The stored resourceVersion rides along: a concurrent write makes this a
        # Conflict, and the controller looks again at the fresh object.
        await self.api.update(kind, {**obj, "status": status}, subresource="status")


async def label_cluster(api: Api, *, simulated: bool) -> None:
    """Publish the :data:`CLAIM_NAME` ClusterClaim when workloads are simulated, and take
    it away when they are not (a data dir may be reused with the simulation off)."""
    if simulated:
        claim: ClusterClaim = {
            "metadata": {"name": CLAIM_NAME},
            "spec": {"value": CLAIM_SIMULATED},
        }
        try:
            await api.create(ocm.CLUSTER_CLAIM, models.wire(claim))
        except ApiError as err:
            if err.code != 409:
                raise
            await api.patch(ocm.CLUSTER_CLAIM, CLAIM_NAME, {"spec": {"value": CLAIM_SIMULATED}})
        return
    try:
        await api.delete(ocm.CLUSTER_CLAIM, CLAIM_NAME)
    except ApiError as err:
        if err.code != 404:
            raise


def _every_key(informer: Informer, _node: Obj) -> list[str]:
    """Any Node change concerns every DaemonSet."""
    return list(informer.store)
