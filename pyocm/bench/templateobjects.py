"""What the ``template`` scenario puts on the hub: an add-on defined by an AddOnTemplate
shaped as seed 003's example (a Deployment of the helloworld agent with its
ServiceAccount and ClusterRoleBinding; a KubeClient registration with a CurrentCluster
and a SingleNamespace hub permission, and a CustomSigner registration signed with a CA
Secret), its roles, CA Secret and AddOnDeploymentConfig, and a placement of every
cluster in decision groups, for the ProgressivePerGroup upgrade to a v2 template.

The objects are written here rather than read from the seed's YAML, so the benchmark
runs from an installed pyocm; they carry the seed's names, so what the hub does with
them is what it does with the seed's example.
"""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

from pyocm.api import wellknown
from pyocm.pki.ca import CertificateAuthority

Obj = dict[str, Any]
ADDON = "hello-template"
V2 = "hello-template-v2"
#: The bench's own namespace: the placement, its binding and the AddOnDeploymentConfig.
NAMESPACE = "pyocm-bench-template"
PLACEMENT = "all-clusters"
#: The namespace of the SingleNamespace hub permission, and its Role.
PERMISSION_NAMESPACE = "open-cluster-management"
READER_ROLE = "cm-reader"
ADMIN_CLUSTER_ROLE = "cm-admin"
#: The CustomSigner's signer and the namespace of its CA Secret.
SIGNER = "example.com/signer-name"
CA_NAMESPACE = "open-cluster-management-hub"
CA_SECRET = "ca-secret"
#: The hub add-on manager's service account, which signs the CustomSigner CSRs.
ADDON_MANAGER_ACCOUNT = "addon-manager-controller-sa"
AGENT = "hello-template-agent"
VERSION_LABEL = "addon-template-version"
TEMPLATES_GR = {"group": wellknown.ADDON_GROUP, "resource": "addontemplates"}
ADC_GR = {"group": wellknown.ADDON_GROUP, "resource": "addondeploymentconfigs"}


def template(name: str, *, version: str | None) -> Obj:
    """The AddOnTemplate ``name``; a ``version`` labels the agent's Deployment and its
    pods (the seed's v2 adds ``addon-template-version: v2``), which is what makes the
    upgrade change the Deployment on every cluster."""
    labels = {"app": AGENT} | ({VERSION_LABEL: version} if version else {})
    registration = [
        {"type": "KubeClient", "kubeClient": {"hubPermissions": _perms()}},
        {"type": "CustomSigner", "customSigner": _custom_signer()},
    ]
    return {
        "metadata": {"name": name},
        "spec": {
            "addonName": ADDON,
            "agentSpec": {"workload": {"manifests": _manifests(labels)}},
            "registration": registration,
        },
    }


def _manifests(labels: dict[str, str]) -> list[Obj]:
    namespace = wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE
    account = f"{AGENT}-sa"
    args = [
        "/helloworld",
        "agent",
        "--cluster-name={{CLUSTER_NAME}}",
        f"--addon-namespace={namespace}",
        f"--addon-name={ADDON}",
        "--hub-kubeconfig={{HUB_KUBECONFIG}}",
        "--v={{LOG_LEVEL}}",
    ]
    container = {
        "name": "helloworld-agent",
        "image": "quay.io/open-cluster-management/addon-examples:latest",
        "imagePullPolicy": "IfNotPresent",
        "args": args,
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": AGENT, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": AGENT}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"serviceAccountName": account, "containers": [container]},
            },
        },
    }
    service_account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": account, "namespace": namespace},
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": AGENT},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
    return [deployment, service_account, binding]


def _perms() -> list[Obj]:
    return [
        {"type": "CurrentCluster", "currentCluster": {"clusterRoleName": ADMIN_CLUSTER_ROLE}},
        {
            "type": "SingleNamespace",
            "singleNamespace": {
                "namespace": PERMISSION_NAMESPACE,
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": READER_ROLE,
                },
            },
        },
    ]


def _custom_signer() -> Obj:
    return {
        "signerName": SIGNER,
        "subject": {"user": "user1", "groups": ["g1", "g2"], "organizationUnit": ["o1", "o2"]},
        "signingCA": {"name": CA_SECRET, "namespace": CA_NAMESPACE},
    }


def roles() -> tuple[Obj, Obj]:
    """The SingleNamespace permission's Role and the CurrentCluster one's ClusterRole."""
    configmaps = {"apiGroups": [""], "resources": ["configmaps"]}
    reader = {
        "metadata": {"name": READER_ROLE, "namespace": PERMISSION_NAMESPACE},
        "rules": [{**configmaps, "verbs": ["get", "list", "watch"]}],
    }
    writes = ["get", "list", "watch", "create", "update", "patch", "delete"]
    admin = {
        "metadata": {"name": ADMIN_CLUSTER_ROLE},
        "rules": [
            {**configmaps, "verbs": writes},
            {
                "apiGroups": [wellknown.ADDON_GROUP],
                "resources": ["managedclusteraddons"],
                "verbs": ["get", "list", "watch"],
            },
        ],
    }
    return reader, admin


def ca_secret() -> Obj:
    """A fresh CA for the CustomSigner, as the ``kubernetes.io/tls`` Secret it names."""
    ca = CertificateAuthority.create("hello-template-signer", valid_for=timedelta(days=1))
    data = {"tls.crt": ca.cert_pem, "tls.key": ca.key_pem}
    return {
        "metadata": {"name": CA_SECRET, "namespace": CA_NAMESPACE},
        "type": "kubernetes.io/tls",
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }


def ca_access() -> tuple[Obj, Obj]:
    """The Role and RoleBinding letting the hub's add-on manager read the CA Secret (the
    seed's signca-secret-role and -rolebinding: the manager's account may not read
    Secrets otherwise)."""
    name = "get-customer-ca"
    role = {
        "metadata": {"name": name, "namespace": CA_NAMESPACE},
        "rules": [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
             "resourceNames": [CA_SECRET]}
        ],
    }  # fmt: skip
    binding = {
        "metadata": {"name": name, "namespace": CA_NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [
            {"kind": "ServiceAccount", "name": ADDON_MANAGER_ACCOUNT, "namespace": CA_NAMESPACE}
        ],
    }
    return role, binding


def deployment_config() -> Obj:
    """The AddOnDeploymentConfig giving the template's ``LOG_LEVEL``."""
    return {
        "metadata": {"name": ADDON, "namespace": NAMESPACE},
        "spec": {"customizedVariables": [{"name": "LOG_LEVEL", "value": "4"}]},
    }


def placement(*, per_group: str) -> Obj:
    """Every cluster of the bound ``global`` set, in decision groups of ``per_group``."""
    strategy = {"groupStrategy": {"clustersPerDecisionGroup": per_group}}
    return {
        "metadata": {"name": PLACEMENT, "namespace": NAMESPACE},
        "spec": {"decisionStrategy": strategy},
    }


def cma() -> Obj:
    """The ClusterManagementAddOn: the template and the deployment config as defaults,
    installed on the placement's clusters all at once. In v1beta1, the version the
    bench's client writes: the seed's v1alpha1 ``supportedConfigs[].defaultConfig`` are
    its ``defaultConfigs`` (the hub stores both versions alike)."""
    return {
        "metadata": {
            "name": ADDON,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
        },
        "spec": {
            "addOnMeta": {"description": ADDON, "displayName": ADDON},
            "defaultConfigs": [
                {**TEMPLATES_GR, "name": ADDON},
                {**ADC_GR, "name": ADDON, "namespace": NAMESPACE},
            ],
            "installStrategy": install_strategy(rollout={"type": "All"}),
        },
    }


def install_strategy(*, rollout: Obj, template: str | None = None) -> Obj:
    """A Placements strategy over the bench's placement; ``template`` overrides the
    default template for its clusters (the upgrade)."""
    entry: Obj = {"name": PLACEMENT, "namespace": NAMESPACE, "rolloutStrategy": rollout}
    if template is not None:
        entry["configs"] = [{**TEMPLATES_GR, "name": template}]
    return {"type": "Placements", "placements": [entry]}
