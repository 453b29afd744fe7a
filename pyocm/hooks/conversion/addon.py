"""Upstream OCM's conversion of the add-on kinds between ``v1alpha1`` and ``v1beta1``.

Upstream serves ClusterManagementAddOn and ManagedClusterAddOn in both versions, stores
``v1alpha1`` (the conversion hub) and converts with a webhook (``pkg/addon/webhook``) built
on the API's conversion functions (``addon/v1beta1/conversion.go`` and its generated
``zz_generated.conversion.go``). The field moves, both directions:

ClusterManagementAddOn
  * ``spec.supportedConfigs[]{group, resource, defaultConfig{namespace, name}}`` (v1alpha1) is
    ``spec.defaultConfigs[]{group, resource, namespace, name}`` (v1beta1); a supported config
    without a default becomes the name ``__reserved_no_default__``, which converts back to
    "no defaultConfig" (as does an empty name);
  * ``status.defaultconfigReferences`` (v1alpha1, lower-case c) is
    ``status.defaultConfigReferences``;
  * the deprecated ``spec.addOnConfiguration`` has no v1beta1 field and is dropped.

ManagedClusterAddOn
  * ``spec.installNamespace`` (v1alpha1) is kept in v1beta1 as the annotation
    ``addon.open-cluster-management.io/v1alpha1-install-namespace`` (set only for a
    non-empty namespace); converting back restores the field and removes the annotation;
  * ``status.registrations[]``: ``{signerName, subject{user, groups, organizationUnit}}``
    (v1alpha1) is ``{type, kubeClient{subject{user, groups}, driver}, customSigner{signerName,
    subject{user, groups, organizationUnits}}}`` (v1beta1); the signer
    ``kubernetes.io/kube-apiserver-client`` is type ``kubeClient`` (its organization units
    are dropped), any other signer ``customSigner``;
  * ``status.kubeClientDriver`` (v1alpha1) is the ``driver`` of every ``kubeClient``
    registration (v1beta1); back, it is the first ``kubeClient`` registration's driver;
  * ``status.configReferences[]`` lose v1alpha1's top-level ``namespace``/``name`` (a
    deprecated copy of the desired config's), which converting back refills from
    ``desiredConfig``;
  * the deprecated ``status.addOnConfiguration`` is dropped.

Everything else has the same shape in both versions and is carried as is. Upstream's
losses are kept (they are what an upstream hub serves); nothing else is lost.

Upstream converts through Go structs, so its output also carries zero values of fields
without ``omitempty`` (``"user": ""``, ``"lastObservedGeneration": 0``, ``"desiredConfig":
null``). These functions leave absent fields absent instead: the same object once decoded,
and a null in a non-nullable field would fail validation on the next write.

The functions are pure: they never change their argument and return a new object (or the
argument itself when it is already at the wanted version).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

Obj = dict[str, Any]

GROUP = "addon.open-cluster-management.io"
V1ALPHA1 = "v1alpha1"
V1BETA1 = "v1beta1"
VERSIONS = (V1ALPHA1, V1BETA1)
CLUSTER_MANAGEMENT_ADDON = "ClusterManagementAddOn"
MANAGED_CLUSTER_ADDON = "ManagedClusterAddOn"

#: ``addonv1beta1.ReservedNoDefaultConfigName``: a v1alpha1 supported config had no default.
RESERVED_NO_DEFAULT_CONFIG_NAME = "__reserved_no_default__"
#: ``addonv1beta1.InstallNamespaceAnnotation``: v1alpha1's ``spec.installNamespace``.
INSTALL_NAMESPACE_ANNOTATION = "addon.open-cluster-management.io/v1alpha1-install-namespace"
#: ``certificates.KubeAPIServerClientSignerName``.
KUBE_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
KUBE_CLIENT = "kubeClient"
CUSTOM_SIGNER = "customSigner"


class ConversionError(ValueError):
    """The object cannot be converted (a version or kind this module does not know)."""


def convert_cluster_management_addon(obj: Obj, to_version: str) -> Obj:
    return _convert(obj, to_version, _cma_to_v1beta1, _cma_to_v1alpha1)


def convert_managed_cluster_addon(obj: Obj, to_version: str) -> Obj:
    return _convert(obj, to_version, _mca_to_v1beta1, _mca_to_v1alpha1)


def _convert(
    obj: Obj, to_version: str, to_beta: Callable[[Obj], None], to_alpha: Callable[[Obj], None]
) -> Obj:
    from_version = version_of(obj)
    for version in (from_version, to_version):
        if version not in VERSIONS:
            raise ConversionError(
                f"{obj.get('kind')}: cannot convert from {GROUP}/{from_version} "
                f"to {GROUP}/{to_version}: unknown version {version!r}"
            )
    if from_version == to_version:
        return obj
    out: Obj = orjson.loads(orjson.dumps(obj))
    (to_beta if to_version == V1BETA1 else to_alpha)(out)
    out["apiVersion"] = f"{GROUP}/{to_version}"
    return out


def version_of(obj: Obj) -> str:
    """The version part of the object's ``apiVersion``."""
    return str(obj.get("apiVersion") or "").rpartition("/")[2]


# --- ClusterManagementAddOn ---------------------------------------------------------


def _cma_to_v1beta1(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        spec.pop("addOnConfiguration", None)
        supported = _objects(spec.get("supportedConfigs"))
        _move(spec, "supportedConfigs", "defaultConfigs", [_default_config(c) for c in supported])
    status = _child(obj, "status")
    if status is not None:
        _rename(status, "defaultconfigReferences", "defaultConfigReferences")


def _cma_to_v1alpha1(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        defaults = _objects(spec.get("defaultConfigs"))
        _move(spec, "defaultConfigs", "supportedConfigs", [_supported_config(c) for c in defaults])
    status = _child(obj, "status")
    if status is not None:
        _rename(status, "defaultConfigReferences", "defaultconfigReferences")


def _default_config(config: Obj) -> Obj:
    """v1alpha1 ConfigMeta to v1beta1 AddOnConfig."""
    out = _pick(config, "group", "resource")
    default = config.get("defaultConfig")
    if isinstance(default, dict):
        out.update(_referent(default))
    else:
        out["name"] = RESERVED_NO_DEFAULT_CONFIG_NAME
    return out


def _supported_config(config: Obj) -> Obj:
    """v1beta1 AddOnConfig to v1alpha1 ConfigMeta: a real name is the default config."""
    out = _pick(config, "group", "resource")
    name = config.get("name")
    if name and name != RESERVED_NO_DEFAULT_CONFIG_NAME:
        out["defaultConfig"] = _referent(config)
    return out


def _referent(source: Obj) -> Obj:
    """A ConfigReferent: ``namespace`` is omitempty, ``name`` is not."""
    out: Obj = {}
    if source.get("namespace"):
        out["namespace"] = source["namespace"]
    out["name"] = source.get("name") or ""
    return out


# --- ManagedClusterAddOn ------------------------------------------------------------


def _mca_to_v1beta1(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        namespace = spec.pop("installNamespace", None)
        if namespace:
            _metadata(obj).setdefault("annotations", {})[INSTALL_NAMESPACE_ANNOTATION] = namespace
    status = _child(obj, "status")
    if status is None:
        return
    status.pop("addOnConfiguration", None)
    driver = status.pop("kubeClientDriver", None)
    for ref in _objects(status.get("configReferences")):
        ref.pop("namespace", None)
        ref.pop("name", None)
    if "registrations" in status:
        registrations = [_registration_v1beta1(r) for r in _objects(status["registrations"])]
        if driver:
            for registration in registrations:
                if registration.get("type") == KUBE_CLIENT:
                    registration.setdefault(KUBE_CLIENT, {})["driver"] = driver
        status["registrations"] = registrations


def _mca_to_v1alpha1(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        spec.pop("installNamespace", None)
    meta = _child(obj, "metadata")
    annotations = _child(meta, "annotations") if meta is not None else None
    if meta is not None and annotations is not None and INSTALL_NAMESPACE_ANNOTATION in annotations:
        namespace = annotations.pop(INSTALL_NAMESPACE_ANNOTATION)
        if not annotations:
            del meta["annotations"]
        if namespace:
            if spec is None:
                spec = obj["spec"] = {}
            spec["installNamespace"] = namespace
    status = _child(obj, "status")
    if status is None:
        return
    status.pop("kubeClientDriver", None)
    for ref in _objects(status.get("configReferences")):
        ref.pop("namespace", None)
        ref.pop("name", None)
        desired = ref.get("desiredConfig")
        if isinstance(desired, dict):
            _insert_after(ref, "resource", _referent(desired))
    if "registrations" in status:
        registrations = _objects(status["registrations"])
        driver = _first_kube_client_driver(registrations)
        status["registrations"] = [_registration_v1alpha1(r) for r in registrations]
        if driver:
            status["kubeClientDriver"] = driver


def _registration_v1beta1(registration: Obj) -> Obj:
    subject = registration.get("subject")
    if registration.get("signerName") == KUBE_CLIENT_SIGNER:
        kube_client: Obj = {}
        if isinstance(subject, dict):
            kube_client["subject"] = _pick(subject, "user", "groups")
        return {"type": KUBE_CLIENT, KUBE_CLIENT: kube_client}
    custom: Obj = {"signerName": registration.get("signerName") or ""}
    if isinstance(subject, dict):
        custom["subject"] = _pick(subject, "user", "groups")
        if subject.get("organizationUnit"):
            custom["subject"]["organizationUnits"] = subject["organizationUnit"]
    return {"type": CUSTOM_SIGNER, CUSTOM_SIGNER: custom}


def _registration_v1alpha1(registration: Obj) -> Obj:
    if registration.get("type") == KUBE_CLIENT:
        out: Obj = {"signerName": KUBE_CLIENT_SIGNER}
        kube_client = registration.get(KUBE_CLIENT)
        if isinstance(kube_client, dict) and isinstance(kube_client.get("subject"), dict):
            out["subject"] = _pick(kube_client["subject"], "user", "groups")
        return out
    custom = registration.get(CUSTOM_SIGNER)
    if not isinstance(custom, dict):
        return {}
    out = {"signerName": custom.get("signerName") or ""}
    subject = custom.get("subject")
    if isinstance(subject, dict):
        out["subject"] = _pick(subject, "user", "groups")
        if subject.get("organizationUnits"):
            out["subject"]["organizationUnit"] = subject["organizationUnits"]
    return out


def _first_kube_client_driver(registrations: list[Obj]) -> str:
    """Upstream takes the first kubeClient registration that has a kubeClient, even
    when its driver is empty."""
    for registration in registrations:
        kube_client = registration.get(KUBE_CLIENT)
        if registration.get("type") == KUBE_CLIENT and isinstance(kube_client, dict):
            return str(kube_client.get("driver") or "")
    return ""


# --- helpers -------------------------------------------------------------------------


def _child(parent: Obj, key: str) -> Obj | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _metadata(obj: Obj) -> Obj:
    meta = _child(obj, "metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    return meta


def _objects(value: Any) -> list[Obj]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _pick(source: Obj, *keys: str) -> Obj:
    return {key: source[key] for key in keys if key in source}


def _move(parent: Obj, old: str, new: str, value: list[Obj]) -> None:
    """Replace ``old`` by ``new`` at ``old``'s place; an empty list is omitted (Go's
    omitempty), and a stray ``new`` of the source version is not carried over."""
    items = list(parent.items())
    parent.clear()
    placed = False
    for key, item in items:
        if key == new:
            continue
        if key == old:
            placed = True
            if value:
                parent[new] = value
            continue
        parent[key] = item
    if not placed and value:
        parent[new] = value


def _rename(parent: Obj, old: str, new: str) -> None:
    value = parent.get(old)
    _move(parent, old, new, value if isinstance(value, list) else [])


def _insert_after(parent: Obj, anchor: str, fields: Obj) -> None:
    """Add ``fields`` right after ``anchor`` (or at the end), as v1alpha1 orders them."""
    items = list(parent.items())
    parent.clear()
    for key, item in items:
        parent[key] = item
        if key == anchor:
            parent.update(fields)
    parent.update({k: v for k, v in fields.items() if k not in parent})
