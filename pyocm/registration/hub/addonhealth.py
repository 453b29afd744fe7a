"""Add-ons of a cluster whose agent went silent are of unknown health too.

On the managed cluster the registration agent reports its add-ons' health (their
Leases). When the hub no longer hears from it (its cluster's ``Available`` is
Unknown: the lease controller's verdict), nobody will, so every ManagedClusterAddOn in
the cluster namespace gets ``Available`` Unknown with the cluster's own reason and
message, as upstream's ``managedClusterAddOnHealthCheckController`` writes them. A
cluster Available False (its API server unhealthy) is left to each add-on, and so is a
cluster Available True.
"""

from __future__ import annotations

import logging
from typing import Any

from pyocm.api import cluster_v1, conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.runtime import malformed
from pyocm.runtime.cache import by_namespace
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.manager import Manager
from pyocm.runtime.status import set_condition

log = logging.getLogger(__name__)
#: The MCA cache by namespace, shared with the add-on deploy controller's index of the
#: same name (one name means one function).
MCA_BY_NAMESPACE = "managedClusterAddonByNamespace"


class AddonHealthController:
    """Keyed by cluster name: the root kind is the ManagedCluster, as upstream's."""

    def __init__(self, api: Api, clusters: Informer, mcas: Informer, *, clock: Clock) -> None:
        self.api = api
        self.clock = clock
        self.clusters = clusters
        self.mcas = mcas.add_index(MCA_BY_NAMESPACE, by_namespace)
        self.reader = malformed.TypedReader.of(cluster_v1.MANAGED_CLUSTER)

    async def reconcile(self, name: str) -> None:
        cluster = models.view(ManagedCluster, await self.reader.read(self.clusters.store.get(name)))
        if cluster is None:
            return
        available = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
        # No condition: not accepted or not reported yet. True or False: the agent is
        # there to report its add-ons itself.
        if available is None or available.get("status") != "Unknown":
            return
        failed: list[ApiError] = []
        for mca in self.mcas.store.by_index(MCA_BY_NAMESPACE, name):
            try:
                written = await set_condition(
                    self.api,
                    ocm.MANAGED_CLUSTER_ADDON,
                    mca,
                    clock=self.clock,
                    type=wellknown.ADDON_AVAILABLE,
                    status="Unknown",
                    reason=str(available.get("reason", "")),
                    message=str(available.get("message", "")),
                )
            except ApiError as err:
                # The others are still written, as upstream aggregates its errors.
                failed.append(err)
                continue
            if written is not mca:
                # Upstream's controller "event" only goes to its log.
                log.info(
                    'update addon "%s" status to unknown on managed cluster "%s"',
                    mca["metadata"]["name"],
                    name,
                )
        if failed:
            raise failed[0]


def _created(change: Change) -> bool:
    return change.old is None and change.new is not None


def add_addon_health_controller(manager: Manager) -> None:
    """Run the controller on every change of a cluster, as upstream, and also when an
    add-on is created: one created while its cluster is already Unknown is marked at
    once rather than at the next resync. Only creations: the hub's other add-on
    controllers may write Available too, and answering each of their writes would
    make the two fight."""
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    mcas = manager.informer(ocm.MANAGED_CLUSTER_ADDON)
    health = AddonHealthController(manager.api, clusters, mcas, clock=manager.clock)
    controller = manager.controller("addon-healthcheck", health.reconcile)
    controller.watch(clusters)
    controller.watch(mcas, _namespace_of, predicate=_created)


def _namespace_of(obj: dict[str, Any]) -> list[str]:
    namespace = obj.get("metadata", {}).get("namespace")
    return [namespace] if namespace else []
