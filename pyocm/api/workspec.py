"""The ``ManifestWorkSpec`` of ``work.open-cluster-management.io/v1``.

Three kinds embed it unchanged: ManifestWork (``spec``), ManifestWorkReplicaSet
(``spec.manifestWorkTemplate``) and AddOnTemplate (``spec.agentSpec``). It says which
objects to apply on a managed cluster (``workload``), how to apply and observe each of them
(``manifestConfigs``), what to do with them when the work goes away (``deleteOption``) and
with whose permissions they are applied (``executor``).
"""

from __future__ import annotations

from pyocm.api import common, wellknown
from pyocm.api import schema as s

PROPAGATION_POLICIES = ("Foreground", "Orphan", "SelectivelyOrphan")
UPDATE_STRATEGIES = ("Update", "CreateOnly", "ServerSideApply", "ReadOnly")
FEEDBACK_RULE_TYPES = ("WellKnownStatus", "JSONPaths")
CONDITION_RULE_TYPES = ("WellKnownConditions", "CEL")


def _resource_identifier(*, description: str = "") -> s.Schema:
    """Group, resource, name and namespace of one applied object (no version)."""
    return s.obj(
        {
            "group": s.string(),
            "name": s.string(),
            "namespace": s.string(),
            "resource": s.string(),
        },
        required=("name", "resource"),
        description=description,
    )


def _delete_option() -> s.Schema:
    orphans = s.obj({"orphaningRules": s.array(_resource_identifier())})
    return s.obj(
        {
            "propagationPolicy": s.string(enum=PROPAGATION_POLICIES, default="Foreground"),
            "selectivelyOrphans": orphans,
            "ttlSecondsAfterFinished": s.int64(
                description="Delete the work this long after it completes."
            ),
        },
        description="What happens to applied objects when the work is deleted.",
    )


def _executor() -> s.Schema:
    service_account = s.obj(
        {
            "name": s.string(min_length=1, max_length=253, pattern=common.DNS_SUBDOMAIN),
            "namespace": s.string(min_length=1, max_length=253, pattern=common.DNS_SUBDOMAIN),
        },
        required=("name", "namespace"),
    )
    subject = s.obj(
        {"serviceAccount": service_account, "type": s.string(enum=("ServiceAccount",))},
        required=("type",),
    )
    return s.obj({"subject": subject}, description="Identity the agent applies objects as.")


def _condition_rule() -> s.Schema:
    return s.obj(
        {
            "celExpressions": s.string_list(),
            "condition": s.string(description="Condition type the rule sets."),
            "message": s.string(),
            "messageExpression": s.string(),
            "type": s.string(enum=CONDITION_RULE_TYPES),
        },
        required=("condition", "type"),
        validations=(
            s.rule(
                "self.type != 'CEL' || self.condition != \"\"",
                message="Condition is required for CEL rules",
            ),
        ),
    )


def _feedback_rule() -> s.Schema:
    json_path = s.obj(
        {"name": s.string(), "path": s.string(), "version": s.string()},
        required=("name", "path"),
    )
    return s.obj(
        {
            "jsonPaths": s.array(json_path, list_type="map", map_keys=("name",)),
            "type": s.string(enum=FEEDBACK_RULE_TYPES),
        },
        required=("type",),
    )


def _ignore_field() -> s.Schema:
    return s.obj(
        {
            "condition": s.string(
                enum=("OnSpokePresent", "OnSpokeChange"), default="OnSpokePresent"
            ),
            "jqPathExpressions": s.string_list(),
            "jsonPaths": s.string_list(),
            "jsonPointers": s.string_list(),
        },
        required=("condition",),
    )


def _update_strategy() -> s.Schema:
    server_side_apply = s.obj(
        {
            "fieldManager": s.string(
                pattern="^work-agent", default=wellknown.WORK_DEFAULT_FIELD_MANAGER
            ),
            "force": s.boolean(),
            "ignoreFields": s.array(_ignore_field(), list_type="map", map_keys=("condition",)),
        }
    )
    return s.obj(
        {
            "serverSideApply": server_side_apply,
            "type": s.string(enum=UPDATE_STRATEGIES, default="Update"),
        },
        required=("type",),
    )


def _manifest_config() -> s.Schema:
    return s.obj(
        {
            "conditionRules": s.array(_condition_rule(), list_type="map", map_keys=("condition",)),
            "feedbackRules": s.array(_feedback_rule()),
            "feedbackScrapeType": s.string(enum=("Poll", "Watch"), default="Poll"),
            "resourceIdentifier": _resource_identifier(description="The object configured."),
            "updateStrategy": _update_strategy(),
        },
        required=("resourceIdentifier",),
    )


def manifest_work_spec(*, description: str) -> s.Schema:
    """A whole ``ManifestWorkSpec``."""
    return s.obj(
        {
            "deleteOption": _delete_option(),
            "executor": _executor(),
            "manifestConfigs": s.array(_manifest_config()),
            "workload": s.obj(
                {"manifests": s.array(s.embedded_resource(), description="Objects to apply.")}
            ),
        },
        description=description,
    )
