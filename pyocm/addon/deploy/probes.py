"""What the deploy works ask the work agent to report, and which of it tells health
(addon-framework's ``getManifestConfigOption``, ``analyzeWorkProber`` and
``utils/probe_helper.go``).

A ``Work`` prober names its probe fields; ``DeploymentAvailability`` probes every
Deployment the add-on deploys and ``WorkloadAvailability`` every Deployment and
DaemonSet, each by its WellKnownStatus feedback. The add-on's own manifest configs are
merged over these: same resource, feedback rules merged (one WellKnownStatus, JSON paths
deduplicated by name) and the add-on's update strategy winning.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.addon.agent import (
    AgentAddonOptions,
    HealthChecker,
    HealthProberType,
    ProbeField,
)
from pyocm.addon.deploy.health import workload_availability
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfig
from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfigFeedbackRule as FeedbackRule
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfigResourceIdentifier as ResourceIdentifier,
)

Obj = dict[str, Any]
WELL_KNOWN_STATUS = "WellKnownStatus"
JSON_PATHS = "JSONPaths"
_APPS = "apps"


@dataclass(frozen=True)
class Workload:
    """``WorkloadMetadata``: a Deployment or DaemonSet among the add-on's objects;
    ``replicas`` is a Deployment's (None when unset)."""

    resource: str
    namespace: str
    name: str
    replicas: int | None = None


def workloads(objects: Sequence[Mapping[str, Any]]) -> list[Workload]:
    """The ``apps`` Deployments and DaemonSets among ``objects`` (any version, as
    upstream's ``ConvertTo`` checks only group and kind)."""
    found = []
    for obj in objects:
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        kind = obj.get("kind")
        if group != _APPS or kind not in ("Deployment", "DaemonSet"):
            continue
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        replicas = spec.get("replicas") if kind == "Deployment" else None
        found.append(
            Workload(
                resource="deployments" if kind == "Deployment" else "daemonsets",
                namespace=str(meta.get("namespace", "")),
                name=str(meta.get("name", "")),
                replicas=replicas if isinstance(replicas, int) else None,
            )
        )
    return found


def well_known(workload: Workload) -> ManifestWorkSpecManifestConfig:
    """``WellKnowManifestConfig``."""
    return {
        "resourceIdentifier": {
            "group": _APPS,
            "resource": workload.resource,
            "name": workload.name,
            "namespace": workload.namespace,
        },
        "feedbackRules": [{"type": WELL_KNOWN_STATUS}],
    }


def _probed_workloads(options: AgentAddonOptions, objects: Sequence[Obj]) -> list[Workload]:
    """The workloads the prober asks feedback of."""
    if options.health == HealthProberType.DEPLOYMENT_AVAILABILITY:
        return [w for w in workloads(objects) if w.resource == "deployments"]
    if options.health == HealthProberType.WORKLOAD_AVAILABILITY:
        return workloads(objects)
    return []


def manifest_configs(
    options: AgentAddonOptions, objects: Sequence[Obj]
) -> list[ManifestWorkSpecManifestConfig]:
    """``getManifestConfigOption``: the deploy works' ``manifestConfigs``."""
    configs: list[ManifestWorkSpecManifestConfig] = []
    if options.health == HealthProberType.WORK and options.work_prober is not None:
        for field in options.work_prober.probe_fields:
            configs.append(
                {
                    "resourceIdentifier": copy.deepcopy(field.resource),
                    "feedbackRules": copy.deepcopy(list(field.rules)),
                }
            )
    configs.extend(well_known(w) for w in _probed_workloads(options, objects))
    for mine in options.manifest_configs:
        at = _index_of(configs, mine["resourceIdentifier"])
        if at is None:
            configs.append(copy.deepcopy(mine))
            continue
        for rule in mine.get("feedbackRules") or []:
            configs[at]["feedbackRules"] = merge_feedback_rule(
                configs[at].get("feedbackRules") or [], rule
            )
        if "updateStrategy" in mine:
            configs[at]["updateStrategy"] = copy.deepcopy(mine["updateStrategy"])
    return configs


def _index_of(
    configs: Sequence[ManifestWorkSpecManifestConfig], resource: ResourceIdentifier
) -> int | None:
    """``containsResourceIdentifier``: Go compares the four strings (absent is "")."""
    wanted = _identity(resource)
    for at, config in enumerate(configs):
        if _identity(config["resourceIdentifier"]) == wanted:
            return at
    return None


def _identity(resource: ResourceIdentifier) -> tuple[str, str, str, str]:
    return (
        resource.get("group", ""),
        resource.get("resource", ""),
        resource.get("namespace", ""),
        resource.get("name", ""),
    )


def merge_feedback_rule(rules: Sequence[FeedbackRule], rule: FeedbackRule) -> list[FeedbackRule]:
    """``mergeFeedbackRule``: add ``rule`` unless it says nothing new (a second
    WellKnownStatus, JSON paths whose names are all there already)."""
    merged = list(rules)
    known_paths = {
        path["name"]
        for existing in rules
        if existing.get("type") == JSON_PATHS
        for path in existing.get("jsonPaths") or []
    }
    if rule.get("type") == WELL_KNOWN_STATUS:
        if not any(existing.get("type") == WELL_KNOWN_STATUS for existing in rules):
            merged.append(copy.deepcopy(rule))
        return merged
    if rule.get("type") == JSON_PATHS:
        paths = [p for p in rule.get("jsonPaths") or [] if p["name"] not in known_paths]
        if paths:
            merged.append({"type": JSON_PATHS, "jsonPaths": copy.deepcopy(paths)})
        return merged
    merged.append(copy.deepcopy(rule))
    return merged


def probe_fields(
    options: AgentAddonOptions, objects: Sequence[Obj]
) -> tuple[list[ProbeField], HealthChecker | None]:
    """``analyzeWorkProber``: the fields health is judged on, and the judge. Deployments
    set to zero replicas are not probed (an unset count is 1)."""
    if options.health == HealthProberType.WORK:
        prober = options.work_prober
        if prober is None:
            return [], None
        return list(prober.probe_fields), prober.health_checker
    fields = []
    for workload in _probed_workloads(options, objects):
        if workload.resource == "deployments" and workload.replicas == 0:
            continue
        config = well_known(workload)
        fields.append(ProbeField(config["resourceIdentifier"], config.get("feedbackRules", [])))
    return fields, workload_availability
