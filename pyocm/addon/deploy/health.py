"""An add-on's health told on the hub from its deploy works (addon-framework's
``healthcheck_sync.go`` and the workload checker of ``utils/probe_helper.go``).

The health check mode says who reports the add-on's ``Available`` condition: ``Lease``
leaves it to the registration agent watching the agent's Lease on the cluster;
``Customized`` means the add-on manager does, from what the work agent reports about
the deployed objects. Only the work status is read: whether the objects are ready is
the work agent's feedback (on pyocm's embedded clusters a simulation says so itself).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.addon.agent import (
    AgentAddonOptions,
    FieldResult,
    HealthChecker,
    HealthProberType,
    ProbeField,
    Unhealthy,
)
from pyocm.api import conditions, wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.work_v1 import (
    ManifestWork,
    ManifestWorkStatusResourceStatusManifest,
    ManifestWorkStatusResourceStatusManifestResourceMeta,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfigResourceIdentifier as ResourceIdentifier,
)

MODE_LEASE = "Lease"
MODE_CUSTOMIZED = "Customized"
REASON_WORK_NOT_FOUND = "WorkNotFound"
REASON_WORK_NOT_APPLIED = "WorkNotApplied"
REASON_WORK_APPLIED = "WorkApplied"
REASON_NO_PROBE_RESULT = "NoProbeResult"
REASON_PROBE_UNAVAILABLE = "ProbeUnavailable"
REASON_PROBE_AVAILABLE = "ProbeAvailable"


@dataclass(frozen=True)
class Verdict:
    """The ``Available`` condition to set."""

    status: str
    reason: str
    message: str


def mode_for(health: HealthProberType | None) -> str | None:
    """The health check mode a prober calls for (None: leave it as it is)."""
    if health is None:
        return None
    return MODE_LEASE if health == HealthProberType.LEASE else MODE_CUSTOMIZED


def available(
    options: AgentAddonOptions,
    *,
    mca: ManagedClusterAddOn,
    cluster: ManagedCluster,
    works: Sequence[ManifestWork],
    deploy_prefix: str,
    fields: Callable[[], tuple[list[ProbeField], HealthChecker | None]],
) -> Verdict | None:
    """The add-on's ``Available`` condition from its works (``works``: those labelled
    with its name in the cluster namespace), or None to leave it. ``fields`` gives the
    probe fields and checker, asked only once the works are applied."""
    if options.health is None:
        return None
    if options.health == HealthProberType.WORK and options.work_prober is None:
        return Verdict("True", REASON_WORK_APPLIED, "Addon manifestWork is applied")
    if options.health not in (
        HealthProberType.WORK,
        HealthProberType.DEPLOYMENT_AVAILABILITY,
        HealthProberType.WORKLOAD_AVAILABILITY,
    ):
        return None
    # Probing waits for the works to have been applied once.
    if conditions.find(conditions.of(mca), wellknown.ADDON_MANIFEST_APPLIED) is None:
        return None
    return _by_works(mca, cluster, works, deploy_prefix, fields)


def _by_works(
    mca: ManagedClusterAddOn,
    cluster: ManagedCluster,
    works: Sequence[ManifestWork],
    deploy_prefix: str,
    fields: Callable[[], tuple[list[ProbeField], HealthChecker | None]],
) -> Verdict | None:
    """``probeAddonStatusByWorks``."""
    cluster_available = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
    if cluster_available is not None and cluster_available.get("status") == "Unknown":
        # The registration agent is not reporting; the hub marks the add-ons Unknown.
        return None
    if not works:
        return Verdict("Unknown", REASON_WORK_NOT_FOUND, "Addon manifestWork is not found")
    manifests: list[ManifestWorkStatusResourceStatusManifest] = []
    for work in works:
        if not work["metadata"]["name"].startswith(deploy_prefix):
            continue
        found = conditions.find(conditions.of(work), wellknown.WORK_AVAILABLE)
        if found is None:
            return Verdict(
                "Unknown", REASON_WORK_NOT_APPLIED, "Addon manifestWork is not applied yet"
            )
        if found.get("status") == "False":
            return Verdict("False", REASON_WORK_NOT_APPLIED, str(found.get("message", "")))
        manifests.extend(work.get("status", {}).get("resourceStatus", {}).get("manifests") or [])

    probed, checker = fields()
    results = [r for field in probed for r in results_for(field.resource, manifests)]
    if probed and not results:
        return Verdict("Unknown", REASON_NO_PROBE_RESULT, "Probe results are not returned")
    if checker is not None:
        try:
            checker(results, cluster, mca)
        except Unhealthy as err:
            return Verdict(
                "False", REASON_PROBE_UNAVAILABLE, f"Probe addon unavailable with err {err}"
            )
    name = mca["metadata"]["name"]
    return Verdict("True", REASON_PROBE_AVAILABLE, f"{name} add-on is available.")


def results_for(
    resource: ResourceIdentifier, manifests: Sequence[ManifestWorkStatusResourceStatusManifest]
) -> list[FieldResult]:
    """``findResultsByIdentifier``: the feedback of each matching manifest that has any."""
    found = []
    for manifest in manifests:
        meta = manifest.get("resourceMeta") or {}
        feedback = manifest.get("statusFeedback") or {}
        if _matches(meta, resource) and feedback.get("values"):
            identity: ResourceIdentifier = {
                "group": meta.get("group", ""),
                "resource": meta.get("resource", ""),
                "name": meta.get("name", ""),
                "namespace": meta.get("namespace", ""),
            }
            found.append(FieldResult(identity, feedback))
    return found


def _matches(
    meta: ManifestWorkStatusResourceStatusManifestResourceMeta, resource: ResourceIdentifier
) -> bool:
    return (
        meta.get("group", "") == resource.get("group", "")
        and meta.get("resource", "") == resource.get("resource", "")
        and _wildcard(meta.get("namespace", ""), resource.get("namespace", ""))
        and _wildcard(meta.get("name", ""), resource.get("name", ""))
    )


def _wildcard(value: str, pattern: str) -> bool:
    """``wildcardMatch``: ``*`` in ``pattern`` matches any run of characters."""
    if value == pattern or pattern == "*":
        return True
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), value) is not None


def workload_availability(
    results: Sequence[FieldResult], _cluster: ManagedCluster, _mca: ManagedClusterAddOn
) -> None:
    """``WorkloadAvailabilityHealthChecker``: a Deployment is available with no replicas
    wanted or one ready, a DaemonSet with all its scheduled pods ready."""
    for result in results:
        _check_workload(result.resource, result.feedback.get("values") or [])


def _check_workload(resource: ResourceIdentifier, values: Sequence[Mapping[str, Any]]) -> None:
    kind, group = resource.get("resource", ""), resource.get("group", "")
    where = f"{kind} {resource.get('namespace', '')}/{resource.get('name', '')}"
    if kind not in ("deployments", "daemonsets"):
        raise Unhealthy(f"unsupported resource type {kind}")
    if group != "apps":
        raise Unhealthy(f"unsupported resource group {group}")
    if not values:
        raise Unhealthy(f"no values are probed for {where}")
    ready = desired = -1
    for value in values:
        number = (value.get("fieldValue") or {}).get("integer")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        if value.get("name") in ("ReadyReplicas", "NumberReady"):
            ready = number
        if value.get("name") in ("Replicas", "DesiredNumberScheduled"):
            desired = number
    if ready == -1:
        raise Unhealthy("readyReplica is not probed")
    if desired == -1:
        raise Unhealthy("desiredNumberReplicas is not probed")
    if kind == "deployments" and (desired == 0 or ready >= 1):
        return
    if kind == "daemonsets" and ready == desired:
        return
    raise Unhealthy(f"desiredNumberReplicas is {desired} but readyReplica is {ready} for {where}")
