"""Commands run in a pod connect as its ServiceAccount (issue 23's in-cluster
configuration): ``pyocm get clusters`` with the Service's address in its environment
and the account's token, CA and namespace mounted (here in a directory the test
names), against a real hub; the token is a TokenRequest's, and what the account may do
is what RBAC grants it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import urlsplit

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm


async def test_a_command_in_a_pod_acts_as_its_service_account(
    api: Api, hub: HubProcess, tmp_path: Path, unique: str
) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(kinds.SERVICE_ACCOUNT, {"metadata": {"name": "reader", "namespace": unique}})
    answer = await api.create(
        kinds.SERVICE_ACCOUNT,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        namespace=unique,
        name="reader",
        subresource="token",
    )
    mount = tmp_path / "serviceaccount"
    mount.mkdir()
    (mount / "token").write_text(answer["status"]["token"])
    (mount / "ca.crt").write_bytes(hub.ca_pem)
    (mount / "namespace").write_text(unique)
    address = urlsplit(hub.url)
    env = {
        "KUBECONFIG": "",
        "KUBERNETES_SERVICE_HOST": str(address.hostname),
        "KUBERNETES_SERVICE_PORT": str(address.port),
        "PYOCM_SERVICE_ACCOUNT_DIR": str(mount),
        "XDG_DATA_HOME": str(tmp_path / "nowhere"),  # no local hub to fall back on
    }
    refused = await asyncio.to_thread(pyocm, "get", "clusters", env=env)
    assert refused.returncode != 0
    assert f'"system:serviceaccount:{unique}:reader" cannot list' in refused.stderr, refused.stderr

    role = {
        "metadata": {"name": f"{unique}-reader"},
        "rules": [{"apiGroups": [ocm.MANAGED_CLUSTER.group], "resources": ["managedclusters"],
                   "verbs": ["list"]}],
    }  # fmt: skip
    await api.create(kinds.CLUSTER_ROLE, role)
    binding = {
        "metadata": {"name": f"{unique}-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": f"{unique}-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": unique}],
    }  # fmt: skip
    await api.create(kinds.CLUSTER_ROLE_BINDING, binding)
    try:
        listed = await asyncio.to_thread(pyocm, "get", "clusters", "-o", "json", env=env)
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout)["kind"] == "List"
    finally:
        await api.delete(kinds.CLUSTER_ROLE_BINDING, f"{unique}-reader")
        await api.delete(kinds.CLUSTER_ROLE, f"{unique}-reader")


def test_an_agent_outside_a_pod_without_a_kubeconfig_says_so(tmp_path: Path) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": ""}
    hub = tmp_path / "hub.kubeconfig"
    hub.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: hub\n"
        "clusters: [{name: hub, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: x}}]\n"
        "contexts: [{name: hub, context: {cluster: hub, user: u}}]\n"
    )
    done = pyocm("work-agent", "--hub-kubeconfig", str(hub), "--cluster-name", "c1", env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        "error: no managed cluster: pass its kubeconfig, or run in a pod of that cluster"
    )
    # A kubeconfig without a current context: one line saying so, no traceback.
    hub.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    done = pyocm("work-agent", "--hub-kubeconfig", str(hub), "--cluster-name", "c1", env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: kubeconfig: No current context set"), done.stderr
    assert "Traceback" not in done.stderr
