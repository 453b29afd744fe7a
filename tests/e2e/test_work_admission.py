"""The work webhook's rules through a real hub and kubectl: OCM's documented example is
taken unchanged; a manifest without a name, an executor the user may not act as, and
manifests over the limit are refused with upstream's words; a ClusterRole granting
``execute-as`` lets the same work in."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess

pytestmark = pytest.mark.kubectl

WEBHOOK = "manifestworkvalidators.admission.work.open-cluster-management.io"
DENIED = f'admission webhook "{WEBHOOK}" denied the request: '
RBAC = "rbac.authorization.k8s.io"

#: The example of https://open-cluster-management.io/concepts/manifestwork/, as printed
#: there but for the placeholder namespace.
HELLO_WORK = """\
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  namespace: <target managed cluster>
  name: hello-work-demo
spec:
  workload:
    manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: hello
          namespace: default
        spec:
          selector:
            matchLabels:
              app: hello
          template:
            metadata:
              labels:
                app: hello
            spec:
              containers:
                - name: hello
                  image: quay.io/asmacdo/busybox
                  command:
                    ["sh", "-c", 'echo "Hello, Kubernetes!" && sleep 3600']
"""


def kubectl(kubeconfig: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def a_work(namespace: str, name: str, *manifests: dict[str, Any], **spec: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "work.open-cluster-management.io/v1",
            "kind": "ManifestWork",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"workload": {"manifests": list(manifests)}, **spec},
        }
    )


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


@pytest.fixture
async def cluster_namespace(api: Api, unique: str) -> str:
    """A cluster namespace: the rules need no ManagedCluster, only the namespace."""
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    return unique


async def test_the_documented_example_is_taken_unchanged(
    hub: HubProcess, api: Api, cluster_namespace: str
) -> None:
    text = HELLO_WORK.replace("<target managed cluster>", cluster_namespace)
    applied = kubectl(hub.kubeconfig, "apply", "-f", "-", stdin=text)
    assert applied.returncode == 0, applied.stderr
    assert "manifestwork.work.open-cluster-management.io/hello-work-demo created" in applied.stdout
    stored = await api.get(ocm.MANIFEST_WORK, "hello-work-demo", namespace=cluster_namespace)
    sent = yaml.safe_load(text)
    assert stored["spec"]["workload"] == sent["spec"]["workload"]


def test_a_manifest_without_a_name_is_refused(hub: HubProcess, cluster_namespace: str) -> None:
    nameless = configmap("")
    created = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_work(cluster_namespace, "nameless", nameless)
    )
    assert created.returncode != 0
    assert created.stderr.strip() == (
        'Error from server (BadRequest): error when creating "STDIN": '
        + DENIED
        + "name must be set in manifest"
    )
    kindless = {"apiVersion": "v1", "metadata": {"name": "x", "namespace": "default"}}
    created = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_work(cluster_namespace, "kindless", kindless)
    )
    assert created.returncode != 0
    # The CRD's schema marks manifests as embedded resources: it answers first, 422.
    assert created.stderr.startswith(
        'The ManifestWork "kindless" is invalid: spec.workload.manifests[0].kind: Required value'
    )


def test_an_update_is_checked_too(hub: HubProcess, cluster_namespace: str) -> None:
    name = "updated"
    assert (
        kubectl(
            hub.kubeconfig,
            "create",
            "-f",
            "-",
            stdin=a_work(cluster_namespace, name, configmap("a")),
        ).returncode
        == 0
    )
    patched = kubectl(
        hub.kubeconfig,
        "patch",
        "manifestwork",
        name,
        "-n",
        cluster_namespace,
        "--type=json",
        "-p",
        json.dumps([{"op": "add", "path": "/spec/workload/manifests/-", "value": configmap("a")}]),
    )
    assert patched.returncode != 0
    assert patched.stderr.strip().endswith(
        DENIED + "duplicate manifest for resource default/a with resource type v1.ConfigMap"
    )


async def test_an_executor_needs_execute_as(
    hub: HubProcess, api: Api, cluster_namespace: str, unique: str
) -> None:
    user = f"deployer-{unique}"
    await api.create(
        kinds.ROLE,
        {
            "metadata": {"name": "work-editor", "namespace": cluster_namespace},
            "rules": [
                {
                    "apiGroups": ["work.open-cluster-management.io"],
                    "resources": ["manifestworks"],
                    "verbs": ["create", "get", "list", "update", "patch", "delete"],
                }
            ],
        },
    )
    await bind(api, "Role", "work-editor", user, namespace=cluster_namespace)
    executor = {
        "subject": {
            "type": "ServiceAccount",
            "serviceAccount": {"namespace": "apps", "name": "deployer"},
        }
    }
    body = a_work(cluster_namespace, "with-executor", configmap("a"), executor=executor)
    as_user = hub.identity(user).kubeconfig
    created = kubectl(as_user, "create", "-f", "-", stdin=body)
    assert created.returncode != 0
    assert created.stderr.strip() == (
        'Error from server (BadRequest): error when creating "STDIN": '
        + DENIED
        + f"user {user} cannot manipulate the Manifestwork with executor apps/deployer "
        f"in namespace {cluster_namespace}"
    )
    role = f"execute-as-{unique}"
    await api.create(
        kinds.CLUSTER_ROLE,
        {
            "metadata": {"name": role},
            "rules": [
                {
                    "apiGroups": ["work.open-cluster-management.io"],
                    "resources": ["manifestworks"],
                    "verbs": ["execute-as"],
                    "resourceNames": ["system:serviceaccount:apps:deployer"],
                }
            ],
        },
    )
    await bind(api, "ClusterRole", role, user, namespace=cluster_namespace)
    created = kubectl(as_user, "create", "-f", "-", stdin=body)
    assert created.returncode == 0, created.stderr
    # Without an executor the work needs no execute-as (NilExecutorValidating is off).
    plain = a_work(cluster_namespace, "plain", configmap("a"))
    assert kubectl(as_user, "create", "-f", "-", stdin=plain).returncode == 0


async def bind(api: Api, kind: str, role: str, user: str, *, namespace: str) -> None:
    await api.create(
        kinds.ROLE_BINDING,
        {
            "metadata": {"name": f"{role}-{user}", "namespace": namespace},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": user}],
        },
    )


def test_manifests_over_the_limit_are_refused(hub: HubProcess, cluster_namespace: str) -> None:
    chunk = "a" * (100 * 1024)
    manifests = [configmap(f"c{i}", data=chunk) for i in range(5)]
    created = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_work(cluster_namespace, "big", *manifests)
    )
    assert created.returncode != 0
    found = re.fullmatch(
        r'Error from server \(BadRequest\): error when creating "STDIN": '
        + re.escape(DENIED)
        + r"the size of manifests is (\d+) bytes which exceeds the 512000 limit",
        created.stderr.strip(),
    )
    assert found, created.stderr
    assert 5 * 100 * 1024 < int(found.group(1)) < 5 * 100 * 1024 + 1024
    fits = kubectl(
        hub.kubeconfig, "create", "-f", "-", stdin=a_work(cluster_namespace, "big", *manifests[:4])
    )
    assert fits.returncode == 0, fits.stderr


def test_the_hubs_manifest_limit_flag(tmp_path: Path) -> None:
    """``pyocm hub --manifestLimit`` (upstream's webhook flag) sets the limit."""
    with HubProcess(
        tmp_path / "hub", extra_args=["--no-controllers", "--manifestLimit", "300"]
    ) as small:
        assert kubectl(small.kubeconfig, "create", "namespace", "c1").returncode == 0
        fits = a_work("c1", "fits", configmap("a", k="x" * 100))
        assert kubectl(small.kubeconfig, "create", "-f", "-", stdin=fits).returncode == 0
        big = a_work("c1", "big", configmap("a", k="x" * 300))
        refused = kubectl(small.kubeconfig, "create", "-f", "-", stdin=big)
        assert refused.returncode != 0
        assert refused.stderr.strip().endswith(" bytes which exceeds the 300 limit")
