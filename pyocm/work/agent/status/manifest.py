"""One manifest's status entry, as upstream's status controller refreshes it each sync.

For the object a manifest's ``resourceMeta`` names, read from the managed cluster:
its ``Available`` condition; then, only when the object was read, its status feedback
values and ``StatusFeedbackSynced`` condition (whose transition time restarts whenever
the values change, as upstream removes it first) and the conditions its condition rules
compute, stamped with the work's generation, rule conditions of older generations being
pruned. Also here: a manifest's ``resourceMeta`` (``helper.BuildResourceMeta``).
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from pyocm.api.models.common import Condition
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecManifestConfig as ManifestConfig,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifest as ManifestCondition,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestResourceMeta as ManifestResourceMeta,
)
from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestStatusFeedbackValue as FeedbackValue,
)
from pyocm.kube.kinds import Kind
from pyocm.work.agent.status.aggregate import prune_rule_conditions
from pyocm.work.agent.status.available import available_condition, resource_meta_complete
from pyocm.work.agent.status.feedback import FEEDBACK_SYNCED, MAX_JSON_RAW_LENGTH, feedback
from pyocm.work.agent.status.merge import remove_condition, set_condition
from pyocm.work.agent.status.rules import evaluate_condition_rules
from pyocm.work.agent.status.wellknown import gvk_of

Obj = dict[str, Any]


def manifest_status(
    obj: Obj | None,
    *,
    error: BaseException | None,
    config: ManifestConfig | None,
    existing: ManifestCondition,
    generation: int,
    now: datetime,
    max_json_raw_length: int = MAX_JSON_RAW_LENGTH,
    raw_feedback_json: bool = False,
) -> ManifestCondition:
    """``existing`` (an entry of ``status.resourceStatus.manifests``, left as it is)
    refreshed from ``obj``, the object its ``resourceMeta`` names as read from the
    managed cluster, or from ``error``, why it could not be read (a 404
    :class:`~pyocm.kube.status.ApiError` when absent). ``config`` is the manifest's
    ``manifestConfigs`` entry as ``FindManifestConfiguration`` combines them;
    ``generation`` is the work's ``metadata.generation``; ``raw_feedback_json`` is
    upstream's ``RawFeedbackJsonString`` feature gate (off by default).

    When the object was not read, only ``Available`` changes: the entry keeps its
    feedback values and other conditions, as upstream's does."""
    meta = existing["resourceMeta"]
    available = available_condition(meta, obj=obj, error=error)
    conditions = set_condition(existing.get("conditions") or [], available, now=now)
    if obj is None or error is not None or not resource_meta_complete(meta):
        return _entry(existing, conditions, values=None)
    values, synced = feedback(
        obj, config, max_json_raw_length=max_json_raw_length, raw_json=raw_feedback_json
    )
    previous = (existing.get("statusFeedback") or {}).get("values") or []
    if previous != values:  # new values: the condition restarts its transition time
        conditions = remove_condition(conditions, FEEDBACK_SYNCED)
    conditions = set_condition(conditions, synced, now=now)
    rules = config.get("conditionRules") if config is not None else None
    for condition in evaluate_condition_rules(obj, rules or []):
        condition["observedGeneration"] = generation
        conditions = set_condition(conditions, condition, now=now)
    conditions = prune_rule_conditions(conditions, generation=generation)
    return _entry(existing, conditions, values=values)


def resource_meta(ordinal: int, manifest: Obj | None, kind: Kind | None) -> ManifestResourceMeta:
    """``helper.BuildResourceMeta``: group, version and kind from the manifest's own
    ``apiVersion`` and ``kind``, name and namespace from its metadata, and the resource
    (plural) from ``kind``, the kind the cluster serves; ``kind`` None (not served)
    leaves the resource empty, and a cluster-scoped kind clears the namespace."""
    meta: ManifestResourceMeta = {
        "ordinal": ordinal,
        "group": "",
        "version": "",
        "kind": "",
        "resource": "",
        "name": "",
        "namespace": "",
    }
    if manifest is None:
        return meta
    gvk = gvk_of(manifest)
    metadata = manifest.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    meta["group"], meta["version"], meta["kind"] = gvk.group, gvk.version, gvk.kind
    meta["name"] = _text(metadata.get("name"))
    meta["namespace"] = _text(metadata.get("namespace"))
    if kind is not None:
        meta["resource"] = kind.plural
        if not kind.namespaced:
            meta["namespace"] = ""
    return meta


def _entry(
    manifest: ManifestCondition, conditions: list[Condition], *, values: list[FeedbackValue] | None
) -> ManifestCondition:
    entry = copy.deepcopy(manifest)
    entry["conditions"] = conditions
    if values is not None:
        entry["statusFeedback"] = {"values": copy.deepcopy(values)} if values else {}
    return entry


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
