"""Labels the agent publishes on its own ManagedCluster (ClusterSet Override design, seed 002).

What an agent knows about its cluster (region, cloud, middleware enabled) can select it
into sets, so these labels live under ``info.open-cluster-management.io/``, a prefix the
hub guards: the agent's identity needs ``create`` on ``managedclusters/label`` for each
one. Publishing uses ``update`` (the agent's hub role has no ``patch``), guarded by the
resourceVersion it read.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping

from pyocm.api import kinds as ocm
from pyocm.api import models, shapes
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.kube import names
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

log = logging.getLogger(__name__)
PREFIX = "info.open-cluster-management.io/"


def parse_label(text: str) -> tuple[str, str | None]:
    """``KEY=VALUE`` sets a label, ``KEY-`` removes it (kubectl label's syntax)."""
    if text.endswith("-") and "=" not in text:
        key, value = text[:-1], None
    elif "=" in text:
        key, value = text.split("=", 1)
    else:
        raise ValueError(f'"{text}": expected KEY=VALUE, or KEY- to remove the label')
    if not key.startswith(PREFIX):
        raise ValueError(f'"{key}": agents publish only labels under {PREFIX}')
    problems = names.is_qualified_name(key)
    if value is not None:
        problems += names.is_valid_label_value(value)
    if problems:
        raise ValueError(f'"{text}": {"; ".join(problems)}')
    return key, value


def relabelled(cluster: ManagedCluster, wanted: Mapping[str, str | None]) -> ManagedCluster | None:
    """``cluster`` (as stored, not read through its schema) with the published labels set
    (None: removed), or None if already so."""
    current = shapes.mapping(cluster["metadata"].get("labels"))
    labels = dict(current)
    for key, value in wanted.items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    if labels == current:
        return None
    updated = copy.deepcopy(cluster)
    updated["metadata"]["labels"] = labels
    return updated


class LabelPublisher:
    """Keeps the wanted labels on the cluster, and says once (not at every report) when
    the hub refuses them."""

    def __init__(self, wanted: Mapping[str, str | None]) -> None:
        self.wanted = dict(wanted)
        self.refused: str | None = None

    async def publish(self, api: Api, cluster: ManagedCluster) -> None:
        updated = relabelled(cluster, self.wanted) if self.wanted else None
        if updated is None:
            self.refused = None
            return
        try:
            await api.update(ocm.MANAGED_CLUSTER, models.wire(updated))
        except ApiError as err:
            if err.code == 409:
                return  # the next version of the cluster brings another try
            if err.code not in (403, 422):
                raise
            if err.message != self.refused:
                log.warning("agent: the hub refused this cluster's labels: %s", err.message)
            self.refused = err.message
        except ApiConnectionError as err:
            log.warning("agent: publishing labels: %s", err)
        else:
            self.refused = None
