"""The webhook dispatcher's decisions that need no webhook server: rule matching
(scope, wildcards, subresources) and the dry-run refusal kube gives a webhook that may
have side effects (such webhooks can no longer be created through v1, so only a stored
one, from an older API, reaches the dispatcher)."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from datetime import timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pyocm.apiserver.admission.chain import Operation, Request
from pyocm.apiserver.admission.webhooks import review
from pyocm.apiserver.admission.webhooks.client import WebhookClient
from pyocm.apiserver.admission.webhooks.config import WebhookSource, parse_configuration
from pyocm.apiserver.admission.webhooks.matching import (
    Attributes,
    Invocation,
    Matcher,
    rule_matches,
)
from pyocm.apiserver.admission.webhooks.plugin import Dispatcher
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.registry.builtin import builtin_resources
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.kube.status import ApiError
from pyocm.pki.ca import CertificateAuthority

ADMIN = UserInfo(name="admin", groups=(MASTERS,))


def info(group: str, plural: str) -> ResourceInfo:
    return next(r for r in builtin_resources() if (r.group, r.plural) == (group, plural))


def request(
    resource: ResourceInfo, *, namespace: str = "", subresource: str = "", dry_run: bool = False
) -> Request:
    ctx = Context(user=ADMIN, namespace=namespace, subresource=subresource, dry_run=dry_run)
    obj = {"apiVersion": "v1", "kind": resource.kind, "metadata": {"name": "x"}}
    return Request(Operation.UPDATE, resource, ctx, namespace, "x", obj, dict(obj))


def hook_config(**hook: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "c"},
        "webhooks": [
            {
                "name": "a.b.c",
                "rules": [
                    {
                        "operations": ["*"],
                        "apiGroups": ["*"],
                        "apiVersions": ["*"],
                        "resources": ["*"],
                        "scope": "*",
                    }
                ],
                "clientConfig": {"url": "https://127.0.0.1:1/"},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                **hook,
            }
        ],
    }


@pytest.mark.parametrize(
    ("resources", "subresource", "matches"),
    [
        (["*"], "", True),
        (["*"], "status", False),
        (["*/*"], "status", True),
        (["*/status"], "status", True),
        (["*/status"], "", False),
        (["deployments/*"], "scale", True),
        (["pods"], "", False),
    ],
)
def test_resource_wildcards(resources: list[str], subresource: str, matches: bool) -> None:
    config = hook_config()
    config["webhooks"][0]["rules"][0]["resources"] = resources
    (hook,) = parse_configuration(config, mutating=False)
    req = request(info("apps", "deployments"), namespace="ns", subresource=subresource)
    attrs = Attributes.of(req)
    assert rule_matches(hook.rules[0], attrs, attrs.info) is matches


@pytest.mark.parametrize(
    ("scope", "group", "plural", "namespace", "matches"),
    [
        ("Namespaced", "apps", "deployments", "ns", True),
        ("Namespaced", "", "namespaces", "", False),
        ("Cluster", "", "namespaces", "", True),
        ("Cluster", "", "nodes", "", True),
        ("Cluster", "apps", "deployments", "ns", False),
    ],
)
def test_scope(scope: str, group: str, plural: str, namespace: str, matches: bool) -> None:
    config = hook_config()
    config["webhooks"][0]["rules"][0]["scope"] = scope
    (hook,) = parse_configuration(config, mutating=False)
    attrs = Attributes.of(request(info(group, plural), namespace=namespace))
    assert rule_matches(hook.rules[0], attrs, attrs.info) is matches


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("effects", ["Some", "Unknown"])
async def test_dry_run_is_refused_by_a_webhook_with_side_effects(effects: str) -> None:
    # failurePolicy Ignore and a closed port: a call would be skipped quietly, so only
    # the dry-run check can refuse the request.
    config = hook_config(
        sideEffects=effects,
        failurePolicy="Ignore",
        clientConfig={"url": f"https://127.0.0.1:{closed_port()}/"},
    )
    source = WebhookSource()
    source.validating = tuple(parse_configuration(config, mutating=False))
    state = SimpleNamespace(catalog=Catalog(), store=None, stopping=asyncio.Event())
    dispatcher = Dispatcher(cast(ServerState, state), source)
    configmaps = info("", "configmaps")
    await dispatcher.validate(request(configmaps, namespace="ns"))  # called, failed, ignored
    with pytest.raises(ApiError) as raised:
        await dispatcher.validate(request(configmaps, namespace="ns", dry_run=True))
    assert raised.value.code == 400
    assert raised.value.message == 'admission webhook "a.b.c" does not support dry run'
    state.stopping.set()
    await dispatcher.client.close()


def dispatcher_with(source: WebhookSource) -> tuple[Dispatcher, SimpleNamespace]:
    state = SimpleNamespace(catalog=Catalog(), store=None, stopping=asyncio.Event())
    return Dispatcher(cast(ServerState, state), source), state


@pytest.mark.parametrize(
    ("bundle", "problem"),
    [
        (b"not pem at all", "unable to parse bytes as PEM block"),
        (
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "failed to parse certificate: x509: malformed certificate",
        ),
        (
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            "no valid certificate authority data seen",
        ),
    ],
)
async def test_a_ca_bundle_that_does_not_load_is_a_call_failure(
    bundle: bytes, problem: str
) -> None:
    # kube reports it as "could not get REST client", decided by the failure policy:
    # Ignore lets the request through, Fail answers 500 with the reason.
    client = {"url": f"https://127.0.0.1:{closed_port()}/", "caBundle": ""}
    source = WebhookSource()
    dispatcher, state = dispatcher_with(source)
    configmaps = info("", "configmaps")
    for policy in ("Ignore", "Fail"):
        config = hook_config(failurePolicy=policy, clientConfig=client)
        (hook,) = parse_configuration(config, mutating=False)
        source.validating = (dataclasses.replace(hook, ca_bundle=bundle),)
        if policy == "Ignore":
            await dispatcher.validate(request(configmaps, namespace="ns"))
            continue
        with pytest.raises(ApiError) as raised:
            await dispatcher.validate(request(configmaps, namespace="ns"))
        assert raised.value.code == 500
        assert raised.value.message == (
            'Internal error occurred: failed calling webhook "a.b.c": could not get REST '
            f"client: unable to load root certificates: {problem}"
        )
    state.stopping.set()
    await dispatcher.client.close()


def test_tls_contexts_are_kept_for_a_bounded_number_of_bundles() -> None:
    ca = CertificateAuthority.create("bounded", valid_for=timedelta(days=1))
    client = WebhookClient(store=cast(Store, None), catalog=Catalog())
    (hook,) = parse_configuration(hook_config(), mutating=False)
    for n in range(100):  # the same CA, told apart by a comment before it
        bundle = f"# bundle {n}\n".encode() + ca.cert_pem
        client._context(dataclasses.replace(hook, ca_bundle=bundle))
    assert len(client._contexts) == 64
    assert f"# bundle {99}\n".encode() + ca.cert_pem in client._contexts


@pytest.mark.parametrize(
    ("operation", "labels", "called"),
    [
        # The missing object (old on CREATE, new on DELETE) does not match DoesNotExist.
        (Operation.CREATE, {"skip": "yes"}, False),
        (Operation.DELETE, {"skip": "yes"}, False),
        (Operation.CREATE, {}, True),
        (Operation.DELETE, {}, True),
    ],
)
async def test_a_missing_object_matches_no_object_selector(
    operation: Operation, labels: dict[str, str], called: bool
) -> None:
    selector = {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}
    (hook,) = parse_configuration(hook_config(objectSelector=selector), mutating=False)
    configmaps = info("", "configmaps")
    ctx = Context(user=ADMIN, namespace="ns")
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": labels}}
    new, old = (obj, None) if operation is Operation.CREATE else (None, obj)
    attrs = Attributes.of(Request(operation, configmaps, ctx, "ns", "x", new, old))
    matcher = Matcher(catalog=Catalog(), store=cast(Store, None))
    assert (await matcher.invocation(hook, attrs) is not None) is called


@pytest.mark.parametrize("operation", [Operation.CREATE, Operation.UPDATE, Operation.DELETE])
def test_a_namespace_request_names_itself_as_its_namespace(operation: Operation) -> None:
    # kube's create.go sets namespace = name for a Namespace create too, as the
    # namespace-scoped request info does for the other operations.
    namespaces = info("", "namespaces")
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    new, old = (None, obj) if operation is Operation.DELETE else (obj, None)
    req = Request(operation, namespaces, Context(user=ADMIN), "", "team-a", new, old)
    attrs = Attributes.of(req)
    (hook,) = parse_configuration(hook_config(), mutating=False)
    sent = review.build(Invocation(hook, namespaces), attrs, req.ctx, obj=new, old=old)
    assert sent.body["request"]["namespace"] == "team-a"
