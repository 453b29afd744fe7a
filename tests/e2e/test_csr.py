"""CertificateSigningRequests: identity recorded, approval rules, signing, and the issued
certificate authenticating against the same hub."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from pyocm.pki import csr, keys, kubeconfig
from pyocm.testing import Client, HubProcess

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def request(name: str, *, cn: str, orgs: list[str], seconds: int | None = 3600) -> dict:
    key = keys.generate_private_key()
    pem = csr.build_csr(key, common_name=cn, organizations=orgs)
    spec: dict = {"request": base64.b64encode(pem).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                  "usages": ["digital signature", "key encipherment", "client auth"]}
    if seconds:
        spec["expirationSeconds"] = seconds
    return {"metadata": {"name": name}, "spec": spec, "_key": keys.private_key_to_pem(key)}


async def test_csr_approve_sign_and_use(hub: HubProcess, admin: Client, unique: str, tmp_path: Path) -> None:
    body = request(unique, cn=f"system:open-cluster-management:{unique}:agent", orgs=[f"system:open-cluster-management:{unique}"])
    key_pem = body.pop("_key")
    code, created = await admin.post(CSRS, body)
    assert code == 201, created
    assert created["spec"]["username"] == "pyocm-admin"
    assert "system:masters" in created["spec"]["groups"]
    created["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]}
    code, approved = await admin.put(f"{CSRS}/{unique}/approval", created)
    assert code == 200, approved
    for _ in range(100):
        _, current = await admin.get(f"{CSRS}/{unique}")
        if (current.get("status") or {}).get("certificate"):
            break
        await asyncio.sleep(0.05)
    cert = base64.b64decode(current["status"]["certificate"])
    path = tmp_path / "agent.kubeconfig"
    kubeconfig.write_kubeconfig(path, kubeconfig.build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, cert_pem=cert, key_pem=key_pem))
    async with Client(path) as agent:
        code, out = await agent.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                     {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        assert code == 201
        assert out["status"]["userInfo"]["username"] == f"system:open-cluster-management:{unique}:agent"
        assert f"system:open-cluster-management:{unique}" in out["status"]["userInfo"]["groups"]


async def test_csr_approval_needs_approve_permission(hub: HubProcess, admin: Client, unique: str) -> None:
    body = request(unique, cn="someone", orgs=[])
    body.pop("_key")
    await admin.post(CSRS, body)
    role = {"metadata": {"name": unique}, "rules": [{"apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"], "verbs": ["get", "update"]}]}
    await admin.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    binding = {"metadata": {"name": unique}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": unique},
               "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": f"approver-{unique}"}]}
    await admin.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    approver = hub.identity(f"approver-{unique}")
    async with Client(approver.kubeconfig) as client:
        _, current = await client.get(f"{CSRS}/{unique}")
        current["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]}
        code, status = await client.put(f"{CSRS}/{unique}/approval", current)
        assert code == 403
        assert 'user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"' in status["message"]


async def test_approved_and_denied_are_exclusive(admin: Client, unique: str) -> None:
    body = request(unique, cn="someone", orgs=[])
    body.pop("_key")
    _, created = await admin.post(CSRS, body)
    created["status"] = {"conditions": [
        {"type": "Approved", "status": "True", "reason": "A", "message": "a"},
        {"type": "Denied", "status": "True", "reason": "D", "message": "d"},
    ]}
    code, status = await admin.put(f"{CSRS}/{unique}/approval", created)
    assert code == 422, status


async def test_masters_subject_is_refused(admin: Client, unique: str) -> None:
    body = request(unique, cn="evil", orgs=["system:masters"])
    body.pop("_key")
    code, status = await admin.post(CSRS, body)
    assert code == 403 and "system:masters" in status["message"]


async def test_bad_usages_fail_the_csr(admin: Client, unique: str) -> None:
    body = request(unique, cn="someone", orgs=[])
    body.pop("_key")
    body["spec"]["usages"] = ["digital signature", "server auth"]
    _, created = await admin.post(CSRS, body)
    created["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "A", "message": "a"}]}
    await admin.put(f"{CSRS}/{unique}/approval", created)
    for _ in range(100):
        _, current = await admin.get(f"{CSRS}/{unique}")
        failed = [c for c in current.get("status", {}).get("conditions", []) if c["type"] == "Failed"]
        if failed:
            break
        await asyncio.sleep(0.05)
    assert failed[0]["reason"] == "SignerValidationFailure"
    assert "certificate" not in current["status"]
