"""The runtime client against a real hub process: paths, subresources, patches, errors
as ApiError, watches, and clear messages when the server cannot be trusted or reached."""

from __future__ import annotations

import asyncio
import base64
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.csr import build_csr
from pyocm.pki.keys import generate_private_key
from pyocm.pki.kubeconfig import build_kubeconfig, load_kubeconfig
from pyocm.registration import bootstraptoken
from pyocm.runtime.client import Api, path
from pyocm.runtime.errors import ApiConnectionError
from pyocm.testing import HubProcess


def test_paths() -> None:
    assert path(kinds.NAMESPACE, name="a") == "/api/v1/namespaces/a"
    assert path(kinds.CONFIGMAP, namespace="ns") == "/api/v1/namespaces/ns/configmaps"
    assert path(kinds.CONFIGMAP) == "/api/v1/configmaps"
    assert (
        path(kinds.CSR, name="c", subresource="approval")
        == "/apis/certificates.k8s.io/v1/certificatesigningrequests/c/approval"
    )
    assert (
        path(kinds.LEASE, namespace="n", name="l")
        == "/apis/coordination.k8s.io/v1/namespaces/n/leases/l"
    )
    with pytest.raises(ValueError, match="empty name"):
        path(kinds.NAMESPACE, name="")


async def test_crud_and_patches(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    made = await api.create(
        kinds.CONFIGMAP, {"metadata": {"name": "cm", "namespace": unique}, "data": {"a": "1"}}
    )
    assert made["metadata"]["uid"]
    made["data"]["b"] = "2"
    updated = await api.update(kinds.CONFIGMAP, made)
    assert updated["data"] == {"a": "1", "b": "2"}
    merged = await api.patch(kinds.CONFIGMAP, "cm", {"data": {"a": None}}, namespace=unique)
    assert merged["data"] == {"b": "2"}
    jsoned = await api.patch(
        kinds.CONFIGMAP,
        "cm",
        [{"op": "add", "path": "/data/c", "value": "3"}],
        namespace=unique,
        type="json",
    )
    assert jsoned["data"] == {"b": "2", "c": "3"}
    listed = await api.list(kinds.CONFIGMAP, namespace=unique)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["cm"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(jsoned["metadata"]["resourceVersion"])

    with pytest.raises(ApiError) as stale:
        await api.update(kinds.CONFIGMAP, made)
    assert stale.value.code == 409 and stale.value.reason == "Conflict"

    with pytest.raises(ApiError) as precondition:
        await api.delete(kinds.CONFIGMAP, "cm", namespace=unique, uid="not-the-uid")
    assert precondition.value.code == 409
    await api.delete(kinds.CONFIGMAP, "cm", namespace=unique, uid=made["metadata"]["uid"])
    with pytest.raises(ApiError) as missing:
        await api.get(kinds.CONFIGMAP, "cm", namespace=unique)
    assert missing.value.code == 404 and missing.value.reason == "NotFound"
    assert missing.value.details and missing.value.details["name"] == "cm"


async def test_list_all_answers_every_item(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    for index in range(7):
        await api.create(
            kinds.CONFIGMAP, {"metadata": {"name": f"cm-{index}", "namespace": unique}}
        )
    # Whether or not the server pages (Kubernetes lets it ignore ``limit``), list_all
    # answers every item once.
    everything = await api.list_all(kinds.CONFIGMAP, namespace=unique)
    assert sorted(item["metadata"]["name"] for item in everything["items"]) == [
        f"cm-{i}" for i in range(7)
    ]


async def test_status_subresource_and_csr_approval(api: Api, unique: str) -> None:
    csr_pem = build_csr(generate_private_key(), common_name=f"user-{unique}", organizations=["x"])
    csr = await api.create(
        kinds.CSR,
        {
            "metadata": {"name": unique},
            "spec": {
                "request": base64.b64encode(csr_pem).decode(),
                "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["digital signature", "client auth"],
            },
        },
    )
    csr.setdefault("status", {})["conditions"] = [
        {"type": "Approved", "status": "True", "reason": "Test", "message": "approved by a test"}
    ]
    approved = await api.update(kinds.CSR, csr, subresource="approval")
    assert approved["status"]["conditions"][0]["type"] == "Approved"


async def test_watch_yields_events_and_raises_gone(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    start = (await api.list(kinds.CONFIGMAP, namespace=unique))["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []

    async def collect() -> None:
        async for event_type, obj in api.watch(
            kinds.CONFIGMAP, namespace=unique, resource_version=start
        ):
            if event_type != "BOOKMARK":
                seen.append((event_type, obj["metadata"]["name"]))
            if len(seen) == 2:
                return

    task = asyncio.create_task(collect())
    await api.create(kinds.CONFIGMAP, {"metadata": {"name": "w", "namespace": unique}})
    await api.delete(kinds.CONFIGMAP, "w", namespace=unique)
    await asyncio.wait_for(task, 10)
    assert seen == [("ADDED", "w"), ("DELETED", "w")]


async def test_watch_from_before_the_window_raises_gone(tmp_path: Path) -> None:
    # A restarted hub keeps no history from before it started: the first hub's
    # revisions are gone for watchers of the second.
    first = HubProcess(tmp_path / "hub").start()
    try:
        async with Api.from_kubeconfig(first.kubeconfig) as client:
            made = await client.create(kinds.NAMESPACE, {"metadata": {"name": "old"}})
            await client.create(kinds.NAMESPACE, {"metadata": {"name": "newer"}})
    finally:
        first.stop()
    second = HubProcess(tmp_path / "hub", port=first.port).start()
    try:
        async with Api.from_kubeconfig(second.kubeconfig) as client:
            with pytest.raises(ApiError) as gone:
                async for _ in client.watch(
                    kinds.NAMESPACE, resource_version=made["metadata"]["resourceVersion"]
                ):
                    pass
    finally:
        second.stop()
    assert gone.value.code == 410 and gone.value.reason == "Expired"


async def test_forbidden_is_an_api_error(hub: HubProcess, unique: str) -> None:
    async with Api.from_kubeconfig(hub.identity(f"user-{unique}").kubeconfig) as client:
        with pytest.raises(ApiError) as denied:
            await client.list(kinds.SECRET, namespace="kube-system")
    assert denied.value.code == 403 and denied.value.reason == "Forbidden"
    assert f"user-{unique}" in denied.value.message


async def test_wrong_ca_is_named_clearly(hub: HubProcess) -> None:
    info = load_kubeconfig(hub.kubeconfig)
    stranger = CertificateAuthority.create("stranger", valid_for=timedelta(hours=1))
    config = build_kubeconfig(
        server=info.server, ca_pem=stranger.cert_pem, cert_pem=info.cert_pem, key_pem=info.key_pem
    )
    async with Api.from_config(config) as client:
        with pytest.raises(ApiConnectionError, match="not signed by the CA"):
            await client.server_version()


async def test_unreachable_server_is_named(hub: HubProcess) -> None:
    info = load_kubeconfig(hub.kubeconfig)
    config = build_kubeconfig(
        server="https://127.0.0.1:9",
        ca_pem=info.ca_pem,
        cert_pem=info.cert_pem,
        key_pem=info.key_pem,
    )
    async with Api.from_config(config) as client:
        with pytest.raises(ApiConnectionError, match=r"cannot connect to https://127\.0\.0\.1:9"):
            await client.server_version()


def test_missing_kubeconfig_is_named() -> None:
    with pytest.raises(ApiConnectionError, match="does not exist"):
        Api.from_kubeconfig("/nonexistent/kubeconfig")


PLUGIN = """
import json, pathlib, sys
runs = pathlib.Path(sys.argv[1])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
token = "abcdef.0123456789abcdef" if len(runs.read_text()) == 1 else sys.argv[2]
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1",
                  "kind": "ExecCredential", "status": {"token": token}}))
"""


async def _bootstrap_token(api: Api) -> str:
    token = bootstraptoken.generate()
    await api.create(kinds.SECRET, bootstraptoken.token_secret(token, now=datetime.now(UTC)))
    return str(token)


async def _authenticated(client: Api) -> bool:
    """True when the hub knows who this is: 403 for a user without bindings, not 401."""
    try:
        await client.list(kinds.SECRET, namespace="kube-system")
    except ApiError as err:
        assert err.code in (401, 403), err
        return err.code == 403
    return True


async def test_an_exec_plugin_runs_again_after_a_401(
    hub: HubProcess, api: Api, tmp_path: Path
) -> None:
    token = await _bootstrap_token(api)
    (tmp_path / "plugin.py").write_text(PLUGIN)
    config = build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, token="unused")
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [str(tmp_path / "plugin.py"), str(tmp_path / "runs"), token],
        }
    }
    async with Api.from_config(config) as client:
        # Its first credential is refused; the next request runs the plugin again and is
        # sent once more with the fresh token, as client-go's exec authenticator does.
        assert not await _authenticated(client)
        assert await _authenticated(client)
        assert await _authenticated(client)
    assert (tmp_path / "runs").read_text() == "xx", "a good token is kept, not fetched again"


async def test_a_token_file_is_read_again_after_a_401(
    hub: HubProcess, api: Api, tmp_path: Path
) -> None:
    token = await _bootstrap_token(api)
    (tmp_path / "token").write_text("abcdef.0123456789abcdef")
    config = build_kubeconfig(server=hub.url, ca_pem=hub.ca_pem, token="unused")
    config["users"][0]["user"] = {"tokenFile": str(tmp_path / "token")}
    async with Api.from_config(config) as client:
        assert not await _authenticated(client)
        (tmp_path / "token").write_text(token)  # rotated, as a kubelet rotates a projected token
        assert await _authenticated(client)


async def test_a_closed_client_says_so(hub: HubProcess) -> None:
    client = Api.from_kubeconfig(hub.kubeconfig)
    await client.server_version()
    await client.close()
    with pytest.raises(ApiConnectionError, match="is closed"):
        await client.server_version()
