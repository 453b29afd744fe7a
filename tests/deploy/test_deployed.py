"""pyocm deployed by its own manifests (issue 23's "done when"), run as a kubelet would
run it, with nothing but what the manifests grant:

- the hub manifests applied to a pyocm hub whose API server applies no OCM rule itself
  and runs no controller (``--no-controllers --no-ocm-admission``), standing in for a
  kube-apiserver: OCM admission there is what the deployed webhooks answer;
- the pods of the hub's controller and webhook Deployments run by a stand-in kubelet
  (tests/podrunner.py) as their ServiceAccounts, through in-cluster configuration;
- the klusterlet manifests applied to a second pyocm API server standing in for the
  managed cluster (what pyocm's embedded clusters are), and the agent's pod run there.

The registration and cluster-set flows then pass through them: join, accept, Available;
the webhooks' defaults and refusals with upstream's messages; sets, bindings, placement
and a ManifestWork applied on the managed cluster. A controller, webhook or agent call
that its RBAC refused would show as "forbidden" in its pod's log: none may.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm
from tests.conftest import hub_process
from tests.deploy.manifests import DEPLOY, apply, klusterlet_copy, render_text, run
from tests.podrunner import Pod, run_deployment
from tests.support import (
    eventually,
    grant,
    service_account_token,
    subject,
    token_kubeconfig,
)

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.timeout(300),
    pytest.mark.asyncio(loop_scope="module"),
]
Obj = dict[str, Any]
HUB_NS = "open-cluster-management-hub"
AGENT_NS = "open-cluster-management-agent"
CLUSTER = "cluster1"  # the name deploy/klusterlet's kustomization sets
VALIDATOR = "managedclustervalidators.admission.cluster.open-cluster-management.io"
BINDING_VALIDATOR = (
    "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io"
)
WORK_VALIDATOR = "manifestworkvalidators.admission.work.open-cluster-management.io"


@pytest.fixture(scope="module")
def bare_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(
        tmp_path_factory, "deployed-hub", ["--no-controllers", "--no-ocm-admission"]
    )


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "deployed-managed", ["--no-controllers"])


class Deployed:
    def __init__(self, hub: Api, spoke: Api, pods: list[Pod]) -> None:
        self.hub, self.spoke, self.pods = hub, spoke, pods

    def logs(self) -> str:
        return "\n".join(f"=== {p.name}\n{p.log()[-4000:]}" for p in self.pods)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def deployed(
    bare_hub: HubProcess, managed: HubProcess, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Deployed]:
    work = tmp_path_factory.mktemp("pods")
    apply(bare_hub, render_text(DEPLOY / "hub"))
    pods: list[Pod] = []
    async with (
        Api.from_kubeconfig(bare_hub.kubeconfig) as hub,
        Api.from_kubeconfig(managed.kubeconfig) as spoke,
    ):
        try:
            for name in ("cluster-manager-controller", "cluster-manager-webhook"):
                pods.append(
                    await run_deployment(
                        hub, ca_pem=bare_hub.ca_pem, namespace=HUB_NS, name=name, workdir=work
                    )
                )
            for pod in pods:
                await pod.wait_ready(timeout=90)
            await _join_with_klusterlet_manifests(hub, spoke, bare_hub, managed, work, pods)
            yield Deployed(hub, spoke, pods)
        finally:
            for pod in pods:
                await pod.stop()
    for pod in pods:
        assert "forbidden" not in pod.log().lower(), f"RBAC refused a call:\n{pod.log()[-6000:]}"


async def _join_with_klusterlet_manifests(
    hub: Api, spoke: Api, bare_hub: HubProcess, managed: HubProcess, work: Path, pods: list[Pod]
) -> None:
    # The bootstrap credential a hub admin hands out (clusteradm get token): a token of
    # the bootstrap ServiceAccount the hub manifests hold.
    token = await service_account_token(
        hub, "open-cluster-management", "agent-registration-bootstrap"
    )
    bootstrap = json.dumps(token_kubeconfig(bare_hub.url, bare_hub.ca_pem, token))
    klusterlet = klusterlet_copy(work, bootstrap=bootstrap)
    apply(managed, render_text(klusterlet))
    agent = await run_deployment(
        spoke, ca_pem=managed.ca_pem, namespace=AGENT_NS, name="klusterlet-agent", workdir=work
    )
    pods.append(agent)


def kubectl_as(
    server: HubProcess, user: str, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return run(server, f"--as={user}", *args, stdin=stdin)


def accept_as(server: HubProcess, user: str) -> subprocess.CompletedProcess[str]:
    """``user`` sets hubAcceptsClient on the cluster, as clusteradm accept does."""
    patch = '{"spec":{"hubAcceptsClient":true}}'
    return kubectl_as(server, user, "patch", "managedcluster", CLUSTER, "--type=merge", "-p", patch)


async def _condition(
    api: Api, kind: Any, name: str, kind_type: str, *, namespace: str | None = None
) -> str | None:
    try:
        obj = await api.get(kind, name, namespace=namespace)
    except ApiError:
        return None
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind_type:
            return str(condition.get("status"))
    return None


# --- registration ------------------------------------------------------------------


async def test_the_agent_joins_and_is_available_once_accepted(
    deployed: Deployed, bare_hub: HubProcess
) -> None:
    hub = deployed.hub

    async def requested() -> Obj:
        return await hub.get(ocm.MANAGED_CLUSTER, CLUSTER)

    cluster = await eventually(requested, timeout=60)
    # The mutating webhook put the new cluster into the default set.
    assert (
        cluster["metadata"]["labels"]["cluster.open-cluster-management.io/clusterset"] == "default"
    )

    # Accepting needs managedclusters/accept: the validating webhook asks a SubjectAccessReview.
    refused = accept_as(bare_hub, "mallory")
    assert refused.returncode != 0
    assert "forbidden" in refused.stderr  # RBAC: mallory may not even patch
    await grant(hub, "cluster-patcher", subject("User", "mallory"), [
        {"apiGroups": [ocm.MANAGED_CLUSTER.group], "resources": ["managedclusters"], "verbs": ["get", "patch"]}
    ])  # fmt: skip

    async def webhook_refuses() -> str:
        done = accept_as(bare_hub, "mallory")
        assert "HubAcceptsClient" in done.stderr, done.stderr
        return done.stderr

    message = await eventually(webhook_refuses, timeout=20)
    assert (
        f'admission webhook "{VALIDATOR}" denied the request: managedclusters/accept.register.'
        f'open-cluster-management.io "{CLUSTER}" is forbidden: user "mallory" cannot update the '
        "HubAcceptsClient field"
    ) in message

    accepted = await asyncio.to_thread(
        pyocm, "accept", "--clusters", CLUSTER, "--kubeconfig", str(bare_hub.kubeconfig), "--wait"
    )
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr + deployed.logs()

    async def available() -> bool:
        status = await _condition(
            hub, ocm.MANAGED_CLUSTER, CLUSTER, "ManagedClusterConditionAvailable"
        )
        assert status == "True", deployed.logs()
        return True

    await eventually(available, timeout=120)
    # The hub controller, as its ServiceAccount, made the cluster's namespace and RBAC.
    await hub.get(kinds.NAMESPACE, CLUSTER)
    await hub.get(kinds.CLUSTER_ROLE, f"open-cluster-management:managedcluster:{CLUSTER}")


# --- cluster sets, placement and work -----------------------------------------------


async def test_cluster_sets_bindings_placement_and_work(
    deployed: Deployed, bare_hub: HubProcess
) -> None:
    hub, spoke = deployed.hub, deployed.spoke

    async def joined() -> bool:
        status = await _condition(
            hub, ocm.MANAGED_CLUSTER, CLUSTER, "ManagedClusterConditionAvailable"
        )
        assert status == "True"
        return True

    await eventually(joined, timeout=180)
    await hub.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": "dev"}, "spec": {}})
    await hub.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": "prod"}, "spec": {}})

    # Moving the cluster needs managedclustersets/join on both sets: the webhook asks.
    label = [
        "label",
        "managedcluster",
        CLUSTER,
        "--overwrite",
        "cluster.open-cluster-management.io/clusterset=dev",
    ]
    refused = kubectl_as(bare_hub, "mallory", *label)
    assert refused.returncode != 0
    assert f'admission webhook "{VALIDATOR}" denied the request' in refused.stderr, refused.stderr
    assert "managedclustersets/join" in refused.stderr
    done = run(bare_hub, *label)
    assert done.returncode == 0, done.stderr

    # The cluster-set controller (as its ServiceAccount) counts the set's clusters.
    async def dev_has_the_cluster() -> bool:
        status = await _condition(hub, ocm.MANAGED_CLUSTER_SET, "dev", "ClusterSetEmpty")
        assert status == "False", status
        return True

    await eventually(dev_has_the_cluster, timeout=60)

    # Binding needs managedclustersets/bind on the set: alice may bind dev, not prod.
    await hub.create(kinds.NAMESPACE, {"metadata": {"name": "team"}})
    group = ocm.MANAGED_CLUSTER.group
    await grant(hub, "dev-binder", subject("User", "alice"), [
        {"apiGroups": [group], "resources": ["managedclustersetbindings"], "verbs": ["create", "get"]},
        {"apiGroups": [group], "resources": ["managedclustersets/bind"], "resourceNames": ["dev"], "verbs": ["create"]},
    ])  # fmt: skip

    def binding(name: str) -> str:
        return json.dumps(
            {
                "apiVersion": "cluster.open-cluster-management.io/v1beta2",
                "kind": "ManagedClusterSetBinding",
                "metadata": {"name": name, "namespace": "team"},
                "spec": {"clusterSet": name},
            }
        )

    refused = kubectl_as(bare_hub, "alice", "create", "-f", "-", stdin=binding("prod"))
    assert (
        f'admission webhook "{BINDING_VALIDATOR}" denied the request: '
        'managedclustersets/bind.cluster.open-cluster-management.io "prod" is forbidden: '
        'user "alice" is not allowed to bind cluster set "prod"'
    ) in refused.stderr, refused.stderr
    done = kubectl_as(bare_hub, "alice", "create", "-f", "-", stdin=binding("dev"))
    assert done.returncode == 0, done.stderr

    async def bound() -> bool:
        status = await _condition(
            hub, ocm.MANAGED_CLUSTER_SET_BINDING, "dev", "Bound", namespace="team"
        )
        assert status == "True", status
        return True

    await eventually(bound, timeout=60)

    # The placement controller (as its ServiceAccount) decides on the bound set's cluster.
    await hub.create(
        ocm.PLACEMENT,
        {"metadata": {"name": "devs", "namespace": "team"}, "spec": {"clusterSets": ["dev"]}},
    )

    async def decided() -> bool:
        found = await hub.list(ocm.PLACEMENT_DECISION, namespace="team")
        chosen = [
            d["clusterName"]
            for item in found["items"]
            for d in (item.get("status") or {}).get("decisions") or []
        ]
        assert chosen == [CLUSTER], (chosen, deployed.logs())
        return True

    await eventually(decided, timeout=60)

    # ManifestWork: the work webhook refuses an empty one; the agent applies a real one.
    empty = {
        "metadata": {"name": "empty", "namespace": CLUSTER},
        "spec": {"workload": {"manifests": []}},
    }
    with pytest.raises(ApiError) as err:
        await hub.create(ocm.MANIFEST_WORK, empty)
    assert f'admission webhook "{WORK_VALIDATOR}" denied the request' in err.value.message
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "from-the-hub", "namespace": "default"},
        "data": {"deployed": "yes"},
    }
    await hub.create(
        ocm.MANIFEST_WORK,
        {
            "metadata": {"name": "hello", "namespace": CLUSTER},
            "spec": {"workload": {"manifests": [config_map]}},
        },
    )

    async def applied() -> bool:
        got = await spoke.get(kinds.CONFIGMAP, "from-the-hub", namespace="default")
        assert got["data"] == {"deployed": "yes"}
        status = await _condition(hub, ocm.MANIFEST_WORK, "hello", "Applied", namespace=CLUSTER)
        assert status == "True", status
        return True

    await eventually(applied, timeout=90)
