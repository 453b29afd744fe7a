"""The ManagedCluster status the agent reports: joined, available, resources, claims,
managed namespaces.

Steps run in upstream's order and each may end the chain; the result is one status
patch, sent only when something changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api.models.cluster_v1 import (
    ManagedCluster,
    ManagedClusterStatus,
    ManagedClusterStatusClusterClaim,
)
from pyocm.base.clock import Clock
from pyocm.kube import quantity
from pyocm.registration.agent.managed import ManagedSide
from pyocm.registration.agent.namespaces import apply_namespaces

FAILURE_THRESHOLD = timedelta(seconds=20)
FAILURE_RETRY = 5.0
RESERVED_CLAIMS = (
    "id.k8s.io",
    "kubeversion.open-cluster-management.io",
    "platform.open-cluster-management.io",
    "product.open-cluster-management.io",
)


@dataclass(frozen=True)
class ClaimOptions:
    max_custom: int = 20
    reserved_suffixes: tuple[str, ...] = ()


def sum_resources(nodes: Iterable[dict[str, Any]], field: str) -> dict[str, str]:
    """The total of ``status.<field>`` over ``nodes`` (as listed: read defensively)."""
    totals: dict[str, list[quantity.Quantity]] = {}
    for node in shapes.objects(list(nodes)):
        for name, value in shapes.mapping(shapes.mapping(node.get("status")).get(field)).items():
            try:
                parsed = quantity.parse_quantity(str(value))
            except ValueError:
                continue  # not a quantity: one node's odd figure must not stop the report
            totals.setdefault(name, []).append(parsed)
    return {name: str(quantity.sum_quantities(values)) for name, values in sorted(totals.items())}


def select_claims(
    claims: Iterable[dict[str, Any]], options: ClaimOptions
) -> tuple[list[ManagedClusterStatusClusterClaim], int]:
    """Reserved claims by name, then custom ones by name up to the cap; and how many were
    cut. ``claims`` are ClusterClaims as listed (read defensively)."""
    reserved: list[ManagedClusterStatusClusterClaim] = []
    custom: list[ManagedClusterStatusClusterClaim] = []
    for claim in shapes.objects(list(claims)):
        meta = shapes.mapping(claim.get("metadata"))
        spec = claim.get("spec", {})
        value = spec.get("value", "") if isinstance(spec, dict) else None
        if wellknown.SPOKE_ONLY_LABEL in shapes.mapping(meta.get("labels")):
            continue
        if not isinstance(value, str):
            continue  # the hub would refuse the whole status for one ill-typed claim
        name_as_listed: Any = meta.get("name")  # the API server requires one; not checked here
        item: ManagedClusterStatusClusterClaim = {"name": name_as_listed, "value": value}
        name = str(item["name"])
        if name in RESERVED_CLAIMS or any(name.endswith(s) for s in options.reserved_suffixes):
            reserved.append(item)
        else:
            custom.append(item)
    reserved.sort(key=lambda c: str(c["name"]))
    custom.sort(key=lambda c: str(c["name"]))
    cut = max(0, len(custom) - options.max_custom)
    return reserved + custom[: options.max_custom], cut


class StatusReporter:
    """Computes the status the agent should report for ``cluster`` (the hub's current object)."""

    def __init__(
        self, managed: ManagedSide, *, clock: Clock, claims: ClaimOptions, namespace_label: str
    ) -> None:
        self.managed = managed
        self.namespace_label = namespace_label
        self.clock = clock
        self.claim_options = claims
        self.truncated = 0
        self.retry_after: float | None = None
        self._failing_since: datetime | None = None

    async def desired(self, cluster: ManagedCluster) -> ManagedClusterStatus | None:
        """The new status, or None when the cluster is not accepted (nothing to report yet)."""
        # The session reads the cluster through its schema; a status or list of the wrong
        # type still reads as empty here, so a report writes them well formed. The status
        # is built as a plain dict (conditions.set_condition takes plain conditions).
        status = copy.deepcopy(shapes.mapping(cluster.get("status")))
        found = status["conditions"] = conditions.of({"status": status})
        if not conditions.is_true(found, wellknown.CLUSTER_HUB_ACCEPTED):
            return None
        now = self.clock.now()
        conditions.set_condition(
            found,
            type=wellknown.CLUSTER_JOINED,
            status="True",
            reason=wellknown.REASON_CLUSTER_JOINED,
            message="Managed cluster joined",
            now=now,
        )
        healthy, detail = await self.managed.health()
        self.retry_after = None
        if healthy:
            self._failing_since = None
        elif self._failing_since is None or now - self._failing_since < FAILURE_THRESHOLD:
            # A blip is not an outage: Available turns False only after failures have
            # lasted FAILURE_THRESHOLD (upstream's 20 s); until then, look again soon.
            self._failing_since = self._failing_since or now
            self.retry_after = FAILURE_RETRY
            return models.view(ManagedClusterStatus, status)
        if healthy:
            conditions.set_condition(
                found,
                type=wellknown.CLUSTER_AVAILABLE,
                status="True",
                reason=wellknown.REASON_CLUSTER_AVAILABLE,
                message="Managed cluster is available",
                now=now,
            )
        else:
            conditions.set_condition(
                found,
                type=wellknown.CLUSTER_AVAILABLE,
                status="False",
                reason=wellknown.REASON_KUBE_APISERVER_UNAVAILABLE,
                message=f"The kube-apiserver is not ok, {detail}",
                now=now,
            )
            return models.view(ManagedClusterStatus, status)
        nodes = await self.managed.nodes()
        status["version"] = {"kubernetes": await self.managed.version()}
        capacity = sum_resources(nodes, "capacity")
        status["capacity"] = {**shapes.mapping(status.get("capacity")), **capacity}
        schedulable = [
            n
            for n in shapes.objects(nodes)
            if not shapes.mapping(n.get("spec")).get("unschedulable")
        ]
        status["allocatable"] = sum_resources(schedulable, "allocatable")
        claims, self.truncated = select_claims(await self.managed.claims(), self.claim_options)
        status["clusterClaims"] = claims
        status["managedNamespaces"] = await apply_namespaces(
            self.managed,
            label=self.namespace_label,
            entries=[
                e
                for e in shapes.objects(status.get("managedNamespaces"))
                if isinstance(e.get("name"), str)
            ],
            now=now,
        )
        return models.view(ManagedClusterStatus, status)
