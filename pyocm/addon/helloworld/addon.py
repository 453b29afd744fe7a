"""The helloworld add-on as the hub's add-on manager sees it (upstream's
``examples/helloworld/helloworld.go``): its agent's manifests, its registration (one
KubeClient certificate, approved by the default rules), what the agent may do on the
hub, and health by the agent's Lease.

The agent may read ConfigMaps and its ManagedClusterAddOn in its cluster's namespace
(upstream's example grants the same through a Role; here a ClusterRole bound in each
cluster's namespace by a RoleBinding the ManagedClusterAddOn owns, so disabling the
add-on takes the grant away too).
"""

from __future__ import annotations

from typing import Any

from pyocm.addon.agent import (
    ADDON_DEPLOYMENT_CONFIG,
    AgentAddonOptions,
    RegistrationOption,
    kube_client_configurations,
)
from pyocm.addon.registration.approve import default_csr_approver
from pyocm.addon.registration.namespace import install_namespace_from_deployment_config
from pyocm.addon.registration.permissions import CurrentCluster, hub_permissions
from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.kube import kinds
from pyocm.registration.agent.addons.config import hub_kubeconfig_secret
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure

from . import ADDON_NAME, INSTALL_NAMESPACE

Obj = dict[str, Any]
#: The user the agent's certificate names: ``...:addon:helloworld:agent:<AGENT_NAME>``.
AGENT_NAME = "helloworld-agent"
#: The image of the agent's Deployment (the command inside is ``pyocm addon agent``).
IMAGE = "quay.io/open-cluster-management/helloworld-addon:latest"
#: The ClusterRole the agent is granted in its cluster's namespace on the hub.
HUB_ROLE = "open-cluster-management:helloworld:agent"


def hub_role() -> Obj:
    rules = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": [wellknown.ADDON_GROUP],
            "resources": ["managedclusteraddons"],
            "verbs": ["get", "list", "watch"],
        },
    ]
    return {"metadata": {"name": HUB_ROLE}, "rules": rules}


_BIND = hub_permissions(CurrentCluster(HUB_ROLE))


async def _permissions(api: Api, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> None:
    # The ClusterRole first: ensure writes only when it is missing or differs.
    await ensure(api, kinds.CLUSTER_ROLE, hub_role())
    await _BIND(api, cluster, addon)


def cluster_management_addon(name: str = ADDON_NAME) -> Obj:
    """The add-on's ClusterManagementAddOn (v1beta1), installed by hand (Manual) and
    configurable by AddOnDeploymentConfig, as upstream's example deploys it."""
    return {
        "apiVersion": f"{wellknown.ADDON_GROUP}/v1beta1",
        "kind": "ClusterManagementAddOn",
        "metadata": {"name": name},
        "spec": {
            "addOnMeta": {
                "displayName": name,
                "description": "helloworld is an example addon that copies ConfigMaps of"
                " the cluster's namespace on the hub to the managed cluster",
            },
            "installStrategy": {"type": "Manual"},
        },
    }


class Helloworld:
    """The helloworld :class:`~pyocm.addon.agent.AgentAddon`; under another ``name``, the
    same add-on registered, deployed (its agent's objects named after it) and granted
    as that add-on (the fleet benchmark runs three so)."""

    def __init__(self, *, name: str = ADDON_NAME, image: str = IMAGE) -> None:
        self.name = name
        self.image = image

    def options(self) -> AgentAddonOptions:
        registration = RegistrationOption(
            configurations=kube_client_configurations(self.name, AGENT_NAME),
            approve=default_csr_approver(AGENT_NAME),
            permissions=_permissions,
        )
        # No health prober: the agent's Lease tells (mode Lease), as upstream's example.
        return AgentAddonOptions(
            name=self.name,
            registration=registration,
            install_namespace=_install_namespace,
            supported_configs=(ADDON_DEPLOYMENT_CONFIG,),
        )

    async def manifests(self, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> list[Obj]:
        # Where the registration put the agent's credential (status.namespace).
        namespace = addon.get("status", {}).get("namespace") or install_namespace(addon)
        return [
            _service_account(self.name, namespace),
            _cluster_role_binding(self.name, namespace),
            self._deployment(cluster["metadata"]["name"], namespace, addon["metadata"]["name"]),
        ]

    def _deployment(self, cluster: str, namespace: str, addon: str) -> Obj:
        labels = {"app": f"{self.name}-agent"}
        container = {
            "name": f"{self.name}-agent",
            "image": self.image,
            "imagePullPolicy": "IfNotPresent",
            "args": [
                "pyocm",
                "addon",
                "agent",
                self.name,
                "--hub-kubeconfig=/var/run/hub/kubeconfig",
                f"--cluster-name={cluster}",
                f"--addon-namespace={namespace}",
            ],
            "volumeMounts": [{"name": "hub-config", "mountPath": "/var/run/hub"}],
        }
        pod = {
            "metadata": {"labels": labels},
            "spec": {
                "serviceAccountName": f"{self.name}-agent-sa",
                "volumes": [
                    {"name": "hub-config", "secret": {"secretName": hub_kubeconfig_secret(addon)}}
                ],
                "containers": [container],
            },
        }
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"{self.name}-agent", "namespace": namespace, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": pod},
        }


def install_namespace(addon: ManagedClusterAddOn) -> str:
    """The MCA's install namespace (kept in an annotation in v1beta1), else ``default``."""
    annotations = addon.get("metadata", {}).get("annotations") or {}
    return annotations.get(wellknown.ADDON_INSTALL_NAMESPACE_ANNOTATION) or INSTALL_NAMESPACE


_FROM_CONFIG = install_namespace_from_deployment_config()


async def _install_namespace(api: Api, addon: ManagedClusterAddOn) -> str:
    """An AddOnDeploymentConfig's agentInstallNamespace, else the MCA's, else
    ``default`` (upstream's example with AgentInstallNamespaceFromDeploymentConfigFunc)."""
    return await _FROM_CONFIG(api, addon) or install_namespace(addon)


def _service_account(name: str, namespace: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": f"{name}-agent-sa", "namespace": namespace},
    }


def _cluster_role_binding(name: str, namespace: str) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{name}-agent"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        "subjects": [
            {"kind": "ServiceAccount", "name": f"{name}-agent-sa", "namespace": namespace}
        ],
    }
