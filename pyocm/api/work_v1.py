"""``work.open-cluster-management.io/v1``: ManifestWork and AppliedManifestWork.

ManifestWork lives on the hub in a cluster's namespace and carries objects for that cluster
(spec in :mod:`pyocm.api.workspec`); the work agent applies them and reports per-object
conditions and status feedback. AppliedManifestWork is cluster scoped on the managed
cluster, named ``<hubHash>-<workName>``, and records what the agent applied so it can be
cleaned up.
"""

from __future__ import annotations

from pyocm.api import common, descriptor, wellknown, workspec
from pyocm.api import schema as s

FIELD_VALUE_TYPES = ("Integer", "String", "Boolean", "JsonRaw")


def _resource_meta() -> s.Schema:
    return s.obj(
        {
            "group": s.string(),
            "kind": s.string(),
            "name": s.string(),
            "namespace": s.string(),
            "ordinal": s.int32(description="Index of the object in spec.workload.manifests."),
            "resource": s.string(),
            "version": s.string(),
        },
        required=("ordinal",),
    )


def _feedback_value() -> s.Schema:
    field_value = s.obj(
        {
            "boolean": s.boolean(),
            "integer": s.int64(),
            "jsonRaw": s.string(max_length=1024),
            "string": s.string(),
            "type": s.string(enum=FIELD_VALUE_TYPES),
        },
        required=("type",),
    )
    return s.obj(
        {"fieldValue": field_value, "name": s.string()},
        required=("fieldValue", "name"),
    )


def _manifest_condition() -> s.Schema:
    feedback = s.obj({"values": s.array(_feedback_value(), list_type="map", map_keys=("name",))})
    return s.obj(
        {
            "conditions": common.conditions(),
            "resourceMeta": _resource_meta(),
            "statusFeedback": feedback,
        },
        required=("conditions", "resourceMeta"),
    )


def _status() -> s.Schema:
    return s.obj(
        {
            "conditions": common.conditions(),
            "resourceStatus": s.obj({"manifests": s.array(_manifest_condition())}),
        },
        description="What the agent applied and observed.",
    )


MANIFEST_WORK = descriptor.ResourceDescriptor(
    group=wellknown.WORK_GROUP,
    version="v1",
    kind="ManifestWork",
    plural="manifestworks",
    singular="manifestwork",
    namespaced=True,
    status_subresource=True,
    schema=s.kind_root(
        description="Objects for the managed cluster named by the namespace.",
        spec=workspec.manifest_work_spec(description="The objects and how to apply them."),
        status=_status(),
    ),
)


def _applied_resource() -> s.Schema:
    return s.obj(
        {
            "group": s.string(),
            "name": s.string(),
            "namespace": s.string(),
            "resource": s.string(),
            "uid": s.string(description="UID of the object on the managed cluster."),
            "version": s.string(),
        },
        required=("name", "resource", "version"),
    )


APPLIED_MANIFEST_WORK = descriptor.ResourceDescriptor(
    group=wellknown.WORK_GROUP,
    version="v1",
    kind="AppliedManifestWork",
    plural="appliedmanifestworks",
    singular="appliedmanifestwork",
    namespaced=False,
    status_subresource=True,
    schema=s.kind_root(
        description="Record on the managed cluster of a ManifestWork the agent applied.",
        spec=s.obj(
            {
                "agentID": s.string(),
                "hubHash": s.string(description="sha256 of the hub API server URL."),
                "manifestWorkName": s.string(),
            },
            required=("hubHash", "manifestWorkName"),
            description="Which hub and work this record belongs to.",
        ),
        status=s.obj(
            {
                "appliedResources": s.array(_applied_resource()),
                "evictionStartTime": s.date_time(),
            },
            description="The objects applied.",
        ),
    ),
)
