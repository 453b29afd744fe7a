"""Which Deployments on an embedded cluster are pyocm add-on agents to run, and how."""

from __future__ import annotations

from typing import Any

from pyocm.addon.helloworld.addon import Helloworld
from pyocm.local.addonagents import agent_spec

CLUSTER: Any = {"metadata": {"name": "cluster1"}}
MCA: Any = {
    "metadata": {"name": "helloworld", "namespace": "cluster1"},
    "status": {"namespace": "agents"},
}


async def test_the_helloworld_deployment_is_run_with_its_secret() -> None:
    [*_, deployment] = await Helloworld().manifests(CLUSTER, MCA)
    found = agent_spec(deployment)
    assert found is not None
    assert (found.options.addon, found.options.cluster, found.options.namespace) == (
        "helloworld",
        "cluster1",
        "agents",
    )
    assert found.secret == "helloworld-hub-kubeconfig"


async def test_other_containers_are_not_run() -> None:
    [*_, deployment] = await Helloworld().manifests(CLUSTER, MCA)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["/helloworld", "agent", "--cluster-name=cluster1"]  # upstream's image
    assert agent_spec(deployment) is None
    container["args"] = ["pyocm", "addon", "agent", "nope", "--cluster-name=c"]  # unknown add-on
    assert agent_spec(deployment) is None
    assert agent_spec({"spec": {}}) is None


async def test_no_secret_volume_at_the_kubeconfig_means_not_run() -> None:
    [*_, deployment] = await Helloworld().manifests(CLUSTER, MCA)
    deployment["spec"]["template"]["spec"]["volumes"] = []
    assert agent_spec(deployment) is None


async def test_a_deployment_scaled_to_zero_runs_no_agent() -> None:
    [*_, deployment] = await Helloworld().manifests(CLUSTER, MCA)
    deployment["spec"]["replicas"] = 0
    assert agent_spec(deployment) is None
    deployment["spec"]["replicas"] = 3
    assert agent_spec(deployment) is not None
