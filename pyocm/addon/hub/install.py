"""The Placements install strategy (upstream ``addonmanagement``'s install reconciler).

For a ClusterManagementAddOn the add-on manager manages, with install strategy
Placements: the clusters every strategy placement's PlacementDecisions name (placements
that do not exist are skipped) each get an MCA ``{name: <cma>, namespace: <cluster>}``
owned by the CMA and carrying the cluster's ``addon.open-cluster-management.io*``
annotations. A deleted MCA of a selected cluster is created again on the next pass.

When a cluster leaves the placements, its MCA is deleted only if the strategy created
it: the issue asks that an MCA a user created stays. The strategy marks what it
creates with the annotation ``addons.pyocm.io/installed-by: install-strategy``; an MCA
without it (created by a user, by a tool, or by upstream's manager before pyocm's ran)
is the user's. Upstream deletes every MCA of the add-on that no placement selects,
whoever created it. A user adopts a strategy's MCA by removing the annotation.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from pyocm.addon.hub import common
from pyocm.api import kinds as ocm
from pyocm.api import models, wellknown
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn, ClusterManagementAddOnSpec
from pyocm.api.models.cluster_v1beta1 import PlacementDecision
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
CONTROLLER_NAME = "addon-management-controller"
#: PlacementDecision informer index: ``<namespace>/<placement>``.
DECISIONS_BY_PLACEMENT = "addonDecisionsByPlacement"


def decisions_by_placement(obj: common.Obj) -> list[str]:
    placement = (obj["metadata"].get("labels") or {}).get(common.PLACEMENT_LABEL)
    return [f"{obj['metadata'].get('namespace', '')}/{placement}"] if placement else []


def selected_clusters(decisions: Iterable[PlacementDecision]) -> set[str]:
    return {
        d["clusterName"] for pd in decisions for d in pd.get("status", {}).get("decisions") or []
    }


def installed_by_strategy(mca: common.Obj) -> bool:
    annotations = mca["metadata"].get("annotations") or {}
    return bool(
        annotations.get(wellknown.ADDON_INSTALLED_BY_ANNOTATION)
        == wellknown.ADDON_INSTALLED_BY_STRATEGY
    )


class InstallError(Exception):
    """Some MCAs could not be created or deleted (the rest were)."""


@dataclass
class InstallController:
    api: Api
    cmas: Informer
    mcas: Informer
    clusters: Informer
    placements: Informer
    decisions: Informer

    async def reconcile(self, name: str) -> None:
        cma = models.view(ClusterManagementAddOn, self.cmas.store.get(name))
        if cma is None or not common.managed_by_addon_manager(cma):
            return
        if not common.placements_strategy(cma):
            return
        existing = {
            m["metadata"]["namespace"]: m
            for m in self.mcas.store.by_index(common.MCA_BY_NAME, name)
        }
        required = self.required_clusters(cma["spec"])
        errors: list[str] = []
        for cluster in sorted(required - existing.keys()):
            await self._create(cma, cluster, errors)
        for cluster in sorted(existing.keys() - required):
            if not installed_by_strategy(existing[cluster]):
                continue
            try:
                await self.api.delete(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
            except ApiError as err:
                if err.code != 404:
                    errors.append(f"{cluster}: {err.message}")
        if errors:
            raise InstallError("; ".join(errors))

    def required_clusters(self, spec: ClusterManagementAddOnSpec) -> set[str]:
        """The clusters the strategy's placements decided (``getAllDecisions``)."""
        required: set[str] = set()
        for strategy in spec.get("installStrategy", {}).get("placements") or []:
            key = f"{strategy['namespace']}/{strategy['name']}"
            if self.placements.store.get(key) is None:
                log.debug("placement %s of an add-on install strategy not found", key)
                continue
            found = self.decisions.store.by_index(DECISIONS_BY_PLACEMENT, key)
            required |= selected_clusters(models.view(PlacementDecision, d) for d in found)
        return required

    async def _create(self, cma: ClusterManagementAddOn, cluster: str, errors: list[str]) -> None:
        managed = self.clusters.store.get(cluster)
        if managed is None:
            # Upstream's lister Get fails: the MCA waits for the cluster (retried).
            errors.append(
                f'managedcluster.cluster.open-cluster-management.io "{cluster}" not found'
            )
            return
        meta: common.Obj = {
            "name": cma["metadata"]["name"],
            "namespace": cluster,
            "ownerReferences": [common.owner_reference(cma)],
        }
        meta["annotations"] = {
            **common.addon_annotations(managed["metadata"].get("annotations")),
            wellknown.ADDON_INSTALLED_BY_ANNOTATION: wellknown.ADDON_INSTALLED_BY_STRATEGY,
        }
        mca = {
            "apiVersion": ocm.MANAGED_CLUSTER_ADDON.api_version,
            "kind": ocm.MANAGED_CLUSTER_ADDON.kind,
            "metadata": meta,
            "spec": {},
        }
        try:
            await self.api.create(ocm.MANAGED_CLUSTER_ADDON, mca)
        except ApiError as err:
            if err.code != 409:
                errors.append(f"{cluster}: {err.message}")
