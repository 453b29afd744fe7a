"""Upstream's ``pkg/addon/templateagent/testmanifests`` templates, written as data.

``addontemplate.yaml`` (Deployment, DaemonSet, ServiceAccount, ClusterRoleBinding, Job),
``addontemplate_deployment.yaml`` (the same without the DaemonSet) and
``addontemplate_daemonset.yaml`` (DaemonSet, ServiceAccount, ClusterRoleBinding, all in
``open-cluster-management-agent-addon-ds``), with the two registrations they share.
"""

from __future__ import annotations

from typing import Any

NS = "open-cluster-management-agent-addon"
ORPHAN = {"addon.open-cluster-management.io/deletion-orphan": ""}
LABELS = {"app": "hello-template-agent"}


def _pod(namespace: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": LABELS},
        "spec": {
            "serviceAccountName": "hello-template-agent-sa",
            "containers": [
                {
                    "name": "helloworld-agent",
                    "image": "quay.io/open-cluster-management/addon-examples:v1",
                    "imagePullPolicy": "IfNotPresent",
                    "args": [
                        "/helloworld_helm",
                        "agent",
                        "--cluster-name={{CLUSTER_NAME}}",
                        f"--addon-namespace={namespace}",
                        "--addon-name=hello-template",
                        "--hub-kubeconfig={{HUB_KUBECONFIG}}",
                    ],
                    "env": [{"name": "LOG_LEVEL", "value": "{{LOG_LEVEL}}"}],
                }
            ],
        },
    }


def deployment(namespace: str = NS) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": "hello-template-agent",
            "namespace": namespace,
            "annotations": ORPHAN,
            "labels": LABELS,
        },
        "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}, "template": _pod(namespace)},
    }


def daemonset(namespace: str = NS) -> dict[str, Any]:
    return {
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": "hello-template-agent-ds",
            "namespace": namespace,
            "annotations": ORPHAN,
            "labels": LABELS,
        },
        "spec": {"selector": {"matchLabels": LABELS}, "template": _pod(namespace)},
    }


def service_account(namespace: str = NS) -> dict[str, Any]:
    return {
        "kind": "ServiceAccount",
        "apiVersion": "v1",
        "metadata": {
            "name": "hello-template-agent-sa",
            "namespace": namespace,
            "annotations": ORPHAN,
        },
    }


def cluster_role_binding(namespace: str = NS) -> dict[str, Any]:
    return {
        "kind": "ClusterRoleBinding",
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": {"name": "hello-template-agent"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        "subjects": [
            {"kind": "ServiceAccount", "name": "hello-template-agent-sa", "namespace": namespace}
        ],
    }


def cleanup_job() -> dict[str, Any]:
    return {
        "kind": "Job",
        "apiVersion": "batch/v1",
        "metadata": {
            "name": "hello-template-cleanup-configmap",
            "namespace": NS,
            "annotations": {"addon.open-cluster-management.io/addon-pre-delete": ""},
        },
        "spec": {
            "manualSelector": True,
            "selector": {"matchLabels": {"job": "hello-template-cleanup-configmap"}},
            "template": {
                "metadata": {"labels": {"job": "hello-template-cleanup-configmap"}},
                "spec": {
                    "serviceAccountName": "hello-template-agent-sa",
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "hello-template-agent",
                            "image": "quay.io/open-cluster-management/addon-examples",
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["/helloworld_helm", "cleanup", f"--addon-namespace={NS}"],
                        }
                    ],
                },
            },
        },
    }


REGISTRATION: list[dict[str, Any]] = [
    {
        "type": "KubeClient",
        "kubeClient": {
            "hubPermissions": [
                {"type": "CurrentCluster", "currentCluster": {"clusterRoleName": "cm-admin"}}
            ]
        },
    },
    {
        "type": "CustomSigner",
        "customSigner": {
            "signerName": "example.com/signer-name",
            "signingCA": {"name": "ca-secret", "namespace": "default"},
            "subject": {"groups": ["g1", "g2"], "organizationUnit": ["o1", "o2"], "user": "user1"},
        },
    },
]


def template_spec(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "addonName": "hello-template",
        "agentSpec": {"workload": {"manifests": manifests}},
        "registration": REGISTRATION,
    }


def addontemplate() -> dict[str, Any]:
    return template_spec(
        [deployment(), daemonset(), service_account(), cluster_role_binding(), cleanup_job()]
    )


def addontemplate_deployment() -> dict[str, Any]:
    return template_spec([deployment(), service_account(), cluster_role_binding(), cleanup_job()])


def addontemplate_daemonset() -> dict[str, Any]:
    ds_ns = f"{NS}-ds"
    return template_spec([daemonset(ds_ns), service_account(ds_ns), cluster_role_binding(ds_ns)])
