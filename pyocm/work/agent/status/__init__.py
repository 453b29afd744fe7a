"""The work agent's status computation, as upstream's work agent computes it.

Pure functions: the controllers read objects and patch the hub; these say what the
status should be. Per manifest (every status sync, for the object each manifest's
``resourceMeta`` names): :func:`manifest_status`. For the work: :func:`work_conditions`
(``Available`` and the conditions rules produce) and :func:`applied_work_condition`.
For an apply pass: :func:`resource_meta`, :func:`applied_manifest_condition` and
:func:`merge_manifest_conditions`. Conditions are computed bare (:class:`NewCondition`)
and set with apimachinery's semantics (:func:`set_condition`), so a condition keeps its
``lastTransitionTime`` while its status does not change.
"""

from pyocm.work.agent.status.aggregate import (
    aggregate_manifest_conditions,
    applied_manifest_condition,
    applied_work_condition,
    manifest_complete,
    prune_rule_conditions,
    work_complete,
    work_conditions,
)
from pyocm.work.agent.status.available import (
    available_condition,
    is_not_found,
    resource_meta_complete,
)
from pyocm.work.agent.status.feedback import MAX_JSON_RAW_LENGTH, feedback, values_by_rule
from pyocm.work.agent.status.manifest import manifest_status, resource_meta
from pyocm.work.agent.status.merge import (
    NewCondition,
    NewManifestCondition,
    find,
    is_true,
    merge_manifest_conditions,
    merge_status_conditions,
    set_condition,
    set_conditions,
)
from pyocm.work.agent.status.rules import evaluate_condition_rules, is_rule_condition

__all__ = [
    "MAX_JSON_RAW_LENGTH",
    "NewCondition",
    "NewManifestCondition",
    "aggregate_manifest_conditions",
    "applied_manifest_condition",
    "applied_work_condition",
    "available_condition",
    "evaluate_condition_rules",
    "feedback",
    "find",
    "is_not_found",
    "is_rule_condition",
    "is_true",
    "manifest_complete",
    "manifest_status",
    "merge_manifest_conditions",
    "merge_status_conditions",
    "prune_rule_conditions",
    "resource_meta",
    "resource_meta_complete",
    "set_condition",
    "set_conditions",
    "values_by_rule",
    "work_complete",
    "work_conditions",
]
