"""``pyocm webhook`` as a process beside a hub that leaves OCM admission to it
(``pyocm hub --no-ocm-admission``): AdmissionReviews over TLS on upstream's paths, the
permission checks as SubjectAccessReviews of the hub, ConversionReviews on /convert, and
the serving certificate reloaded when its files change."""

from __future__ import annotations

import base64
import contextlib
import re
import ssl
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import orjson
import pytest
import pytest_asyncio

from pyocm.api import kinds as ocm
from pyocm.pki.ca import CertificateAuthority
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import Running
from tests.conftest import hub_process
from tests.support import grant, subject

Obj = dict[str, Any]
CLUSTER_GROUP = "cluster.open-cluster-management.io"
SET_LABEL = "cluster.open-cluster-management.io/clusterset"
MUTATE_CLUSTER = "/mutate-cluster-open-cluster-management-io-v1-managedcluster"
VALIDATE_CLUSTER = "/validate-cluster-open-cluster-management-io-v1-managedcluster"
VALIDATE_BINDING = "/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding"
VALIDATE_SET = "/validate-cluster-open-cluster-management-io-v1beta2-managedclusterset"
VALIDATE_WORK = "/validate-work-open-cluster-management-io-v1-manifestwork"
VALIDATE_REPLICA_SET = "/validate-work-open-cluster-management-io-v1alpha1-manifestworkreplicaset"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """This module's own hub, without OCM's rules in-process: the webhook has them."""
    yield from hub_process(
        tmp_path_factory, "webhook-hub", ["--no-controllers", "--no-ocm-admission"]
    )


@dataclass
class Webhook:
    url: str
    cert_dir: Path
    ca: CertificateAuthority
    metrics: str

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca.cert_pem.decode())


def write_pair(cert_dir: Path, ca: CertificateAuthority) -> bytes:
    cert, key = ca.issue_serving(hosts=["127.0.0.1", "localhost"], valid_for=timedelta(days=1))
    (cert_dir / "tls.key").write_bytes(key)
    (cert_dir / "tls.crt").write_bytes(cert)
    return cert


@pytest.fixture(scope="module")
def webhook(hub: HubProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhook]:
    cert_dir = tmp_path_factory.mktemp("serving-certs")
    ca = CertificateAuthority.create("webhook-ca", valid_for=timedelta(days=1))
    write_pair(cert_dir, ca)
    process = Running(
        "webhook", "--kubeconfig", str(hub.kubeconfig), "--host", "127.0.0.1", "--port", "0",
        "--cert-dir", str(cert_dir), "--feature-gates", "ManifestWorkReplicaSet=true",
        "--manifest-limit", "2000", "--metrics-bind-address", "127.0.0.1:0",
    )  # fmt: skip
    try:
        url = re.search(
            r"serving webhooks on (https://\S+)", process.wait_for("serving webhooks on")
        )
        metrics = re.search(
            r"serving metrics on (http://\S+)/metrics", process.wait_for("serving metrics")
        )
        assert url and metrics
        yield Webhook(url.group(1), cert_dir, ca, metrics.group(1))
    finally:
        assert process.stop() == 0, "\n".join(process.lines[-40:])


@pytest_asyncio.fixture
async def post(webhook: Webhook) -> AsyncIterator[Any]:
    async with aiohttp.ClientSession() as session:

        async def send(path: str, body: Any) -> tuple[int, Obj]:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
            async with session.post(
                webhook.url + path,
                data=data,
                headers={"Content-Type": "application/json"},
                ssl=webhook.client_context(),
            ) as answer:
                return answer.status, await answer.json(content_type=None)

        yield send


def review(request: Obj, version: str = "v1") -> Obj:
    return {
        "apiVersion": f"admission.k8s.io/{version}",
        "kind": "AdmissionReview",
        "request": request,
    }


def user_info(user: str) -> Obj:
    return {"username": user, "uid": f"uid-{user}", "groups": ["system:authenticated"]}


def cluster_review(
    obj: Obj, *, user: str = "admin", old: Obj | None = None, subresource: str = ""
) -> Obj:
    request: Obj = {
        "uid": "req-1",
        "operation": "UPDATE" if old is not None else "CREATE",
        "resource": {"group": CLUSTER_GROUP, "version": "v1", "resource": "managedclusters"},
        "name": obj["metadata"]["name"],
        "userInfo": user_info(user),
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    if subresource:
        request["subResource"] = subresource
    return review(request)


def denied(answer: Obj, code: int, message: str) -> None:
    response = answer["response"]
    assert response["uid"] == "req-1"
    assert response["allowed"] is False, response
    assert (response["status"]["code"], response["status"]["message"]) == (code, message)


def allowed(answer: Obj) -> None:
    assert answer["response"]["allowed"] is True, answer["response"]


async def test_the_hub_leaves_ocm_admission_to_the_webhook(api: Api, unique: str) -> None:
    spec = {"managedClusterClientConfigs": [{"url": "http://plain.example.com"}]}
    made = await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": unique}, "spec": spec})
    assert SET_LABEL not in (made["metadata"].get("labels") or {}), "no mutator in the hub"


async def test_the_mutator_answers_a_patch(post: Any) -> None:
    sent = {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "m1", "labels": {"a/b~c": "x"}},
        "spec": {"hubAcceptsClient": True, "taints": [{"key": "k", "effect": "NoSelect"}]},
    }
    code, answer = await post(MUTATE_CLUSTER, cluster_review(sent))
    assert code == 200
    response = answer["response"]
    assert (response["allowed"], response["patchType"]) == (True, "JSONPatch")
    ops = orjson.loads(base64.b64decode(response["patch"]))
    patched = jsonpatch.apply_patch(sent, ops)
    assert patched["metadata"]["labels"] == {"a/b~c": "x", SET_LABEL: "default"}
    assert patched["spec"]["taints"][0]["timeAdded"]
    assert {op["path"] for op in ops} == {
        "/metadata/labels/cluster.open-cluster-management.io~1clusterset",
        "/spec/taints/0/timeAdded",
    }
    old = {**sent, "spec": {"taints": []}}
    stamped = {
        **sent,
        "spec": {
            "taints": [{"key": "k", "effect": "NoSelect", "timeAdded": "2001-01-01T00:00:00Z"}]
        },
    }
    code, answer = await post(MUTATE_CLUSTER, cluster_review(stamped, old=old))
    denied(answer, 400, 'It is not allowed to set TimeAdded of Taint "k".')
    assert answer["response"]["status"]["reason"] == "BadRequest"


async def test_a_v1beta1_review_is_answered_in_v1beta1(post: Any) -> None:
    document = cluster_review({"metadata": {"name": "b1"}, "spec": {}})
    document["apiVersion"] = "admission.k8s.io/v1beta1"
    code, answer = await post(MUTATE_CLUSTER, document)
    assert code == 200 and answer["apiVersion"] == "admission.k8s.io/v1beta1"
    assert answer["kind"] == "AdmissionReview" and answer["response"]["uid"] == "req-1"
    assert answer["response"]["patchType"] == "JSONPatch"


async def test_names_and_urls_are_checked(post: Any) -> None:
    _, answer = await post(
        VALIDATE_CLUSTER, cluster_review({"metadata": {"name": "a.b"}, "spec": {}})
    )
    denied(answer, 400, "metadata.name format is not correct: must not contain dots")
    spec = {"managedClusterClientConfigs": [{"url": "http://x.example.com"}]}
    _, answer = await post(
        VALIDATE_CLUSTER, cluster_review({"metadata": {"name": "u1"}, "spec": spec})
    )
    denied(answer, 400, 'url "http://x.example.com" is invalid in client configs')


async def test_accept_and_join_follow_the_users_grants(api: Api, post: Any, unique: str) -> None:
    user = f"op-{unique}"
    name = f"c-{unique}"
    accepting = cluster_review(
        {
            "metadata": {"name": name, "labels": {SET_LABEL: "default"}},
            "spec": {"hubAcceptsClient": True},
        },
        user=user,
        old={"metadata": {"name": name, "labels": {SET_LABEL: "default"}}, "spec": {}},
    )
    _, answer = await post(VALIDATE_CLUSTER, accepting)
    denied(
        answer,
        403,
        f'managedclusters/accept.register.open-cluster-management.io "{name}" is forbidden: '
        f'user "{user}" cannot update the HubAcceptsClient field',
    )
    assert answer["response"]["status"]["details"] == {
        "name": name,
        "group": "register.open-cluster-management.io",
        "kind": "managedclusters/accept",
    }
    joining = cluster_review(
        {"metadata": {"name": name, "labels": {SET_LABEL: "dev"}}, "spec": {}}, user=user
    )
    _, answer = await post(VALIDATE_CLUSTER, joining)
    denied(
        answer,
        403,
        f'managedclustersets/join.{CLUSTER_GROUP} "dev" is forbidden: user "{user}" cannot add/remove '
        'a ManagedCluster to/from ManagedClusterSet "dev" (it needs create on managedclustersets/join '
        f'for "dev", or create on managedclusters/label with a resourceName of "{SET_LABEL}:dev", '
        f'"{SET_LABEL}:*" or "*")',
    )
    await grant(api, f"test:{user}", subject("User", user), [
        {"apiGroups": ["register.open-cluster-management.io"], "resources": ["managedclusters/accept"],
         "resourceNames": [name], "verbs": ["update"]},
        {"apiGroups": [CLUSTER_GROUP], "resources": ["managedclustersets/join"],
         "resourceNames": ["dev"], "verbs": ["create"]},
    ])  # fmt: skip
    _, answer = await post(VALIDATE_CLUSTER, accepting)
    allowed(answer)
    _, answer = await post(VALIDATE_CLUSTER, joining)
    allowed(answer)


async def test_a_registered_cluster_id_cannot_change(post: Any) -> None:
    def claimed(uid: str) -> Obj:
        return {
            "metadata": {"name": "s1"},
            "status": {"clusterClaims": [{"name": "id.k8s.io", "value": uid}]},
        }

    _, answer = await post(
        VALIDATE_CLUSTER, cluster_review(claimed("u2"), old=claimed("u1"), subresource="status")
    )
    denied(
        answer,
        403,
        f'managedclusters/status.{CLUSTER_GROUP} "s1" is forbidden: managed cluster "s1" is registered by '
        'the cluster with id.k8s.io "u1"; a different cluster (id.k8s.io "u2") cannot register under the same name',
    )


def binding_review(name: str, cluster_set: str, namespace: str, user: str) -> Obj:
    return review({
        "uid": "req-1", "operation": "CREATE", "name": name, "namespace": namespace,
        "resource": {"group": CLUSTER_GROUP, "version": "v1beta2", "resource": "managedclustersetbindings"},
        "userInfo": user_info(user),
        "object": {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterSet": cluster_set}},
    })  # fmt: skip


async def test_bindings_need_the_same_name_and_bind_permission(
    api: Api, post: Any, unique: str
) -> None:
    user = f"binder-{unique}"
    _, answer = await post(VALIDATE_BINDING, binding_review("a", "b", "ws", user))
    denied(
        answer,
        400,
        "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet",
    )
    _, answer = await post(VALIDATE_BINDING, binding_review("team", "team", f"ws-{unique}", user))
    denied(
        answer,
        403,
        f'managedclustersets/bind.{CLUSTER_GROUP} "team" is forbidden: user "{user}" is not allowed to bind cluster set "team"',
    )
    await grant(api, f"test:{user}", subject("User", user), [
        {"apiGroups": [CLUSTER_GROUP], "resources": ["managedclustersets/bind"],
         "resourceNames": ["team"], "verbs": ["create"]},
    ])  # fmt: skip
    _, answer = await post(VALIDATE_BINDING, binding_review("team", "team", f"ws-{unique}", user))
    allowed(answer)
    cluster = f"bc-{unique}"
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": cluster}})
    _, answer = await post(VALIDATE_BINDING, binding_review("team", "team", cluster, user))
    denied(
        answer,
        403,
        f'managedclustersetbindings.{CLUSTER_GROUP} "team" is forbidden: namespace "{cluster}" is the cluster '
        f'namespace of managed cluster "{cluster}"; bind cluster sets to a workspace namespace instead',
    )


async def test_exclusive_label_sets_need_a_reserved_label(post: Any) -> None:
    obj = {"metadata": {"name": "x"}, "spec": {"clusterSelector": {
        "selectorType": "ExclusiveLabel", "exclusiveLabel": {"key": "region", "value": "apac"}}}}  # fmt: skip
    _, answer = await post(VALIDATE_SET, review({
        "uid": "req-1", "operation": "CREATE", "name": "x", "userInfo": user_info("admin"), "object": obj,
        "resource": {"group": CLUSTER_GROUP, "version": "v1beta2", "resource": "managedclustersets"},
    }))  # fmt: skip
    denied(
        answer,
        422,
        f'ManagedClusterSet.{CLUSTER_GROUP} "x" is invalid: spec.clusterSelector.exclusiveLabel.key: '
        'Invalid value: "region": must start with cluster.open-cluster-management.io/ or '
        "info.open-cluster-management.io/",
    )


def work_review(obj: Obj, user: str, resource: str = "manifestworks") -> Obj:
    return review({
        "uid": "req-1", "operation": "CREATE", "name": "w", "namespace": "cluster1",
        "resource": {"group": "work.open-cluster-management.io", "version": "v1", "resource": resource},
        "userInfo": user_info(user), "object": obj,
    })  # fmt: skip


CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "namespace": "default"},
}


async def test_works_get_the_manifest_and_executor_rules(api: Api, post: Any, unique: str) -> None:
    user = f"worker-{unique}"
    _, answer = await post(
        VALIDATE_WORK, work_review({"metadata": {"name": "w"}, "spec": {}}, user)
    )
    denied(answer, 400, "manifests should not be empty")
    big = {**CONFIGMAP, "data": {"k": "v" * 2000}}
    work = {"metadata": {"name": "w"}, "spec": {"workload": {"manifests": [big]}}}
    _, answer = await post(VALIDATE_WORK, work_review(work, user))
    denied(answer, 400, "the size of manifests is 2103 bytes which exceeds the 2000 limit")
    executor = {
        "subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "ns1", "name": "sa1"}}
    }
    work = {
        "metadata": {"name": "w"},
        "spec": {"workload": {"manifests": [CONFIGMAP]}, "executor": executor},
    }
    _, answer = await post(VALIDATE_WORK, work_review(work, user))
    denied(
        answer,
        400,
        f"user {user} cannot manipulate the Manifestwork with executor ns1/sa1 in namespace cluster1",
    )
    await grant(api, f"test:{user}", subject("User", user), [
        {"apiGroups": ["work.open-cluster-management.io"], "resources": ["manifestworks"],
         "resourceNames": ["system:serviceaccount:ns1:sa1"], "verbs": ["execute-as"]},
    ])  # fmt: skip
    _, answer = await post(VALIDATE_WORK, work_review(work, user))
    allowed(answer)
    template = {
        "metadata": {"name": "w"},
        "spec": {
            "manifestWorkTemplate": {"workload": {"manifests": [{**CONFIGMAP, "metadata": {}}]}}
        },
    }
    _, answer = await post(
        VALIDATE_REPLICA_SET, work_review(template, user, "manifestworkreplicasets")
    )
    denied(answer, 400, "name must be set in manifest")


async def test_conversion_reviews_convert_the_addon_kinds(post: Any) -> None:
    addon = {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": "helloworld", "namespace": "cluster1"},
        "spec": {"installNamespace": "hello"},
    }
    document = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "conv-1",
            "desiredAPIVersion": "addon.open-cluster-management.io/v1beta1",
            "objects": [addon],
        },
    }
    code, answer = await post("/convert", document)
    assert code == 200
    response = answer["response"]
    assert (response["uid"], response["result"]) == ("conv-1", {"status": "Success"})
    (converted,) = response["convertedObjects"]
    assert converted["apiVersion"] == "addon.open-cluster-management.io/v1beta1"
    assert converted["metadata"]["annotations"] == {
        "addon.open-cluster-management.io/v1alpha1-install-namespace": "hello"
    }
    assert "installNamespace" not in converted["spec"]


async def test_a_body_that_is_no_review_is_refused(post: Any) -> None:
    code, answer = await post(VALIDATE_CLUSTER, {"kind": "Pod", "apiVersion": "v1"})
    assert code == 400 and answer["response"]["allowed"] is False
    code, _ = await post(MUTATE_CLUSTER, b"not json")
    assert code == 400
    code, _ = await post("/convert", {"kind": "AdmissionReview"})
    assert code == 400


def served_certificate(url: str) -> str:
    host, port = url.removeprefix("https://").rsplit(":", 1)
    return ssl.get_server_certificate((host, int(port)))


def test_a_replaced_certificate_is_served_from_the_next_handshake(webhook: Webhook) -> None:
    before = served_certificate(webhook.url)
    assert before.strip() == (webhook.cert_dir / "tls.crt").read_text().strip()
    other_ca = CertificateAuthority.create("rotated-ca", valid_for=timedelta(days=1))
    rotated = write_pair(webhook.cert_dir, other_ca)
    assert served_certificate(webhook.url).strip() == rotated.decode().strip()
    # Put the first CA's pair back for the other tests; the listener never went away.
    restored = write_pair(webhook.cert_dir, webhook.ca)
    assert served_certificate(webhook.url).strip() == restored.decode().strip()


def test_ready_once_serving(webhook: Webhook) -> None:
    with urllib.request.urlopen(webhook.metrics + "/readyz?verbose", timeout=10) as answer:
        assert answer.status == 200
        assert "[+]webhook-server ok" in answer.read().decode()


async def test_requests_are_counted_as_controller_runtime_counts_them(
    webhook: Webhook, post: Any
) -> None:
    await post(VALIDATE_CLUSTER, {"kind": "Pod", "apiVersion": "v1"})
    with contextlib.suppress(ValueError):  # a 404 in plain text
        await post("/no-such-webhook", {"kind": "Pod", "apiVersion": "v1"})
    with urllib.request.urlopen(webhook.metrics + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    assert re.search(
        rf'controller_runtime_webhook_requests_total\{{code="400",webhook="{VALIDATE_CLUSTER}"\}} [1-9]',
        text,
    ), text
    assert (
        f'controller_runtime_webhook_latency_seconds_count{{webhook="{VALIDATE_CLUSTER}"}}' in text
    )
    assert (
        f'controller_runtime_webhook_requests_in_flight{{webhook="{VALIDATE_CLUSTER}"}} 0.0' in text
    )
    assert "/no-such-webhook" not in text  # paths nobody serves get no label


async def test_a_review_over_a_mebibyte_is_read(post: Any) -> None:
    """An UPDATE review carries the work twice: a work near upstream's 500 KiB limit makes
    a body over aiohttp's default 1 MiB, which controller-runtime's server takes (7 MiB)."""
    big = {**CONFIGMAP, "data": {"k": "v" * 600_000}}
    work = {"metadata": {"name": "w"}, "spec": {"workload": {"manifests": [big]}}}
    body = work_review(work, "someone")
    body["request"]["operation"] = "UPDATE"
    body["request"]["oldObject"] = work
    code, answer = await post(VALIDATE_WORK, body)
    assert code == 200
    denied(answer, 400, "the size of manifests is 600104 bytes which exceeds the 2000 limit")
