"""Names that must match upstream OCM byte for byte, collected in one place.

Existing OCM agents, add-ons and YAML read and write these strings, so they are part of the
wire contract: API groups, label and annotation keys, finalizers, taint keys, condition
types and their reasons. Nothing here may be renamed for style.
"""

from __future__ import annotations

from typing import Final

# API groups.
CLUSTER_GROUP: Final = "cluster.open-cluster-management.io"
ADDON_GROUP: Final = "addon.open-cluster-management.io"
WORK_GROUP: Final = "work.open-cluster-management.io"
#: Virtual group used only in RBAC checks (accept, client certificate renewal).
REGISTER_GROUP: Final = "register.open-cluster-management.io"

# Labels.
CLUSTER_NAME_LABEL: Final = "open-cluster-management.io/cluster-name"
CLUSTER_SET_LABEL: Final = "cluster.open-cluster-management.io/clusterset"
ADDON_NAME_LABEL: Final = "open-cluster-management.io/addon-name"
ADDON_NAMESPACE_LABEL: Final = "open-cluster-management.io/addon-namespace"
ADDON_TEMPLATE_NAME_LABEL: Final = "open-cluster-management.io/addon-template-name"
SPOKE_ONLY_LABEL: Final = "open-cluster-management.io/spoke-only"
PLACEMENT_LABEL: Final = "cluster.open-cluster-management.io/placement"
DECISION_GROUP_NAME_LABEL: Final = "cluster.open-cluster-management.io/decision-group-name"
DECISION_GROUP_INDEX_LABEL: Final = "cluster.open-cluster-management.io/decision-group-index"
#: Prefix of the per-add-on feature label on ManagedClusters (``addon-<name>``).
ADDON_FEATURE_LABEL_PREFIX: Final = "feature.open-cluster-management.io/addon-"

# Annotations.
IMAGE_REGISTRIES_ANNOTATION: Final = "open-cluster-management.io/image-registries"
CLEANUP_PRIORITY_ANNOTATION: Final = "open-cluster-management.io/cleanup-priority"
AUTO_ACCEPTED_ANNOTATION: Final = "open-cluster-management.io/automatically-accepted-on"
CONFIG_SPEC_HASH_ANNOTATION: Final = "open-cluster-management.io/config-spec-hash"
SKIP_CLOCK_SYNC_ANNOTATION: Final = "registration.open-cluster-management.io/skip-clock-sync-check"
CLUSTER_SET_AUTOUPDATE_ANNOTATION: Final = "cluster.open-cluster-management.io/autoupdate"
SCHEDULING_DISABLE_ANNOTATION: Final = (
    "cluster.open-cluster-management.io/experimental-scheduling-disable"
)
ADDON_LIFECYCLE_ANNOTATION: Final = "addon.open-cluster-management.io/lifecycle"
ADDON_LIFECYCLE_ADDON_MANAGER: Final = "addon-manager"
ADDON_LIFECYCLE_SELF: Final = "self"
ADDON_INSTALL_NAMESPACE_ANNOTATION: Final = (
    "addon.open-cluster-management.io/v1alpha1-install-namespace"
)
#: pyocm's mark on an MCA the Placements install strategy created: only marked MCAs are
#: removed when their cluster leaves the strategy's placements, so one a user created
#: stays (upstream removes every MCA; see pyocm/addon/hub/install.py).
ADDON_INSTALLED_BY_ANNOTATION: Final = "addons.pyocm.io/installed-by"
ADDON_INSTALLED_BY_STRATEGY: Final = "install-strategy"
ADDON_HOSTING_CLUSTER_ANNOTATION: Final = "addon.open-cluster-management.io/hosting-cluster-name"
ADDON_PRE_DELETE_ANNOTATION: Final = "addon.open-cluster-management.io/addon-pre-delete"
ADDON_DELETION_ORPHAN_ANNOTATION: Final = "addon.open-cluster-management.io/deletion-orphan"
ADDON_MANIFEST_LOCATION_ANNOTATION: Final = (
    "addon.open-cluster-management.io/hosted-manifest-location"
)
ADDON_DISABLE_AUTO_INSTALL_ANNOTATION: Final = (
    "addon.open-cluster-management.io/disable-automatic-installation"
)

# Finalizers.
API_RESOURCE_CLEANUP_FINALIZER: Final = "cluster.open-cluster-management.io/api-resource-cleanup"
RESOURCE_CLEANUP_FINALIZER: Final = "cluster.open-cluster-management.io/resource-cleanup"
MANIFEST_WORK_CLEANUP_FINALIZER: Final = "cluster.open-cluster-management.io/manifest-work-cleanup"
APPLIED_MANIFEST_WORK_CLEANUP_FINALIZER: Final = (
    "cluster.open-cluster-management.io/applied-manifest-work-cleanup"
)
ADDON_PRE_DELETE_FINALIZER: Final = "addon.open-cluster-management.io/addon-pre-delete"
ADDON_HOSTING_PRE_DELETE_FINALIZER: Final = (
    "addon.open-cluster-management.io/hosting-addon-pre-delete"
)
ADDON_HOSTING_MANIFESTS_FINALIZER: Final = (
    "addon.open-cluster-management.io/hosting-manifests-cleanup"
)

# ManagedCluster taints and their effects.
TAINT_UNAVAILABLE: Final = "cluster.open-cluster-management.io/unavailable"
TAINT_UNREACHABLE: Final = "cluster.open-cluster-management.io/unreachable"
TAINT_NO_SELECT: Final = "NoSelect"
TAINT_PREFER_NO_SELECT: Final = "PreferNoSelect"
TAINT_NO_SELECT_IF_NEW: Final = "NoSelectIfNew"

# ManagedCluster conditions and reasons.
CLUSTER_JOINED: Final = "ManagedClusterJoined"
CLUSTER_HUB_ACCEPTED: Final = "HubAcceptedManagedCluster"
#: Declared upstream but never set by current OCM code.
CLUSTER_HUB_DENIED: Final = "HubDeniedManagedCluster"
CLUSTER_AVAILABLE: Final = "ManagedClusterConditionAvailable"
CLUSTER_CLOCK_SYNCED: Final = "ManagedClusterConditionClockSynced"
CLUSTER_DELETING: Final = "Deleting"
CLUSTER_CERTIFICATE_ROTATED: Final = "ClusterCertificateRotated"
REASON_HUB_ADMIN_ACCEPTED: Final = "HubClusterAdminAccepted"
REASON_HUB_ADMIN_DENIED: Final = "HubClusterAdminDenied"
REASON_CLUSTER_JOINED: Final = "ManagedClusterJoined"
REASON_CLUSTER_AVAILABLE: Final = "ManagedClusterAvailable"
REASON_KUBE_APISERVER_UNAVAILABLE: Final = "ManagedClusterKubeAPIServerUnavailable"
REASON_LEASE_UPDATE_STOPPED: Final = "ManagedClusterLeaseUpdateStopped"
REASON_CLOCK_SYNCED: Final = "ManagedClusterClockSynced"
REASON_CLOCK_OUT_OF_SYNC: Final = "ManagedClusterClockOutOfSync"
REASON_RESOURCE_REMAINING: Final = "ResourceRemaining"
REASON_NO_RESOURCE: Final = "NoResource"
REASON_DELETING_ERROR: Final = "DeletingError"
REASON_CLIENT_CERT_UPDATED: Final = "ClientCertificateUpdated"
REASON_CLIENT_CERT_UPDATE_FAILED: Final = "ClientCertificateUpdateFailed"
NAMESPACE_AVAILABLE: Final = "NamespaceAvailable"
REASON_NAMESPACE_APPLIED: Final = "NamespaceApplied"
REASON_NAMESPACE_APPLY_FAILED: Final = "NamespaceApplyFailed"

# ManagedClusterSet selector types, conditions and reasons.
SELECTOR_EXCLUSIVE_CLUSTER_SET_LABEL: Final = "ExclusiveClusterSetLabel"
SELECTOR_LABEL_SELECTOR: Final = "LabelSelector"
#: pyocm addition (mission 002): select by one exclusive ``key=value`` label.
SELECTOR_EXCLUSIVE_LABEL: Final = "ExclusiveLabel"
DEFAULT_CLUSTER_SET: Final = "default"
GLOBAL_CLUSTER_SET: Final = "global"
CLUSTER_SET_EMPTY: Final = "ClusterSetEmpty"
REASON_NO_CLUSTER_MATCHED: Final = "NoClusterMatched"
REASON_CLUSTERS_SELECTED: Final = "ClustersSelected"
CLUSTER_SET_BOUND: Final = "Bound"
REASON_CLUSTER_SET_BOUND: Final = "ClusterSetBound"
REASON_CLUSTER_SET_NOT_FOUND: Final = "ClusterSetNotFound"

# Placement conditions and reasons.
PLACEMENT_SATISFIED: Final = "PlacementSatisfied"
PLACEMENT_MISCONFIGURED: Final = "PlacementMisconfigured"
REASON_NO_BINDINGS: Final = "NoManagedClusterSetBindings"
REASON_NO_INTERSECTION: Final = "NoIntersection"
REASON_ALL_SETS_EMPTY: Final = "AllManagedClusterSetsEmpty"
REASON_NOT_ALL_SCHEDULED: Final = "NotAllDecisionsScheduled"
REASON_NO_CLUSTER_MATCHED_PREDICATE: Final = "NoManagedClusterMatched"
REASON_ALL_SCHEDULED: Final = "AllDecisionsScheduled"
REASON_MISCONFIGURED: Final = "Misconfigured"
#: Spelled as upstream spells it.
REASON_SUCCEED_CONFIGURED: Final = "Succeedconfigured"

# ManagedClusterAddOn / ClusterManagementAddOn conditions.
ADDON_AVAILABLE: Final = "Available"
ADDON_DEGRADED: Final = "Degraded"
ADDON_CONFIGURED: Final = "Configured"
ADDON_PROGRESSING: Final = "Progressing"
ADDON_MANIFEST_APPLIED: Final = "ManifestApplied"
ADDON_HOOK_MANIFEST_COMPLETED: Final = "HookManifestCompleted"
ADDON_HOSTING_MANIFEST_APPLIED: Final = "HostingManifestApplied"
ADDON_HOSTING_CLUSTER_VALIDITY: Final = "HostingClusterValidity"
ADDON_REGISTRATION_APPLIED: Final = "RegistrationApplied"
ADDON_TOKEN_INFRASTRUCTURE_READY: Final = "TokenInfrastructureReady"
#: ``defaultConfigs`` name meaning "this config type is supported but has no default".
ADDON_RESERVED_NO_DEFAULT: Final = "__reserved_no_default__"
ADDON_DEFAULT_INSTALL_NAMESPACE: Final = "open-cluster-management-agent-addon"

# ManifestWork conditions.
WORK_APPLIED: Final = "Applied"
WORK_AVAILABLE: Final = "Available"
WORK_DEGRADED: Final = "Degraded"
WORK_PROGRESSING: Final = "Progressing"
WORK_STATUS_FEEDBACK_SYNCED: Final = "StatusFeedbackSynced"
REASON_APPLIED_WORK_COMPLETE: Final = "AppliedManifestWorkComplete"
REASON_APPLIED_WORK_FAILED: Final = "AppliedManifestWorkFailed"
REASON_RESOURCES_AVAILABLE: Final = "ResourcesAvailable"
REASON_RESOURCES_NOT_AVAILABLE: Final = "ResourcesNotAvailable"
REASON_RESOURCES_STATUS_UNKNOWN: Final = "ResourcesStatusUnknown"
WORK_DEFAULT_FIELD_MANAGER: Final = "work-agent"

# ManifestWorkReplicaSet conditions.
MWRS_PLACEMENT_VERIFIED: Final = "PlacementVerified"
MWRS_MANIFESTWORK_APPLIED: Final = "ManifestworkApplied"

# ClusterClaim names reserved for OCM's own inventory.
RESERVED_CLUSTER_CLAIM_NAMES: Final = (
    "id.k8s.io",
    "kubeversion.open-cluster-management.io",
    "platform.open-cluster-management.io",
    "product.open-cluster-management.io",
)

# Identities.
SUBJECT_PREFIX: Final = "system:open-cluster-management:"
MANAGED_CLUSTERS_GROUP: Final = "system:open-cluster-management:managed-clusters"
