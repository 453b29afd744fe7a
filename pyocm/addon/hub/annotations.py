"""A cluster's add-on annotations follow onto its MCAs (upstream ``addonannotation``).

When the ``addon.open-cluster-management.io*`` annotations of a ManagedCluster change
(``hosting-cluster-name``, say), each MCA in its namespace whose CMA installs through
Placements gets the same set: added, updated, and those the cluster no longer has
removed. Upstream looks at cluster updates only (the install strategy copies them when
it creates an MCA) and does not filter on the lifecycle annotation; neither does this.
The one key left alone is the install-namespace annotation (:data:`INSTALL_NAMESPACE`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.addon.hub import common
from pyocm.api import kinds as ocm
from pyocm.api import models, wellknown
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

CONTROLLER_NAME = "addon-annotation-controller"
#: Where v1beta1 keeps a v1alpha1 MCA's ``spec.installNamespace``: not a cluster's
#: annotation, though its key has the prefix. Upstream's sync removes it (and with it the
#: install namespace, moving the agent's credential); pyocm leaves it to the MCA.
INSTALL_NAMESPACE = wellknown.ADDON_INSTALL_NAMESPACE_ANNOTATION
MCA_BY_NAMESPACE = "namespace"


def annotations_changed(change: Change) -> bool:
    """An update of a cluster whose add-on annotations differ (adds and deletes are not
    looked at, as upstream's handler)."""
    if change.old is None or change.new is None:
        return False
    return common.addon_annotations(
        change.old["metadata"].get("annotations")
    ) != common.addon_annotations(change.new["metadata"].get("annotations"))


def sync_annotations(
    annotations: Mapping[str, str] | None, cluster: Mapping[str, str]
) -> dict[str, str] | None:
    """The MCA's annotations with its add-on ones made equal to ``cluster``'s, or None
    when they already are."""
    current = dict(annotations or {})
    wanted = {
        k: v
        for k, v in current.items()
        if k == INSTALL_NAMESPACE or k not in common.addon_annotations(current)
    }
    wanted.update({k: v for k, v in cluster.items() if k != INSTALL_NAMESPACE})
    return None if wanted == current else wanted


@dataclass
class AnnotationController:
    api: Api
    clusters: Informer
    mcas: Informer
    cmas: Informer

    async def reconcile(self, name: str) -> None:
        cluster = self.clusters.store.get(name)
        if cluster is None:
            return
        wanted = common.addon_annotations(cluster["metadata"].get("annotations"))
        errors: list[ApiError] = []
        for mca in self.mcas.store.by_index(MCA_BY_NAMESPACE, name):
            cma = models.view(ClusterManagementAddOn, self.cmas.store.get(mca["metadata"]["name"]))
            if cma is None or not common.placements_strategy(cma):
                continue
            annotations = sync_annotations(mca["metadata"].get("annotations"), wanted)
            if annotations is None:
                continue
            updated: dict[str, Any] = copy.deepcopy(mca)
            updated["metadata"]["annotations"] = annotations
            try:
                await self.api.update(ocm.MANAGED_CLUSTER_ADDON, updated)
            except ApiError as err:  # one MCA failing must not stop the others
                errors.append(err)
        if errors:
            raise errors[0]
