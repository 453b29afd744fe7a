"""The built-in Kubernetes kinds the hub serves, and what each adds to the generic store.

:func:`builtin_resources` is the table registered at start: group, version, names, scope,
verbs and subresources exactly as Kubernetes' discovery shows them, each with its
strategy. One module per API group holds the strategies (``core``, ``configdata``,
``events``, ``coordination``, ``certificates``, ``rbac``, ``apiextensions``,
``admissionregistration``); the review
kinds, which are answered and never stored, are in ``reviews``; the workload and service
kinds (Deployments, Pods, Services, Jobs...) are in ``workloads``.

Core and ``events.k8s.io`` Events share one store (``storage_group``): objects are kept in
the core shape, and :func:`events.to_core` / :func:`events.from_core` convert the other.
"""

from __future__ import annotations

from pyocm.apiserver.registry.builtin import (
    admissionregistration,
    apiextensions,
    certificates,
    configdata,
    coordination,
    core,
    events,
    printers,
    rbac,
    reviews,
    workloads,
)
from pyocm.apiserver.registry.resources import ResourceInfo, SubresourceInfo
from pyocm.apiserver.registry.strategy import STATUS

#: Namespaces cannot be deleted as a collection.
_NAMESPACE_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
_STATUS = SubresourceInfo(STATUS)


def _core() -> list[ResourceInfo]:
    return [
        ResourceInfo(
            group="",
            version="v1",
            kind="Namespace",
            plural="namespaces",
            singular="namespace",
            namespaced=False,
            strategy=core.NamespaceStrategy(),
            columns=printers.NAMESPACE,
            short_names=("ns",),
            verbs=_NAMESPACE_VERBS,
            subresources=(SubresourceInfo("finalize", verbs=("update",)), _STATUS),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="ConfigMap",
            plural="configmaps",
            singular="configmap",
            namespaced=True,
            strategy=configdata.ConfigMapStrategy(),
            columns=printers.CONFIGMAP,
            short_names=("cm",),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="Secret",
            plural="secrets",
            singular="secret",
            namespaced=True,
            strategy=configdata.SecretStrategy(),
            columns=printers.SECRET,
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="ServiceAccount",
            plural="serviceaccounts",
            singular="serviceaccount",
            namespaced=True,
            strategy=core.ServiceAccountStrategy(),
            columns=printers.SERVICEACCOUNT,
            short_names=("sa",),
            subresources=(
                SubresourceInfo(
                    "token",
                    verbs=("create",),
                    kind="TokenRequest",
                    group="authentication.k8s.io",
                    version="v1",
                ),
            ),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="Event",
            plural="events",
            singular="event",
            namespaced=True,
            strategy=events.CoreEventStrategy(),
            columns=printers.EVENT,
            short_names=("ev",),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="Node",
            plural="nodes",
            singular="node",
            namespaced=False,
            strategy=core.NodeStrategy(),
            columns=printers.NODE,
            short_names=("no",),
            subresources=(_STATUS,),
        ),
    ]


def _groups() -> list[ResourceInfo]:
    return [
        ResourceInfo(
            group=events.GROUP,
            version="v1",
            kind="Event",
            plural="events",
            singular="event",
            namespaced=True,
            strategy=events.EventStrategy(),
            columns=printers.EVENT,
            short_names=("ev",),
            # The core group's storage name (see ResourceInfo.key_prefix).
            storage_group="core",
        ),
        ResourceInfo(
            group="coordination.k8s.io",
            version="v1",
            kind="Lease",
            plural="leases",
            singular="lease",
            namespaced=True,
            strategy=coordination.LeaseStrategy(),
            columns=printers.LEASE,
        ),
        ResourceInfo(
            group="certificates.k8s.io",
            version="v1",
            kind="CertificateSigningRequest",
            plural="certificatesigningrequests",
            singular="certificatesigningrequest",
            namespaced=False,
            strategy=certificates.CertificateSigningRequestStrategy(),
            columns=printers.CSR,
            short_names=("csr",),
            subresources=(SubresourceInfo(certificates.APPROVAL), _STATUS),
        ),
        *_rbac(),
        ResourceInfo(
            group="apiextensions.k8s.io",
            version="v1",
            kind="CustomResourceDefinition",
            plural="customresourcedefinitions",
            singular="customresourcedefinition",
            namespaced=False,
            strategy=apiextensions.CustomResourceDefinitionStrategy(),
            columns=printers.CRD,
            short_names=("crd", "crds"),
            categories=("api-extensions",),
            subresources=(_STATUS,),
        ),
    ]


def _rbac() -> list[ResourceInfo]:
    kinds = (
        ("ClusterRole", False, rbac.ClusterRoleStrategy(), printers.ROLE),
        ("ClusterRoleBinding", False, rbac.ClusterRoleBindingStrategy(), printers.BINDING),
        ("Role", True, rbac.RoleStrategy(), printers.ROLE),
        ("RoleBinding", True, rbac.RoleBindingStrategy(), printers.BINDING),
    )
    return [
        ResourceInfo(
            group=rbac.GROUP,
            version="v1",
            kind=kind,
            plural=f"{kind.lower()}s",
            singular=kind.lower(),
            namespaced=namespaced,
            strategy=strategy,
            columns=columns,
        )
        for kind, namespaced, strategy, columns in kinds
    ]


def builtin_resources() -> list[ResourceInfo]:
    """Every built-in resource, with fresh strategy instances."""
    return (
        _core()
        + _groups()
        + reviews.review_resources()
        + workloads.workload_resources()
        + admissionregistration.admission_registration_resources()
    )
