"""Kubernetes built-in types that OCM kinds embed, and the name patterns they share.

These mirror the schemas Kubernetes generates for ``metav1.Condition``,
``metav1.LabelSelector``, ``corev1.Toleration``, ``corev1.ResourceRequirements``,
``rbacv1.RoleRef`` and ``resource.Quantity``, so an OCM object validates exactly as it
would against the upstream CRDs.
"""

from __future__ import annotations

from pyocm.api import schema as s

#: A qualified name with an optional DNS-subdomain prefix (label keys, condition types).
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
#: A DNS-1123 label: namespace names and other single-segment names.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
#: A DNS-1123 subdomain, written as one group as OCM's executor fields have it.
DNS_SUBDOMAIN = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$"
#: The textual form of ``resource.Quantity``.
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_CONDITION_REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


def condition() -> s.Schema:
    """One ``metav1.Condition``; every field but ``observedGeneration`` is required."""
    return s.obj(
        {
            "lastTransitionTime": s.date_time(description="When the status last changed."),
            "message": s.string(max_length=32768, description="Human readable details."),
            "observedGeneration": s.integer(
                format="int64",
                minimum=0,
                description="metadata.generation the condition is based on.",
            ),
            "reason": s.string(
                min_length=1,
                max_length=1024,
                pattern=_CONDITION_REASON,
                description="CamelCase identifier of why the status is what it is.",
            ),
            "status": s.string(enum=("True", "False", "Unknown")),
            "type": s.string(max_length=316, pattern=QUALIFIED_NAME, description="Condition type."),
        },
        required=("lastTransitionTime", "message", "reason", "status", "type"),
        description="One aspect of the current state of the object.",
    )


def conditions(*, keyed_by_type: bool = True, description: str = "") -> s.Schema:
    """A list of conditions, a list-map keyed by ``type`` unless the kind declares it plain."""
    if keyed_by_type:
        return s.array(condition(), list_type="map", map_keys=("type",), description=description)
    return s.array(condition(), description=description)


def label_selector_requirement() -> s.Schema:
    return s.obj(
        {
            "key": s.string(description="The label key the requirement applies to."),
            "operator": s.string(description="In, NotIn, Exists or DoesNotExist."),
            "values": s.string_list(list_type="atomic"),
        },
        required=("key", "operator"),
    )


def label_selector(*, description: str = "") -> s.Schema:
    """A ``metav1.LabelSelector``: requirements and labels are ANDed; replaced whole on apply."""
    return s.obj(
        {
            "matchExpressions": s.array(label_selector_requirement(), list_type="atomic"),
            "matchLabels": s.string_map(
                description="Labels that must all be present with these values."
            ),
        },
        map_type="atomic",
        description=description,
    )


def quantity() -> s.Schema:
    return s.int_or_string(pattern=QUANTITY)


def resource_list(*, description: str = "") -> s.Schema:
    """A ``corev1.ResourceList``: resource name to quantity."""
    return s.map_of(quantity(), description=description)


def resource_requirements(*, description: str = "") -> s.Schema:
    """A ``corev1.ResourceRequirements`` with dynamic resource claims."""
    claim = s.obj(
        {"name": s.string(), "request": s.string()},
        required=("name",),
    )
    return s.obj(
        {
            "claims": s.array(claim, list_type="map", map_keys=("name",)),
            "limits": resource_list(description="Maximum amount of compute resources allowed."),
            "requests": resource_list(description="Minimum amount of compute resources required."),
        },
        description=description,
    )


def toleration() -> s.Schema:
    """A ``corev1.Toleration`` (pods tolerating node taints, not OCM cluster taints)."""
    return s.obj(
        {
            "effect": s.string(),
            "key": s.string(),
            "operator": s.string(),
            "tolerationSeconds": s.int64(),
            "value": s.string(),
        }
    )


def role_ref() -> s.Schema:
    """An ``rbacv1.RoleRef``: which Role or ClusterRole a binding grants."""
    return s.obj(
        {"apiGroup": s.string(), "kind": s.string(), "name": s.string()},
        required=("apiGroup", "kind", "name"),
        map_type="atomic",
    )
