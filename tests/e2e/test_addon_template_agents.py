"""Template add-ons on ``pyocm up`` beyond the seed's example (issue 22): a template whose
agent is a real process keeping a Lease (pyocm's helloworld agent, run by ``pyocm up``
from the Deployment the template renders) healthy in Lease mode, and the bad inputs
the issue lists, each reported where upstream reports it while the good add-on keeps
working."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import wellknown
from tests.cli import pyocm, running_up
from tests.e2e.test_work_up import get_json, kubectl, until

INSTALL_NS = "open-cluster-management-agent-addon"
GROUP = "addon.open-cluster-management.io"
LEASE_ADDON = "helloworld-tmpl"


@pytest.fixture
def up(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    with running_up(tmp_path, clusters=1) as fleet:
        yield fleet.hub, fleet.clusters["cluster1"]


def apply(hub: Path, *objects: dict[str, Any]) -> None:
    for obj in objects:
        done = kubectl(hub, "apply", "-f", "-", stdin=json.dumps(obj))
        assert done.returncode == 0, done.stderr


def cma(name: str, *configs: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {"name": name},
        "spec": {
            "supportedConfigs": [
                {"group": GROUP, "resource": "addontemplates", "defaultConfig": {"name": name}},
                *configs,
            ]
        },
    }


def template(name: str, manifests: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    meta = {"name": name, **extra.pop("metadata", {})}
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "AddOnTemplate",
        "metadata": meta,
        "spec": {"addonName": name, "agentSpec": {"workload": {"manifests": manifests}}, **extra},
    }


def agent_deployment(name: str) -> dict[str, Any]:
    """pyocm's helloworld agent under the template's name, run by pyocm up."""
    labels = {"app": name}
    container = {
        "name": "agent",
        "image": "quay.io/pyocm/pyocm:latest",
        "args": [
            "pyocm", "addon", "agent", name, "--hub-kubeconfig={{HUB_KUBECONFIG}}",
            "--cluster-name={{CLUSTER_NAME}}", f"--addon-namespace={INSTALL_NS}",
        ],
    }  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{name}-agent", "namespace": INSTALL_NS, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def conditions_of(hub: Path, name: str) -> dict[str, tuple[str, str, str]]:
    mca = get_json(
        hub, "managedclusteraddon.addon.open-cluster-management.io", name, "-n", "cluster1"
    )
    found = (mca or {}).get("status", {}).get("conditions", [])
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in found}


def enable(hub: Path, name: str) -> None:
    done = pyocm(
        "addon", "enable", "--names", name, "--clusters", "cluster1", "--kubeconfig", str(hub)
    )
    assert done.returncode == 0, done.stderr


def test_a_template_agent_keeping_a_lease_and_bad_inputs(up: tuple[Path, Path]) -> None:
    hub, cluster1 = up
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "helloworld-tmpl-agent"},
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [GROUP], "resources": ["managedclusteraddons"], "verbs": ["get", "list", "watch"]},
        ],
    }  # fmt: skip
    lease_template = template(
        LEASE_ADDON,
        [agent_deployment(LEASE_ADDON)],
        metadata={"annotations": {"addons.pyocm.io/health-prober": "Lease"}},
        registration=[
            {
                "type": "KubeClient",
                "kubeClient": {
                    "hubPermissions": [
                        {"type": "CurrentCluster", "currentCluster": {"clusterRoleName": role["metadata"]["name"]}}
                    ]
                },
            }
        ],
    )  # fmt: skip
    apply(hub, role, lease_template, cma(LEASE_ADDON))
    enable(hub, LEASE_ADDON)

    # Lease mode: the agent pyocm up runs from the rendered Deployment renews its Lease
    # with the credential the template's registration issued.
    until(
        lambda: (
            conditions_of(hub, LEASE_ADDON).get("Available", ("",))[:2]
            == ("True", "ManagedClusterAddOnLeaseUpdated")
        ),
        timeout=90,
    )
    mca = get_json(
        hub, "managedclusteraddon.addon.open-cluster-management.io", LEASE_ADDON, "-n", "cluster1"
    )
    assert mca is not None and mca["status"]["healthCheck"]["mode"] == "Lease"
    made = kubectl(hub, "create", "configmap", "hello", "-n", "cluster1", "--from-literal=a=b")
    assert made.returncode == 0, made.stderr
    copied = until(lambda: get_json(cluster1, "configmap", "hello", "-n", INSTALL_NS))
    assert copied["data"] == {"a": "b"}

    # A variable whose value breaks the manifest's JSON: the render error on ManifestApplied.
    broken = "broken-json"
    adc = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "AddOnDeploymentConfig",
        "metadata": {"name": broken, "namespace": "cluster1"},
        "spec": {"customizedVariables": [{"name": "GREETING", "value": 'hi"there'}]},
    }
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": broken, "namespace": "default"},
                 "data": {"greeting": "{{GREETING}}", "unknown": "[{{NOT_A_VARIABLE}}]"}}  # fmt: skip
    adc_ref = {"group": GROUP, "resource": "addondeploymentconfigs",
               "defaultConfig": {"name": broken, "namespace": "cluster1"}}  # fmt: skip
    # The deployment config's agentInstallNamespace (its CRD default) moves every
    # namespaced object there and renames a Namespace object to it, as upstream does.
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "anything"}}
    apply(hub, adc, template(broken, [namespace, configmap]), cma(broken, adc_ref))
    enable(hub, broken)
    until(
        lambda: (
            conditions_of(hub, broken).get("ManifestApplied", ("",))[:2]
            == ("False", "ManifestWorkApplyFailed")
        )
    )
    message = conditions_of(hub, broken)["ManifestApplied"][2]
    assert message.startswith("failed to get manifest from agent interface: invalid character"), (
        message
    )
    # Fixed, it renders; an unknown variable renders empty, as upstream's.
    adc["spec"]["customizedVariables"][0]["value"] = "hi there"
    apply(hub, adc)
    found = until(lambda: get_json(cluster1, "configmap", broken, "-n", INSTALL_NS))
    assert found["data"] == {"greeting": "hi there", "unknown": "[]"}

    # A CustomSigner whose CA Secret upstream's add-on manager may not read (nobody
    # granted it, as the seed's signca files do): the CSR fails, saying why.
    unsigned = "missing-ca"
    custom = {"type": "CustomSigner", "customSigner": {"signerName": "example.com/missing",
              "signingCA": {"name": "no-such-secret"}}}  # fmt: skip
    apply(hub, template(unsigned, [], registration=[custom]), cma(unsigned))
    enable(hub, unsigned)

    def failed_csrs() -> list[str]:
        labels = f"{wellknown.ADDON_NAME_LABEL}={unsigned}"
        csrs = (get_json(hub, "csr", "-l", labels) or {}).get("items", [])
        return [
            str(condition["message"])
            for csr in csrs
            for condition in csr.get("status", {}).get("conditions", [])
            if condition["type"] == "Failed"
        ]

    [message, *_] = until(failed_csrs, timeout=90)
    assert (
        'get custom signer ca open-cluster-management-hub/no-such-secret failed: secrets "no-such-'
        'secret" is forbidden: User "system:serviceaccount:open-cluster-management-hub:addon-manager-'
        'controller-sa" cannot get resource "secrets"'
    ) in message, message

    # Granted but missing: the CSR the agent asks for next fails for that.
    grant = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "addon-manager-reads-secrets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "addon-manager-controller-sa",
                      "namespace": "open-cluster-management-hub"}],
    }  # fmt: skip
    apply(hub, grant)
    until(lambda: any("no-such-secret failed: not found" in m for m in failed_csrs()), timeout=120)

    # A registration of a type upstream does not know is refused at admission.
    bogus = template("bogus-registration", [], registration=[{"type": "Bogus"}])
    refused = kubectl(hub, "apply", "-f", "-", stdin=json.dumps(bogus))
    assert refused.returncode != 0
    assert 'spec.registration[0].type: Unsupported value: "Bogus"' in refused.stderr, refused.stderr

    # The add-on that works kept working throughout.
    assert conditions_of(hub, LEASE_ADDON)["Available"][0] == "True"
