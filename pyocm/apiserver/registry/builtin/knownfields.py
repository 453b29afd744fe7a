"""The fields each built-in kind has, so unknown ones are dropped and reported.

kube-apiserver decodes a built-in object into its Go struct: a field the struct lacks
disappears, and ``fieldValidation`` decides whether that is an error (``Strict``: 400
``strict decoding error: unknown field "spec.foo"``), a warning (``Warn``) or silent
(``Ignore``). These tables are those structs' JSON field names, written as small
structural schemas so the CRD pruner does the work. ``ANY`` marks free-form parts
(RawExtension-like, or subtrees validated elsewhere) that are kept as sent.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pyocm.apiserver.apiextensions.pruning import prune
from pyocm.apiserver.apiextensions.schema import CompiledSchema

Schema = dict[str, Any]
S: Schema = {"type": "string"}
ANY: Schema = {"x-kubernetes-preserve-unknown-fields": True}
OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


def obj(*names: str, **typed: Schema) -> Schema:
    """An object with scalar fields ``names`` and structured fields ``typed``."""
    properties: dict[str, Schema] = {name: S for name in names}
    properties.update(typed)
    return {"type": "object", "properties": properties}


def arr(item: Schema) -> Schema:
    return {"type": "array", "items": item}


def mapof(item: Schema = S) -> Schema:
    return {"type": "object", "additionalProperties": item}


CONDITION = obj(
    "type",
    "status",
    "lastTransitionTime",
    "lastHeartbeatTime",
    "lastUpdateTime",
    "reason",
    "message",
)
OBJECT_REFERENCE = obj(
    "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"
)
LABEL_SELECTOR = obj(
    matchLabels=mapof(), matchExpressions=arr(obj("key", "operator", values=arr(S)))
)
POLICY_RULE = obj(
    verbs=arr(S), apiGroups=arr(S), resources=arr(S), resourceNames=arr(S), nonResourceURLs=arr(S)
)
SUBJECT = obj("kind", "apiGroup", "name", "namespace")
ROLE_REF = obj("apiGroup", "kind", "name")
EVENT_SERIES = obj("count", "lastObservedTime")
EVENT_SOURCE = obj("component", "host")

_SCHEMAS: dict[tuple[str, str], Schema] = {
    ("", "Namespace"): obj(
        spec=obj(finalizers=arr(S)), status=obj("phase", conditions=arr(CONDITION))
    ),
    ("", "ConfigMap"): obj("immutable", data=mapof(), binaryData=mapof()),
    ("", "Secret"): obj("type", "immutable", data=mapof(), stringData=mapof()),
    ("", "ServiceAccount"): obj(
        "automountServiceAccountToken",
        secrets=arr(OBJECT_REFERENCE),
        imagePullSecrets=arr(obj("name")),
    ),
    ("", "Node"): obj(
        spec=obj(
            "podCIDR",
            "providerID",
            "unschedulable",
            "externalID",
            podCIDRs=arr(S),
            taints=arr(obj("key", "value", "effect", "timeAdded")),
            configSource=ANY,
        ),
        status=obj(
            "phase",
            capacity=mapof(),
            allocatable=mapof(),
            conditions=arr(CONDITION),
            addresses=arr(obj("type", "address")),
            daemonEndpoints=obj(kubeletEndpoint=obj("Port")),
            nodeInfo=obj(
                "machineID",
                "systemUUID",
                "bootID",
                "kernelVersion",
                "osImage",
                "containerRuntimeVersion",
                "kubeletVersion",
                "kubeProxyVersion",
                "operatingSystem",
                "architecture",
            ),
            images=arr(obj("sizeBytes", names=arr(S))),
            volumesInUse=arr(S),
            volumesAttached=arr(obj("name", "devicePath")),
            config=ANY,
            runtimeHandlers=ANY,
            features=ANY,
        ),
    ),
    ("", "Event"): obj(
        "reason",
        "message",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "action",
        "reportingComponent",
        "reportingInstance",
        involvedObject=OBJECT_REFERENCE,
        related=OBJECT_REFERENCE,
        source=EVENT_SOURCE,
        series=EVENT_SERIES,
    ),
    ("events.k8s.io", "Event"): obj(
        "eventTime",
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
        "note",
        "type",
        "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp",
        "deprecatedCount",
        regarding=OBJECT_REFERENCE,
        related=OBJECT_REFERENCE,
        series=EVENT_SERIES,
        deprecatedSource=EVENT_SOURCE,
    ),
    ("coordination.k8s.io", "Lease"): obj(
        spec=obj(
            "holderIdentity",
            "leaseDurationSeconds",
            "acquireTime",
            "renewTime",
            "leaseTransitions",
            "strategy",
            "preferredHolder",
        )
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): obj(
        spec=obj(
            "request",
            "signerName",
            "expirationSeconds",
            "username",
            "uid",
            usages=arr(S),
            groups=arr(S),
            extra=mapof(arr(S)),
        ),
        status=obj("certificate", conditions=arr(CONDITION)),
    ),
    ("rbac.authorization.k8s.io", "ClusterRole"): obj(
        rules=arr(POLICY_RULE), aggregationRule=obj(clusterRoleSelectors=arr(LABEL_SELECTOR))
    ),
    ("rbac.authorization.k8s.io", "Role"): obj(rules=arr(POLICY_RULE)),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): obj(
        subjects=arr(SUBJECT), roleRef=ROLE_REF
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): obj(subjects=arr(SUBJECT), roleRef=ROLE_REF),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): obj(
        spec=obj(
            "group",
            "scope",
            "preserveUnknownFields",
            names=obj(
                "plural", "singular", "kind", "listKind", shortNames=arr(S), categories=arr(S)
            ),
            versions=arr(
                obj(
                    "name",
                    "served",
                    "storage",
                    "deprecated",
                    "deprecationWarning",
                    schema=obj(openAPIV3Schema=ANY),
                    subresources=ANY,
                    additionalPrinterColumns=arr(
                        obj("name", "type", "format", "description", "priority", "jsonPath")
                    ),
                    selectableFields=arr(obj("jsonPath")),
                )
            ),
            conversion=ANY,
        ),
        status=ANY,
    ),
}


@cache
def _compiled(group: str, kind: str) -> CompiledSchema | None:
    schema = _SCHEMAS.get((group, kind))
    return CompiledSchema.from_openapi(schema) if schema is not None else None


def drop_unknown(group: str, kind: str, body: dict[str, Any]) -> list[str]:
    """Remove fields the kind does not have (metadata included); return their paths."""
    compiled = _compiled(group, kind)
    if compiled is None:
        return []
    order = {key: index for index, key in enumerate(body)}
    removed = prune(body, compiled)
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        for field in [f for f in metadata if f not in OBJECT_META_FIELDS]:
            removed.append(f"metadata.{field}")
            del metadata[field]
    # Reported in document order, as a streaming decoder meets them.
    return sorted(removed, key=lambda path: order.get(path.split(".")[0].split("[")[0], len(order)))
