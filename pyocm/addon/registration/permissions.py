"""What an add-on agent may do on the hub: RoleBindings for the subject its registration
names (upstream's template add-ons' ``TemplatePermissionConfigFunc`` over the framework's
dynamic subjects, ocm-behaviour.md 4.9).

* :class:`CurrentCluster` binds a ClusterRole in the cluster's namespace; the binding is
  owned by the ManagedClusterAddOn (a controller-less ownerReference), so the hub's
  garbage collector removes it with the add-on.
* :class:`SingleNamespace` binds a Role or ClusterRole in one namespace; as upstream,
  it has no owner and is left when the add-on goes (every cluster's agent of the add-on
  shares it: the name has no cluster in it, and each cluster's pass writes its own
  subjects into it, the add-on-wide group among them).

Bindings are named ``open-cluster-management:<addon>:<lowercase roleRef kind>:agent`` and
labelled with the add-on's name and an empty template name, as upstream writes them.
The subjects are the first kubeClient registration's user and groups (never
``system:authenticated``); none yet raises :class:`~pyocm.addon.agent.SubjectNotReady`.

An add-on grants ClusterRole ``hello-agent`` in each cluster's namespace with::

    RegistrationOption(configurations=..., permissions=hub_permissions(CurrentCluster("hello-agent")))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyocm.addon.agent import PermissionConfig, SubjectNotReady
from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.api.models.rbac_v1 import RoleBinding, RoleRef, Subject
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure

RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHENTICATED = "system:authenticated"


@dataclass(frozen=True)
class CurrentCluster:
    """Bind ClusterRole ``cluster_role`` in the cluster's namespace."""

    cluster_role: str


@dataclass(frozen=True)
class SingleNamespace:
    """Bind ``role_ref`` (a Role, or a ClusterRole) in ``namespace``."""

    namespace: str
    role_ref: RoleRef


HubPermission = CurrentCluster | SingleNamespace


def registration_subjects(addon: ManagedClusterAddOn) -> list[Subject]:
    """The RBAC subjects of the add-on's first kubeClient registration (upstream's
    ``buildSubjectsFromRegistration``); [] when there is none or its subject is empty."""
    for registration in addon.get("status", {}).get("registrations") or []:
        if registration.get("type") != "kubeClient":
            continue
        subject = registration.get("kubeClient", {}).get("subject", {})
        subjects: list[Subject] = []
        if subject.get("user"):
            subjects.append({"kind": "User", "apiGroup": RBAC_GROUP, "name": subject["user"]})
        subjects.extend(
            {"kind": "Group", "apiGroup": RBAC_GROUP, "name": group}
            for group in subject.get("groups") or []
            if group != AUTHENTICATED
        )
        return subjects
    return []


def binding_name(addon: str, role_kind: str) -> str:
    return f"open-cluster-management:{addon}:{role_kind.lower()}:agent"


def permission_binding(
    permission: HubPermission, cluster: ManagedCluster, addon: ManagedClusterAddOn
) -> RoleBinding:
    """The RoleBinding ``permission`` asks for; raises :class:`SubjectNotReady`."""
    subjects = registration_subjects(addon)
    if not subjects:
        raise SubjectNotReady()
    name = addon["metadata"]["name"]
    binding: RoleBinding
    if isinstance(permission, CurrentCluster):
        role_ref: RoleRef = {
            "apiGroup": RBAC_GROUP,
            "kind": "ClusterRole",
            "name": permission.cluster_role,
        }
        namespace = cluster["metadata"]["name"]
    else:
        role_ref, namespace = permission.role_ref, permission.namespace
    binding = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": binding_name(name, role_ref["kind"]),
            "namespace": namespace,
            "labels": {wellknown.ADDON_NAME_LABEL: name, wellknown.ADDON_TEMPLATE_NAME_LABEL: ""},
        },
        "roleRef": role_ref,
        "subjects": subjects,
    }
    if isinstance(permission, CurrentCluster):
        binding["metadata"]["ownerReferences"] = [_owner(addon)]
    return binding


def _owner(addon: ManagedClusterAddOn) -> OwnerReference:
    """Upstream's reference: no controller, no blockOwnerDeletion."""
    return {
        "apiVersion": f"{wellknown.ADDON_GROUP}/v1beta1",
        "kind": "ManagedClusterAddOn",
        "name": addon["metadata"]["name"],
        "uid": addon["metadata"]["uid"],
    }


def hub_permissions(*permissions: HubPermission) -> PermissionConfig:
    """A ``PermissionConfigFunc`` ensuring a RoleBinding for each of ``permissions``."""
    wanted: Sequence[HubPermission] = permissions

    async def configure(api: Api, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> None:
        for permission in wanted:
            binding = permission_binding(permission, cluster, addon)
            await ensure(api, kinds.ROLE_BINDING, dict(binding))

    return configure
