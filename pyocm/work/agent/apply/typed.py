"""library-go's typed appliers, which upstream's Update strategy tries first.

Upstream hands every manifest to library-go's ``resourceapply.ApplyDirectly``; for the
built-in kinds below it reconciles only the fields library-go knows (metadata merged as
:mod:`~pyocm.work.agent.apply.merge` does, plus the kind's own fields), starting from the
object on the cluster, so fields the server defaulted or another writer set elsewhere
stay as they are. These differences from the generic path are observable and kept:

* Namespace, ServiceAccount, Pod: only metadata is reconciled (a ServiceAccount's
  ``imagePullSecrets`` or a Pod's spec changed in the manifest are not updated);
* ConfigMap: ``data`` and ``binaryData``;
* Secret: ``stringData`` is folded into ``data`` first (an inconsistent pair is refused
  with library-go's message); ``data`` and ``type`` (``Opaque`` when unset) are
  reconciled, service-account token Secrets only gain keys; a type change, or an update
  refused as immutable, deletes and creates the Secret;
* Service: the ``operator.openshift.io/spec-hash`` annotation is added; the spec is
  replaced when that hash, the selector or the type changed;
* Role, ClusterRole: ``rules`` (and a ClusterRole's ``aggregationRule``, whose rules are
  left to the aggregation controller); RoleBinding, ClusterRoleBinding: ``subjects`` and
  ``roleRef``, with the RBAC API group filled in for the role and User subjects;
* CustomResourceDefinition: the spec, compared after the defaults the server would fill
  (singular name, list kind, conversion strategy ``None``, webhook port 443).

Not mirrored, applied through the generic path instead: library-go's typed appliers of
NetworkPolicy, PodDisruptionBudget, StorageClass, CSIDriver, webhook configurations and
ValidatingAdmissionPolicies, its OpenShift CA-bundle injection rules for ConfigMaps, and
its resourceVersion cache (which only spares a no-op comparison). Deployments and the
other workloads have no typed applier upstream either: they take the generic path.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pyocm.kube.kinds import Kind
from pyocm.work.agent.apply.errors import ApplyError
from pyocm.work.agent.apply.merge import Obj, ensure_object_meta, meta, typed_equal
from pyocm.work.agent.apply.servicehash import SPEC_HASH_ANNOTATION, spec_hash

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
SA_TOKEN_TYPE: Final = "kubernetes.io/service-account-token"
#: A reconciler: (existing, required) to the object to write back, None when in sync.
Reconcile = Callable[[Obj, Obj], Obj | None]


def _same(required: Obj) -> Obj:
    return required


@dataclass(frozen=True)
class Typed:
    """How library-go applies one kind."""

    reconcile: Reconcile
    #: required as library-go sees it before reading the cluster (may raise ApplyError)
    prepare: Callable[[Obj], Obj] = _same
    #: whether a type change or an immutable-field refusal deletes and creates (Secret)
    recreates: bool = False


def typed_applier(kind: Kind) -> Typed | None:
    """library-go's typed applier of ``kind``; None when upstream applies it generically."""
    return _TYPED.get((kind.group, kind.version, kind.kind))


def _metadata_only(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    return updated if ensure_object_meta(updated, required) else None


def _configmap(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    modified = ensure_object_meta(updated, required)
    same = all(
        dict(existing.get(field) or {}) == dict(required.get(field) or {})
        for field in ("data", "binaryData")
    )
    if same and not modified:
        return None
    for field in ("data", "binaryData"):
        _set(updated, field, required.get(field))
    return updated


def _fold_string_data(required: Obj) -> Obj:
    """``stringData`` moved into ``data`` (base64), as library-go does before applying."""
    string_data = required.get("stringData")
    if not string_data:
        return required
    folded = copy.deepcopy(required)
    data = dict(folded.get("data") or {})
    for key, value in string_data.items():
        if key in data and _decoded(data[key]) != value:
            raise ApplyError(f'Secret.stringData["{key}"] conflicts with Secret.data["{key}"]')
        data[key] = base64.b64encode(str(value).encode()).decode()
    folded["data"] = data
    del folded["stringData"]
    return folded


def _decoded(value: Any) -> str | None:
    try:
        return base64.b64decode(str(value), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _secret(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    ensure_object_meta(updated, required)  # library-go ignores whether metadata changed
    wanted_type = required.get("type") or "Opaque"
    if wanted_type == SA_TOKEN_TYPE:  # the token controller adds keys: only set ours
        updated["data"] = {**(updated.get("data") or {}), **(required.get("data") or {})}
    else:
        _set(updated, "data", required.get("data"))
    updated["type"] = wanted_type
    return None if typed_equal(updated, existing) else updated


def _with_spec_hash(required: Obj) -> Obj:
    hashed = copy.deepcopy(required)
    annotations = meta(hashed).setdefault("annotations", {})
    annotations[SPEC_HASH_ANNOTATION] = spec_hash(hashed.get("spec"))
    return hashed


def _service(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    # The spec hash is an annotation: a changed spec shows as changed metadata.
    modified = ensure_object_meta(updated, required)
    have, want = updated.get("spec") or {}, required.get("spec") or {}
    same_selector = typed_equal(have.get("selector"), want.get("selector"))
    same_type = have.get("type") == want.get("type") or (
        not want.get("type") and have.get("type") == "ClusterIP"
    )
    if same_selector and same_type and not modified:
        return None
    # Stomps over the server's values too (cluster IPs): the server fills them back.
    updated["spec"] = copy.deepcopy(required.get("spec"))
    return updated


def _role(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    modified = ensure_object_meta(updated, required)
    if typed_equal(updated.get("rules"), required.get("rules")) and not modified:
        return None
    _set(updated, "rules", required.get("rules"))
    return updated


def _cluster_role(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    modified = ensure_object_meta(updated, required)
    same_rules = typed_equal(updated.get("rules"), required.get("rules"))
    same_aggregation = typed_equal(updated.get("aggregationRule"), required.get("aggregationRule"))
    if same_rules and same_aggregation and not modified:
        return None
    if not same_aggregation:
        _set(updated, "aggregationRule", required.get("aggregationRule"))
    # The aggregation controller owns the rules of an aggregated role.
    if not same_rules and required.get("aggregationRule") is None:
        _set(updated, "rules", required.get("rules"))
    return updated


def _binding(existing: Obj, required: Obj) -> Obj | None:
    updated, wanted = _rbac_groups(copy.deepcopy(existing)), _rbac_groups(copy.deepcopy(required))
    modified = ensure_object_meta(updated, wanted)
    same_subjects = typed_equal(updated.get("subjects"), wanted.get("subjects"))
    same_role = typed_equal(updated.get("roleRef"), wanted.get("roleRef"))
    if same_subjects and same_role and not modified:
        return None
    _set(updated, "subjects", wanted.get("subjects"))
    updated["roleRef"] = wanted.get("roleRef")
    return updated


def _rbac_groups(binding: Obj) -> Obj:
    """The RBAC API group filled in for the roleRef and User subjects."""
    role_ref = binding.get("roleRef")
    binding["roleRef"] = {
        **(role_ref if isinstance(role_ref, dict) else {}),
        "apiGroup": RBAC_GROUP,
    }
    for subject in binding.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") == "User":
            subject["apiGroup"] = RBAC_GROUP
    return binding


def _crd(existing: Obj, required: Obj) -> Obj | None:
    updated = copy.deepcopy(existing)
    modified = ensure_object_meta(updated, required)
    wanted = _crd_defaults(copy.deepcopy(required.get("spec") or {}))
    if not typed_equal(updated.get("spec"), wanted):
        updated["spec"] = wanted
        modified = True
    return updated if modified else None


def _crd_defaults(spec: Obj) -> Obj:
    """The CRD spec defaults library-go mimics before comparing."""
    names = spec.get("names")
    if isinstance(names, dict):
        if not names.get("singular"):
            names["singular"] = str(names.get("kind", "")).lower()
        if not names.get("listKind") and names.get("kind"):
            names["listKind"] = f"{names['kind']}List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = (((spec.get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {}).get(
        "service"
    )
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443
    return spec


def _set(obj: Obj, field: str, value: Any) -> None:
    """``obj[field] = value``, removing the field for None as Go's omitempty would."""
    if value is None:
        obj.pop(field, None)
    else:
        obj[field] = copy.deepcopy(value)


_TYPED: Final[dict[tuple[str, str, str], Typed]] = {
    ("", "v1", "Namespace"): Typed(_metadata_only),
    ("", "v1", "ServiceAccount"): Typed(_metadata_only),
    ("", "v1", "Pod"): Typed(_metadata_only),
    ("", "v1", "ConfigMap"): Typed(_configmap),
    ("", "v1", "Secret"): Typed(_secret, prepare=_fold_string_data, recreates=True),
    ("", "v1", "Service"): Typed(_service, prepare=_with_spec_hash),
    (RBAC_GROUP, "v1", "Role"): Typed(_role),
    (RBAC_GROUP, "v1", "ClusterRole"): Typed(_cluster_role),
    (RBAC_GROUP, "v1", "RoleBinding"): Typed(_binding),
    (RBAC_GROUP, "v1", "ClusterRoleBinding"): Typed(_binding),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"): Typed(_crd),
}
