"""pyocm's own definitions of the OCM kinds, and the CRDs generated from them.

Each kind at each version is one :class:`~pyocm.api.descriptor.ResourceDescriptor`
holding its names, scope, subresources, printer columns and ``openAPIV3Schema``. The CRD
renderer and, later, the typed clients of the controllers both read these descriptors, so
a kind's identity and schema are written down exactly once. The schemas are
wire-compatible with upstream OCM: every field, default, enum and validation matches the
upstream CRDs, so existing YAML and tools behave the same against a pyocm hub.

Map, from the bottom up:

- :mod:`~pyocm.api.schema` -- the small DSL the definitions are written in.
- :mod:`~pyocm.api.descriptor` -- ``ResourceDescriptor`` and ``PrinterColumn``.
- :mod:`~pyocm.api.wellknown` -- API groups, labels, annotations, finalizers, taints,
  condition types and reasons that must match upstream byte for byte.
- Shared pieces: :mod:`~pyocm.api.common` (Kubernetes built-ins such as ``Condition`` and
  ``LabelSelector``), :mod:`~pyocm.api.workspec` (``ManifestWorkSpec``),
  :mod:`~pyocm.api.rollout` (rollout strategies), :mod:`~pyocm.api.addon_common`
  (add-on config references, install strategy, deployment config spec).
- Kinds, one module per group and version:
  :mod:`~pyocm.api.cluster_v1` (ManagedCluster),
  :mod:`~pyocm.api.cluster_v1alpha1` (ClusterClaim, AddOnPlacementScore),
  :mod:`~pyocm.api.cluster_v1beta1` (Placement, PlacementDecision),
  :mod:`~pyocm.api.cluster_v1beta2` (ManagedClusterSet with the pyocm ``ExclusiveLabel``
  selector, ManagedClusterSetBinding),
  :mod:`~pyocm.api.addon_v1alpha1` (storage version: ClusterManagementAddOn,
  ManagedClusterAddOn, AddOnDeploymentConfig; AddOnTemplate),
  :mod:`~pyocm.api.addon_v1beta1` (served: the first three again),
  :mod:`~pyocm.api.work_v1` (ManifestWork, AppliedManifestWork),
  :mod:`~pyocm.api.work_v1alpha1` (ManifestWorkReplicaSet).
- :mod:`~pyocm.api.catalog` -- every descriptor in install order, with lookups.
- :mod:`~pyocm.api.crds` -- renders the CRDs; ``python -m pyocm.api.crds [--out DIR]``.

This package does no I/O apart from ``crds.write`` and imports only :mod:`pyocm.kube`,
:mod:`pyocm.pki` and third-party libraries, never :mod:`pyocm.apiserver`: the server
learns about these kinds only through the CRDs a client installs.
"""
