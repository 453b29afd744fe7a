"""kubectl against a real hub: the everyday command set, run by kubectl 1.30 (JSON only)
and by 1.31 to 1.33 (1.32 and 1.33 send protobuf bodies for certificate approve, auth can-i
and create token)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pyocm.pki import csr, keys
from pyocm.testing import HubProcess

pytestmark = pytest.mark.kubectl
VERSIONS = ("1.30", "1.31", "1.32", "1.33")
_current = {"version": VERSIONS[0]}


@pytest.fixture(autouse=True, params=VERSIONS, ids=[f"kubectl-{v}" for v in VERSIONS])
def kubectl_version(request: pytest.FixtureRequest) -> str:
    """Every test runs once per kubectl version."""
    _current["version"] = request.param
    return str(request.param)


def kubectl_binary() -> str:
    found = shutil.which("kubectl")
    assert found, "kubectl is not on PATH"
    versioned = Path(found).resolve().parent / f"kubectl.{_current['version']}"
    assert versioned.exists(), f"{versioned} is missing (the machine image ships kubectl 1.27-1.33)"
    return str(versioned)


def run(hub: HubProcess, *args: str, stdin: str | None = None, check: bool = True, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [kubectl_binary(), f"--kubeconfig={kubeconfig or hub.kubeconfig}", *args]
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60,
                            env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"})
    if check:
        assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_api_resources(hub: HubProcess) -> None:
    out = run(hub, "api-resources").stdout
    assert "managedclusters" in out and "mcl" in out
    assert "certificatesigningrequests" in out and "leases" in out


def test_apply_get_label_annotate_patch_delete(hub: HubProcess, unique: str) -> None:
    manifest = f"""
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: {unique}
spec:
  hubAcceptsClient: false
"""
    assert "created" in run(hub, "apply", "-f", "-", stdin=manifest).stdout
    assert "configured" in run(hub, "apply", "-f", "-", stdin=manifest.replace("false", "true")).stdout
    obj = json.loads(run(hub, "get", "managedcluster", unique, "-o", "json").stdout)
    assert obj["spec"]["hubAcceptsClient"] is True and obj["spec"]["leaseDurationSeconds"] == 60
    assert unique in run(hub, "get", "mcl").stdout
    run(hub, "label", "mcl", unique, "env=dev")
    run(hub, "annotate", "mcl", unique, "note=hello")
    run(hub, "patch", "mcl", unique, "--type", "merge", "-p", '{"spec":{"leaseDurationSeconds":30}}')
    run(hub, "patch", "mcl", unique, "--type", "json", "-p", '[{"op":"replace","path":"/spec/leaseDurationSeconds","value":20}]')
    obj = json.loads(run(hub, "get", "mcl", unique, "-o", "json").stdout)
    assert obj["metadata"]["labels"]["env"] == "dev" and obj["metadata"]["annotations"]["note"] == "hello"
    assert obj["spec"]["leaseDurationSeconds"] == 20
    assert "deleted" in run(hub, "delete", "mcl", unique).stdout
    assert run(hub, "get", "mcl", unique, check=False).returncode != 0


def test_strategic_patch_and_yaml_output_on_configmap(hub: HubProcess, unique: str) -> None:
    run(hub, "create", "configmap", unique, "--from-literal=a=1")
    run(hub, "patch", "configmap", unique, "-p", '{"data":{"b":"2"}}')
    out = run(hub, "get", "configmap", unique, "-o", "yaml").stdout
    assert "a: \"1\"" in out and "b: \"2\"" in out


def test_delete_waits_for_finalizers(hub: HubProcess, unique: str) -> None:
    manifest = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": unique, "finalizers": ["example.com/hold"]}})
    run(hub, "apply", "-f", "-", stdin=manifest)
    assert run(hub, "delete", "configmap", unique, "--wait=false").returncode == 0
    obj = json.loads(run(hub, "get", "configmap", unique, "-o", "json").stdout)
    assert obj["metadata"]["deletionTimestamp"]
    run(hub, "patch", "configmap", unique, "--type", "merge", "-p", '{"metadata":{"finalizers":null}}')
    assert run(hub, "get", "configmap", unique, check=False).returncode != 0


def test_watch(hub: HubProcess, unique: str) -> None:
    cmd = [kubectl_binary(), f"--kubeconfig={hub.kubeconfig}", "get", "configmaps", "-w", "-o", "name",
           "--request-timeout=20s"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"})
    try:
        time.sleep(1.0)
        run(hub, "create", "configmap", unique)
        assert proc.stdout is not None
        deadline = time.monotonic() + 15
        seen = ""
        while time.monotonic() < deadline and unique not in seen:
            seen += proc.stdout.readline()
        assert f"configmap/{unique}" in seen
    finally:
        proc.kill()
        proc.wait()


def test_auth_can_i(hub: HubProcess) -> None:
    assert run(hub, "auth", "can-i", "create", "managedclusters").stdout.strip() == "yes"
    bob = hub.identity("kubectl-bob")
    result = run(hub, "auth", "can-i", "create", "managedclusters", check=False, kubeconfig=bob.kubeconfig)
    assert result.stdout.strip() == "no" and result.returncode == 1


def test_auth_can_i_list(hub: HubProcess) -> None:
    rows = run(hub, "auth", "can-i", "--list").stdout.splitlines()
    assert rows[0].split()[:3] == ["Resources", "Non-Resource", "URLs"]
    assert any(row.split()[0] == "*.*" for row in rows[1:])
    carol = hub.identity("kubectl-carol")
    rows = run(hub, "auth", "can-i", "--list", kubeconfig=carol.kubeconfig).stdout.splitlines()
    assert any("selfsubjectaccessreviews.authorization.k8s.io" in row for row in rows)
    assert not any(row.split()[0] == "*.*" for row in rows[1:] if row.split())


def test_certificate_approve(hub: HubProcess, unique: str) -> None:
    pem = csr.build_csr(keys.generate_private_key(), common_name=f"user-{unique}")
    manifest = json.dumps({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                           "metadata": {"name": unique},
                           "spec": {"request": base64.b64encode(pem).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                                    "usages": ["client auth"]}})
    run(hub, "apply", "-f", "-", stdin=manifest)
    run(hub, "certificate", "approve", unique)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        obj = json.loads(run(hub, "get", "csr", unique, "-o", "json").stdout)
        if obj.get("status", {}).get("certificate"):
            break
        time.sleep(0.1)
    assert obj["status"]["conditions"][0]["reason"] == "KubectlApprove"
    assert obj["status"]["certificate"]


def test_create_token(hub: HubProcess, unique: str) -> None:
    run(hub, "create", "serviceaccount", unique)
    token = run(hub, "create", "token", unique).stdout.strip()
    assert token.count(".") == 2
    path = hub.token_kubeconfig(f"kubectl-{unique}", token)
    out = run(hub, "auth", "whoami", "-o", "json", kubeconfig=path).stdout
    assert json.loads(out)["status"]["userInfo"]["username"] == f"system:serviceaccount:default:{unique}"


def test_bad_manifest_is_a_clear_error(hub: HubProcess) -> None:
    result = run(hub, "apply", "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n", check=False)
    assert result.returncode != 0 and "Invalid value" in result.stderr


def test_get_prints_the_servers_columns(hub: HubProcess, unique: str) -> None:
    manifest = f"""
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: {unique}
spec:
  hubAcceptsClient: true
  managedClusterClientConfigs: [{{url: "https://{unique}.example.com"}}]
"""
    run(hub, "apply", "-f", "-", stdin=manifest)
    lines = run(hub, "get", "managedclusters", unique).stdout.splitlines()
    assert lines[0].split() == ["NAME", "HUB", "ACCEPTED", "MANAGED", "CLUSTER", "URLS", "JOINED", "AVAILABLE", "AGE"]
    assert lines[1].split()[:3] == [unique, "true", f"https://{unique}.example.com"]
    wide = run(hub, "get", "clusterrolebinding", "cluster-admin", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert "system:masters" in wide[1]
    namespaces = run(hub, "get", "namespace", "kube-system").stdout.splitlines()
    assert namespaces[0].split() == ["NAME", "STATUS", "AGE"] and "Active" in namespaces[1]


def test_get_follows_pages(hub: HubProcess, unique: str) -> None:
    run(hub, "create", "namespace", unique)
    for i in range(5):
        run(hub, "create", "configmap", f"cm-{i}", "-n", unique, "--from-literal=v=1")
    names = run(hub, "get", "configmaps", "-n", unique, "--chunk-size=2", "-o", "name").stdout.split()
    assert names == [f"configmap/cm-{i}" for i in range(5)]
    shown = run(hub, "get", "configmaps", "-n", unique, "--chunk-size=2").stdout.splitlines()
    assert len(shown) == 6 and shown[0].split() == ["NAME", "DATA", "AGE"]


def test_explain_and_server_side_field_validation(hub: HubProcess, unique: str) -> None:
    explained = run(hub, "explain", "managedcluster.spec").stdout
    assert "KIND:       ManagedCluster" in explained and "hubAcceptsClient" in explained
    assert "leaseDurationSeconds" in explained
    assert "selectorType" in run(hub, "explain", "managedclusterset.spec.clusterSelector").stdout
    assert "KIND:       Namespace" in run(hub, "explain", "namespace").stdout
    bogus = f"apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: {unique}\nspec:\n  bogus: 1\n"
    result = run(hub, "apply", "-f", "-", stdin=bogus, check=False)
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "spec.bogus"' in result.stderr


def test_apply_server_side(hub: HubProcess, unique: str) -> None:
    manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {unique}\ndata:\n  a: '1'\n"
    assert "serverside-applied" in run(hub, "apply", "--server-side", "-f", "-", stdin=manifest).stdout
    changed = manifest.replace("'1'", "'2'")
    refused = run(hub, "apply", "--server-side", "--field-manager", "other", "-f", "-", stdin=changed, check=False)
    assert refused.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.a' in refused.stderr
    run(hub, "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-", stdin=changed)
    obj = json.loads(run(hub, "get", "configmap", unique, "-o", "json", "--show-managed-fields").stdout)
    assert obj["data"] == {"a": "2"}
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["other"]
    cluster = f"apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: {unique}\nspec:\n  hubAcceptsClient: true\n"
    assert "serverside-applied" in run(hub, "apply", "--server-side", "-f", "-", stdin=cluster).stdout
