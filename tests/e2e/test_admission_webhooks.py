"""Admission webhooks registered on a real hub process, called over TLS as
kube-apiserver calls them: denial texts and codes, JSONPatch mutation, reinvocation,
failure policies, timeouts, selectors, subresource rules, equivalent versions, dry run,
service references through Endpoints, validation of configurations, and kubectl.

The module has its own hub: a webhook that fails closed must not reach other tests.
Every webhook here selects only objects (or namespaces) labelled for its own test."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from pyocm.testing import Client, HubProcess
from tests.conftest import hub_process
from tests.webhookserver import WebhookServer, allow, deny, patch

Obj = dict[str, Any]
AR = "/apis/admissionregistration.k8s.io/v1"
VALIDATING = f"{AR}/validatingwebhookconfigurations"
MUTATING = f"{AR}/mutatingwebhookconfigurations"
LABEL = "webhook-test"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "webhook-hub", ["--no-controllers"])


@pytest_asyncio.fixture
async def admin(hub: HubProcess) -> AsyncIterator[Client]:
    async with Client(hub.kubeconfig) as client:
        yield client


@pytest_asyncio.fixture
async def server() -> AsyncIterator[WebhookServer]:
    hooks = await WebhookServer(hosts=("127.0.0.1", "hooks.webhook-system.svc")).start()
    yield hooks
    await hooks.stop()


def rule(resources: list[str], *, operations: list[str] | None = None, **extra: Any) -> Obj:
    return {
        "operations": operations or ["CREATE"],
        "apiGroups": extra.pop("groups", [""]),
        "apiVersions": extra.pop("versions", ["v1"]),
        "resources": resources,
        **extra,
    }


def webhook(name: str, client: Obj, rules: list[Obj], unique: str, **extra: Any) -> Obj:
    """One webhook, selecting only objects labelled for this test unless told otherwise."""
    return {
        "name": name,
        "clientConfig": client,
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "objectSelector": {"matchLabels": {LABEL: unique}},
        **extra,
    }


def by_url(server: WebhookServer, path: str) -> Obj:
    return {"url": server.url(path), "caBundle": server.ca_bundle}


def config(kind: str, name: str, *hooks: Obj) -> Obj:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(hooks),
    }


@contextlib.asynccontextmanager
async def registered(admin: Client, path: str, body: Obj) -> AsyncIterator[Obj]:
    code, created = await admin.post(path, body)
    assert code == 201, created
    try:
        yield created
    finally:
        code, _ = await admin.delete(f"{path}/{body['metadata']['name']}")
        assert code == 200


def configmap(name: str, unique: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {LABEL: unique, **labels}},
        "data": {"k": "v"},
    }


async def test_denial_reads_as_kube_with_the_review_kube_sends(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on(
        "/deny",
        lambda r: {**deny("no thanks", code=403, reason="Forbidden"), "warnings": ["careful"]},
    )
    server.on("/low", lambda r: deny("", code=200, reason="Odd"))
    name = f"deny.{unique}.example.com"
    hooks = [
        webhook(name, by_url(server, "/deny"), [rule(["configmaps"])], unique),
        webhook(
            f"low.{unique}.example.com",
            by_url(server, "/low"),
            [rule(["configmaps"])],
            f"{unique}-low",
        ),
    ]
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, *hooks)
    ):
        code, warnings, body = await admin.exchange(
            "POST", "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
        assert code == 403, body
        assert body["message"] == f'admission webhook "{name}" denied the request: no thanks'
        assert body["reason"] == "Forbidden"
        assert warnings == ['299 - "careful"']
        request = server.reviews["/deny"][-1]["request"]
        assert server.reviews["/deny"][-1]["apiVersion"] == "admission.k8s.io/v1"
        assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
        assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
        assert request["requestKind"] == request["kind"]
        assert (request["operation"], request["namespace"], request["name"]) == (
            "CREATE",
            "default",
            unique,
        )
        assert (
            request["userInfo"]["username"] == "kubernetes-admin" or request["userInfo"]["username"]
        )
        assert "system:masters" in request["userInfo"]["groups"]
        assert request["object"]["data"] == {"k": "v"}
        assert request["oldObject"] is None
        assert request["dryRun"] is False
        assert request["options"]["kind"] == "CreateOptions"
        # A code under 400 is raised to 400; without a message the reason is shown.
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(f"{unique}-2", f"{unique}-low")
        )
        assert code == 400, body
        assert body["message"] == (
            f'admission webhook "low.{unique}.example.com" denied the request: Odd'
        )
    # Gone with its configuration: the next write is not sent anywhere.
    code, _ = await admin.post("/api/v1/namespaces/default/configmaps", configmap(unique, unique))
    assert code == 201


async def test_mutating_webhook_patches_and_is_reinvoked_when_a_later_one_changes_the_object(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    def first(request: Obj) -> Obj:
        labels = request["object"]["metadata"].get("labels") or {}
        seen = "yes" if "second" in labels else "no"
        return patch(
            {"op": "add", "path": "/metadata/annotations", "value": {"first-saw-second": seen}}
        )

    server.on("/first", first)
    server.on(
        "/second", lambda r: patch({"op": "add", "path": "/metadata/labels/second", "value": "x"})
    )
    first_hook = webhook(
        f"first.{unique}.example.com",
        by_url(server, "/first"),
        [rule(["configmaps"])],
        unique,
        reinvocationPolicy="IfNeeded",
    )
    second_hook = webhook(
        f"second.{unique}.example.com", by_url(server, "/second"), [rule(["configmaps"])], unique
    )
    async with (
        registered(
            admin, MUTATING, config("MutatingWebhookConfiguration", f"a-{unique}", first_hook)
        ),
        registered(
            admin, MUTATING, config("MutatingWebhookConfiguration", f"b-{unique}", second_hook)
        ),
    ):
        code, created = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 201, created
    assert created["metadata"]["labels"]["second"] == "x"
    assert created["metadata"]["annotations"] == {"first-saw-second": "yes"}
    assert len(server.reviews["/first"]) == 2
    assert len(server.reviews["/second"]) == 1


async def test_a_patch_that_breaks_the_object_is_an_internal_error(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/break", lambda r: patch({"op": "add", "path": "/data", "value": 5}))
    hook = webhook(
        f"break.{unique}.example.com", by_url(server, "/break"), [rule(["configmaps"])], unique
    )
    async with registered(admin, MUTATING, config("MutatingWebhookConfiguration", unique, hook)):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 500, body
    assert body["reason"] == "InternalError"
    assert "cannot unmarshal number into Go struct field ConfigMap.data" in body["message"]


@pytest.mark.parametrize(
    ("encoded", "reason"),
    [
        ("not*base64", "failed to call webhook: illegal base64 data at input byte 3"),
        (
            base64.b64encode(b'{"op": "add"}').decode(),
            "received undecodable patch in webhook response: json: cannot unmarshal object "
            "into Go value of type jsonpatch.Patch",
        ),
    ],
)
async def test_an_undecodable_patch_is_a_call_failure_the_failure_policy_decides(
    admin: Client, server: WebhookServer, unique: str, encoded: str, reason: str
) -> None:
    server.on(
        "/undecodable", lambda r: {"allowed": True, "patchType": "JSONPatch", "patch": encoded}
    )
    name = f"undecodable.{unique}.example.com"
    fail = webhook(name, by_url(server, "/undecodable"), [rule(["configmaps"])], unique)
    async with registered(admin, MUTATING, config("MutatingWebhookConfiguration", unique, fail)):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 500, body
    assert body["message"] == f'Internal error occurred: failed calling webhook "{name}": {reason}'
    ignore = {**fail, "failurePolicy": "Ignore"}
    async with registered(admin, MUTATING, config("MutatingWebhookConfiguration", unique, ignore)):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 201, body
    assert body["data"] == {"k": "v"}


CREATE_REWRITES: dict[str, list[Obj]] = {
    # What kube sets after mutating admission (FillObjectMetaSystemFields, BeforeCreate,
    # PrepareForCreate) wins over the webhook; the name it gives is the object's.
    "identity": [
        {"op": "replace", "path": "/metadata/name", "value": "{unique}-renamed"},
        {"op": "add", "path": "/metadata/uid", "value": "forged"},
        {"op": "add", "path": "/metadata/creationTimestamp", "value": "2001-01-01T00:00:00Z"},
        {"op": "add", "path": "/status", "value": {"replicas": 5, "readyReplicas": 5}},
    ],
    "namespace": [{"op": "add", "path": "/metadata/namespace", "value": "kube-system"}],
    "resourceVersion": [{"op": "add", "path": "/metadata/resourceVersion", "value": "7"}],
    # kube wipes the deletion fields only before admission: a webhook's are stored.
    "deletion": [
        {"op": "add", "path": "/metadata/deletionTimestamp", "value": "2001-01-01T00:00:00Z"},
        {"op": "add", "path": "/metadata/deletionGracePeriodSeconds", "value": 0},
    ],
}


def rewrite(request: Obj) -> Obj:
    """Deployments: on create, the rewrite named by the ``case`` annotation; on an
    update of the main resource a new status and spec, on /status a new spec."""
    obj = request["object"]
    unique = obj["metadata"]["labels"][LABEL]
    if request["operation"] == "CREATE":
        case = obj["metadata"]["annotations"]["case"]
        text = json.dumps(CREATE_REWRITES[case]).replace("{unique}", unique)
        return patch(*json.loads(text))
    if request.get("subResource") == "status":
        return patch({"op": "replace", "path": "/spec/replicas", "value": 9})
    return patch(
        {"op": "add", "path": "/status", "value": {"replicas": 7}},
        {"op": "replace", "path": "/spec/replicas", "value": 3},
    )


async def test_a_mutating_webhook_cannot_rewrite_what_the_server_sets_after_admission(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/rewrite", rewrite)
    resources = ["deployments", "deployments/status"]
    rules = [rule(resources, operations=["CREATE", "UPDATE"], groups=["apps"])]
    hook = webhook(f"rewrite.{unique}.example.com", by_url(server, "/rewrite"), rules, unique)
    path = "/apis/apps/v1/namespaces/default/deployments"

    def case(name: str) -> Obj:
        body = deployment(f"{unique}-{name.lower()}", unique)
        body["metadata"]["annotations"] = {"case": name}
        return body

    async with registered(admin, MUTATING, config("MutatingWebhookConfiguration", unique, hook)):
        code, created = await admin.post(path, case("identity"))
        assert code == 201, created
        m = created["metadata"]
        assert m["name"] == f"{unique}-renamed"
        assert m["uid"] != "forged"
        assert m["creationTimestamp"] != "2001-01-01T00:00:00Z"
        assert created.get("status", {}).get("replicas") != 5
        code, stored = await admin.get(f"{path}/{unique}-renamed")
        assert code == 200 and stored["metadata"]["uid"] == m["uid"], stored
        code, _ = await admin.get(f"{path}/{unique}-identity")
        assert code == 404

        code, body = await admin.post(path, case("namespace"))
        assert code == 400, body
        assert body["message"] == (
            "the namespace of the provided object does not match the namespace sent on the request"
        )
        code, body = await admin.post(path, case("resourceVersion"))
        assert (code, body["message"]) == (
            500,
            "resourceVersion should not be set on objects to be created",
        ), body
        code, created = await admin.post(path, case("deletion"))
        assert code == 201, created
        assert created["metadata"]["deletionTimestamp"] == "2001-01-01T00:00:00Z"

        # Updates: the main resource keeps the stored status (the webhook's spec change
        # counts as one: a new generation); /status keeps the stored spec.
        name = f"{path}/{unique}-renamed"
        code, updated = await admin.patch(name, {"metadata": {"annotations": {"u": "1"}}})
        assert code == 200, updated
        assert updated["spec"]["replicas"] == 3
        assert updated["metadata"]["generation"] == 2
        assert updated.get("status", {}).get("replicas") != 7
        code, updated = await admin.patch(f"{name}/status", {"status": {"replicas": 2}})
        assert code == 200, updated
        assert (updated["spec"]["replicas"], updated["status"]["replicas"]) == (3, 2)
        assert updated["metadata"]["generation"] == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_failure_policy_fail_refuses_and_ignore_skips_a_webhook_that_is_down(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    port = free_port()
    down = {"url": f"https://127.0.0.1:{port}/hook", "caBundle": server.ca_bundle}
    name = f"down.{unique}.example.com"
    fail = webhook(name, down, [rule(["configmaps"])], unique)
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, fail)
    ):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 500, body
    assert body["reason"] == "InternalError"
    assert body["message"] == (
        f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: '
        f'Post "https://127.0.0.1:{port}/hook?timeout=10s": dial tcp 127.0.0.1:{port}: '
        "connect: connection refused"
    )
    ignore = webhook(name, down, [rule(["configmaps"])], unique, failurePolicy="Ignore")
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, ignore)
    ):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 201, body


async def test_a_slow_webhook_times_out_after_its_timeout_seconds(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    async def slow(request: Obj) -> Obj:
        await asyncio.sleep(4)
        return allow()

    server.on("/slow", slow)
    name = f"slow.{unique}.example.com"
    hook = webhook(name, by_url(server, "/slow"), [rule(["configmaps"])], unique, timeoutSeconds=1)
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        started = time.monotonic()
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
        elapsed = time.monotonic() - started
    assert code == 500, body
    assert body["message"].endswith(
        f'failed to call webhook: Post "{server.url("/slow")}?timeout=1s": context deadline exceeded'
    )
    assert elapsed < 3


async def test_uid_mismatch_is_a_call_failure(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/uid", lambda r: {"uid": "not-it", "allowed": True})
    name = f"uid.{unique}.example.com"
    hook = webhook(name, by_url(server, "/uid"), [rule(["configmaps"])], unique)
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
        )
    assert code == 500, body
    assert body["message"].startswith(
        f'Internal error occurred: failed calling webhook "{name}": received invalid webhook '
        'response: expected response.uid="'
    )
    assert body["message"].endswith('got "not-it"')


async def test_namespace_selector_reads_the_namespace_labels(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/ns", lambda r: deny("namespace says no"))
    for name, labels in ((f"{unique}-in", {LABEL: unique}), (f"{unique}-out", {})):
        code, _ = await admin.post(
            "/api/v1/namespaces", {"metadata": {"name": name, "labels": labels}}
        )
        assert code == 201
    hook = webhook(
        f"ns.{unique}.example.com",
        by_url(server, "/ns"),
        [rule(["configmaps", "namespaces"])],
        unique,
        objectSelector={},
        namespaceSelector={"matchLabels": {LABEL: unique}},
    )
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        plain = {"metadata": {"name": "cm"}, "data": {}}
        code, body = await admin.post(f"/api/v1/namespaces/{unique}-in/configmaps", plain)
        assert code == 400 and "namespace says no" in body["message"], body
        code, body = await admin.post(f"/api/v1/namespaces/{unique}-out/configmaps", plain)
        assert code == 201, body
        # A Namespace is matched by its own (new) labels.
        code, body = await admin.post(
            "/api/v1/namespaces", {"metadata": {"name": f"{unique}-new", "labels": {LABEL: unique}}}
        )
        assert code == 400, body
        code, body = await admin.post("/api/v1/namespaces", {"metadata": {"name": f"{unique}-new"}})
        assert code == 201, body


async def test_object_selector_matches_new_or_old_labels(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/obj", lambda r: deny("labelled"))
    hook = webhook(
        f"obj.{unique}.example.com",
        by_url(server, "/obj"),
        [rule(["configmaps"], operations=["CREATE", "UPDATE"])],
        unique,
    )
    code, _ = await admin.post("/api/v1/namespaces/default/configmaps", configmap(unique, unique))
    assert code == 201
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"{unique}-x"}}
        )
        assert code == 201, body
        # Removing the label: the old object still matches.
        code, body = await admin.patch(
            f"/api/v1/namespaces/default/configmaps/{unique}",
            {"metadata": {"labels": {LABEL: None}}},
        )
        assert code == 400 and "labelled" in body["message"], body


def deployment(name: str, unique: str) -> Obj:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {LABEL: unique}},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


async def test_subresource_rules_match_only_their_subresource(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/status", lambda r: deny(f"{r['resource']['resource']}/{r.get('subResource')}"))
    hook = webhook(
        f"status.{unique}.example.com",
        by_url(server, "/status"),
        [rule(["*/status"], operations=["UPDATE"], groups=["apps"])],
        unique,
    )
    path = "/apis/apps/v1/namespaces/default/deployments"
    code, _ = await admin.post(path, deployment(unique, unique))
    assert code == 201
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        code, body = await admin.patch(
            f"{path}/{unique}", {"metadata": {"annotations": {"a": "b"}}}
        )
        assert code == 200, body
        code, body = await admin.patch(f"{path}/{unique}/status", {"status": {"replicas": 1}})
        assert code == 400, body
        assert body["message"].endswith("denied the request: deployments/status")
        request = server.reviews["/status"][-1]["request"]
        assert request["subResource"] == request["requestSubResource"] == "status"
        assert request["oldObject"]["metadata"]["name"] == unique


async def test_equivalent_match_policy_sends_the_object_in_the_matched_version(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/events", lambda r: allow())
    rules = [rule(["events"], groups=["events.k8s.io"])]
    exact = webhook(
        f"exact.{unique}.example.com", by_url(server, "/exact"), rules, unique, matchPolicy="Exact"
    )
    equivalent = webhook(f"eq.{unique}.example.com", by_url(server, "/events"), rules, unique)
    server.on("/exact", lambda r: deny("exact matched"))
    event = {
        "metadata": {"name": unique, "labels": {LABEL: unique}},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "reason": "Tested",
        "message": "hello",
    }
    body = config("ValidatingWebhookConfiguration", unique, exact, equivalent)
    async with registered(admin, VALIDATING, body):
        code, created = await admin.post("/api/v1/namespaces/default/events", event)
    assert code == 201, created
    assert server.reviews["/exact"] == []
    request = server.reviews["/events"][-1]["request"]
    assert request["kind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert request["requestKind"] == {"group": "", "version": "v1", "kind": "Event"}
    assert request["object"]["apiVersion"] == "events.k8s.io/v1"
    assert request["object"]["note"] == "hello"


async def test_dry_run_reaches_webhooks_without_side_effects_with_dry_run_set(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/dry", lambda r: allow())
    hook = webhook(
        f"dry.{unique}.example.com",
        by_url(server, "/dry"),
        [rule(["configmaps"])],
        unique,
        sideEffects="NoneOnDryRun",
    )
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
    ):
        code, body = await admin.post(
            "/api/v1/namespaces/default/configmaps",
            configmap(unique, unique),
            params={"dryRun": "All"},
        )
    assert code == 201, body
    request = server.reviews["/dry"][-1]["request"]
    assert request["dryRun"] is True
    assert request["options"]["dryRun"] == ["All"]


async def test_a_service_reference_is_called_through_its_endpoints(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/svc/check", lambda r: deny("via service"))
    ns = "webhook-system"
    await admin.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    await admin.post(
        f"/api/v1/namespaces/{ns}/services",
        {"metadata": {"name": "hooks"}, "spec": {"ports": [{"name": "https", "port": 443}]}},
    )
    endpoints = {
        "metadata": {"name": "hooks"},
        "subsets": [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": server.port}]}
        ],
    }
    code, body = await admin.post(f"/api/v1/namespaces/{ns}/endpoints", endpoints)
    assert code == 201, body
    try:
        client = {
            "service": {"namespace": ns, "name": "hooks", "path": "/svc/check"},
            "caBundle": server.ca_bundle,
        }
        name = f"svc.{unique}.example.com"
        hook = webhook(name, client, [rule(["configmaps"])], unique)
        async with registered(
            admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, hook)
        ) as created:
            assert created["webhooks"][0]["clientConfig"]["service"]["port"] == 443
            code, body = await admin.post(
                "/api/v1/namespaces/default/configmaps", configmap(unique, unique)
            )
            assert code == 400, body
            assert body["message"] == f'admission webhook "{name}" denied the request: via service'
    finally:
        await admin.delete(f"/api/v1/namespaces/{ns}/endpoints/hooks")
        await admin.delete(f"/api/v1/namespaces/{ns}/services/hooks")


async def test_invalid_configurations_are_refused_with_kube_messages(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    bad = {
        "name": "short.name",
        "clientConfig": {"url": "http://127.0.0.1/hook"},
        "rules": [rule(["*", "pods"], operations=["CREATE", "*"])],
        "admissionReviewVersions": ["v2"],
        "timeoutSeconds": 31,
        "failurePolicy": "Sometimes",
        "matchConditions": [{"name": "c", "expression": "true"}],
    }
    code, body = await admin.post(VALIDATING, config("ValidatingWebhookConfiguration", unique, bad))
    assert code == 422, body
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    w = "webhooks[0]"
    assert (
        f"{w}.name",
        'Invalid value: "short.name": should be a domain with at least three segments separated by dots',
    ) in causes
    assert (f"{w}.sideEffects", "Required value: must specify one of None, NoneOnDryRun") in causes
    assert (
        f"{w}.clientConfig.url",
        "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
    ) in causes
    assert (
        f"{w}.timeoutSeconds",
        "Invalid value: 31: the timeout value must be between 1 and 30 seconds",
    ) in causes
    assert (
        f"{w}.admissionReviewVersions",
        'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ) in causes
    assert (
        f"{w}.failurePolicy",
        'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
    ) in causes
    assert (
        f"{w}.rules[0].operations",
        'Invalid value: []string{"CREATE", "*"}: if \'*\' is present, must not specify other operations',
    ) in causes
    assert any(f == f"{w}.matchConditions" for f, _ in causes)
    both = webhook(
        f"a.{unique}.example.com",
        {"url": "https://x.example.com", "service": {"namespace": "a", "name": "b"}},
        [],
        unique,
    )
    twice = config(
        "ValidatingWebhookConfiguration",
        unique,
        both,
        dict(both, clientConfig={"url": "https://x.example.com"}),
    )
    code, body = await admin.post(VALIDATING, twice)
    assert code == 422, body
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert (
        "webhooks[0].clientConfig",
        "Required value: exactly one of url or service is required",
    ) in causes
    assert ("webhooks[1].name", f'Duplicate value: "a.{unique}.example.com"') in causes


async def test_webhooks_are_not_called_for_webhook_configurations(
    admin: Client, server: WebhookServer, unique: str
) -> None:
    server.on("/all", lambda r: deny("everything"))
    everything = webhook(
        f"all.{unique}.example.com",
        by_url(server, "/all"),
        [rule(["*"], operations=["*"], groups=["*"], versions=["*"])],
        unique,
        objectSelector={},
        namespaceSelector={"matchLabels": {LABEL: unique}},
    )
    async with registered(
        admin, VALIDATING, config("ValidatingWebhookConfiguration", unique, everything)
    ):
        other = config("MutatingWebhookConfiguration", f"{unique}-m")
        async with registered(admin, MUTATING, other):
            pass
    assert server.reviews["/all"] == []


def kubectl(
    hub: HubProcess, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    found = shutil.which("kubectl")
    assert found, "kubectl is not on PATH"
    versioned = Path(found).resolve().parent / "kubectl.1.30"
    return subprocess.run(
        [str(versioned) if versioned.exists() else found, f"--kubeconfig={hub.kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(hub.data_dir), "PATH": "/usr/bin:/bin"},
    )


UPSTREAM_SHAPED = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {name}
webhooks:
- name: deny.{name}.example.com
  admissionReviewVersions: ["v1", "v1beta1"]
  sideEffects: None
  clientConfig:
    url: {url}
    caBundle: {ca}
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["configmaps"]
    scope: Namespaced
  objectSelector:
    matchLabels:
      {label}: {name}
"""


@pytest.mark.kubectl
async def test_kubectl_applies_lists_and_meets_the_denial(
    hub: HubProcess, server: WebhookServer, unique: str
) -> None:
    server.on("/kubectl", lambda r: deny("kubectl may not", code=403, reason="Forbidden"))
    manifest = UPSTREAM_SHAPED.format(
        name=unique, url=server.url("/kubectl"), ca=server.ca_bundle, label=LABEL
    )
    applied = await asyncio.to_thread(kubectl, hub, "apply", "-f", "-", stdin=manifest)
    assert applied.returncode == 0, applied.stderr
    listed = await asyncio.to_thread(kubectl, hub, "get", "validatingwebhookconfigurations", unique)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == ["NAME", "WEBHOOKS", "AGE"]
    assert row.split()[:2] == [unique, "1"]
    got = await asyncio.to_thread(
        kubectl, hub, "get", "validatingwebhookconfiguration", unique, "-o", "json"
    )
    hook = json.loads(got.stdout)["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"]) == (
        "Fail",
        "Equivalent",
        10,
    )
    assert hook["namespaceSelector"] == {}
    created = await asyncio.to_thread(
        kubectl,
        hub,
        "create",
        "configmap",
        unique,
        "-n",
        "default",
        "--from-literal=a=b",
        "--dry-run=client",
        "-o",
        "json",
    )
    cm = json.loads(created.stdout)
    cm["metadata"]["labels"] = {LABEL: unique}
    denied = await asyncio.to_thread(kubectl, hub, "create", "-f", "-", stdin=json.dumps(cm))
    assert denied.returncode != 0
    assert (
        f'Error from server (Forbidden): error when creating "STDIN": admission webhook '
        f'"deny.{unique}.example.com" denied the request: kubectl may not'
    ) in denied.stderr
    deleted = await asyncio.to_thread(
        kubectl, hub, "delete", "validatingwebhookconfiguration", unique
    )
    assert deleted.returncode == 0, deleted.stderr
