"""The helloworld add-on's hub side: what its agent needs on a cluster and how it
registers (upstream's example's shape)."""

from __future__ import annotations

from typing import Any

from pyocm.addon.agent import KUBE_CLIENT_SIGNER, default_groups, default_user
from pyocm.addon.helloworld.addon import AGENT_NAME, Helloworld

CLUSTER: Any = {"metadata": {"name": "cluster1"}}


def addon(**annotations: str) -> Any:
    return {"metadata": {"name": "helloworld", "namespace": "cluster1", "annotations": annotations}}


async def test_manifests_go_to_the_install_namespace_with_the_issued_kubeconfig() -> None:
    found = await Helloworld().manifests(CLUSTER, addon())
    assert [(o["kind"], o["metadata"].get("namespace")) for o in found] == [
        ("ServiceAccount", "default"),
        ("ClusterRoleBinding", None),
        ("Deployment", "default"),
    ]
    moved = await Helloworld().manifests(
        CLUSTER, addon(**{"addon.open-cluster-management.io/v1alpha1-install-namespace": "hw"})
    )
    deployment = moved[2]
    assert deployment["metadata"]["namespace"] == "hw"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "hub-config", "secret": {"secretName": "helloworld-hub-kubeconfig"}}
    ]
    assert "--cluster-name=cluster1" in pod["containers"][0]["args"]
    assert "--addon-namespace=hw" in pod["containers"][0]["args"]


async def test_one_kube_client_registration_with_the_default_subject() -> None:
    options = Helloworld().options()
    assert options.registration is not None
    [config] = await options.registration.configurations(CLUSTER, addon())
    assert config.signer_name == KUBE_CLIENT_SIGNER
    assert config.subject.user == default_user("cluster1", "helloworld", AGENT_NAME)
    assert config.subject.groups == default_groups("cluster1", "helloworld")
    assert options.health is None  # the agent's Lease tells
    assert options.install_namespace is not None
    assert await options.install_namespace(None, addon()) == "default"  # type: ignore[arg-type]


class Hub:
    async def get(self, _kind: Any, name: str, *, namespace: str | None = None) -> Any:
        assert (name, namespace) == ("cfg", "team")
        return {"spec": {"agentInstallNamespace": "from-config"}}


async def test_an_addon_deployment_config_chooses_the_namespace() -> None:
    options = Helloworld().options()
    assert options.install_namespace is not None
    configured = addon()
    configured["status"] = {
        "configReferences": [
            {
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs",
                "desiredConfig": {"name": "cfg", "namespace": "team", "specHash": "h"},
            }
        ]
    }
    assert await options.install_namespace(Hub(), configured) == "from-config"  # type: ignore[arg-type]
    # the manifests follow where the registration put the credential
    configured["status"]["namespace"] = "from-config"
    found = await Helloworld().manifests(CLUSTER, configured)
    assert {o["metadata"].get("namespace") for o in found} == {"from-config", None}
