"""The webhooks' serving certificates (issue 23), kept as upstream's cluster-manager
operator keeps them: a signing CA, a bundle of every CA not yet expired, a serving
certificate for the Service's names, and the bundle as ``caBundle`` of what calls the
Service; each replaced when a fifth of its validity is left. Run against a real hub."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509

from pyocm.kube import kinds
from pyocm.local import crdinstall
from pyocm.runtime.client import Api
from pyocm.runtime.servingcerts import ServingCertificates, sync
from pyocm.testing import HubProcess
from tests.support import grant, service_account_token, token_kubeconfig

Obj = dict[str, Any]
NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _crd(group: str, *, namespace: str, service: str) -> Obj:
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "things",
                "singular": "thing",
                "kind": "Thing",
                "listKind": "ThingList",
            },
            "versions": [version],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {
                        "service": {"namespace": namespace, "name": service, "path": "/convert"}
                    },
                },
            },
        },
    }


def _webhooks(name: str) -> Obj:
    def hook(hook: str, service: str) -> Obj:
        return {
            "name": f"{hook}.{name}.example.com",
            "clientConfig": {"service": {"namespace": name, "name": service, "path": "/x"}},
            "rules": [
                {
                    "operations": ["CREATE"],
                    "apiGroups": ["example.com"],
                    "apiVersions": ["v1"],
                    "resources": ["nothing"],
                }
            ],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }

    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [hook("ours", "hooks"), hook("theirs", "elsewhere")],
    }


async def _secret_cert(api: Api, name: str, namespace: str) -> x509.Certificate:
    secret = await api.get(kinds.SECRET, name, namespace=namespace)
    assert secret["type"] == "kubernetes.io/tls"
    return x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))


async def _bundle(api: Api, namespace: str) -> list[x509.Certificate]:
    config = await api.get(kinds.CONFIGMAP, "ca-bundle-configmap", namespace=namespace)
    return x509.load_pem_x509_certificates(config["data"]["ca-bundle.crt"].encode())


async def test_certificates_are_made_injected_and_rotated(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    spec = ServingCertificates(
        namespace=unique, service="hooks", serving_secret="hooks-serving-cert"
    )
    calling = _crd(f"{unique}.example.com", namespace=unique, service="hooks")
    other = _crd(f"other-{unique}.example.com", namespace=unique, service="elsewhere")
    for crd in (calling, other):
        await api.create(kinds.CRD, crd)
    await api.create(kinds.VALIDATING_WEBHOOK_CONFIGURATION, _webhooks(unique))

    bundle = await sync(api, spec, now=NOW)

    ca = await _secret_cert(api, "signer-secret", unique)
    serving = await _secret_cert(api, "hooks-serving-cert", unique)
    serving.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"hooks.{unique}.svc" in names.get_values_for_type(x509.DNSName)
    assert await _bundle(api, unique) == [ca]
    got = await api.get(kinds.CRD, calling["metadata"]["name"])
    assert (
        base64.b64decode(got["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]) == bundle
    )
    untouched = await api.get(kinds.CRD, other["metadata"]["name"])
    assert "caBundle" not in untouched["spec"]["conversion"]["webhook"]["clientConfig"]
    hooks = (await api.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, unique))["webhooks"]
    assert base64.b64decode(hooks[0]["clientConfig"]["caBundle"]) == bundle
    assert "caBundle" not in hooks[1]["clientConfig"]  # it calls another Service

    # Nothing is due: nothing is written.
    before = await api.get(kinds.SECRET, "hooks-serving-cert", namespace=unique)
    await sync(api, spec, now=NOW + timedelta(days=1))
    after = await api.get(kinds.SECRET, "hooks-serving-cert", namespace=unique)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

    # Less than a fifth of the serving certificate's 30 days left: a new one, same CA.
    await sync(api, spec, now=NOW + timedelta(days=25))
    renewed = await _secret_cert(api, "hooks-serving-cert", unique)
    assert renewed.serial_number != serving.serial_number
    renewed.verify_directly_issued_by(ca)
    assert await _secret_cert(api, "signer-secret", unique) == ca

    # Less than a fifth of the CA's year left: a new CA; the bundle keeps the old one
    # (certificates it signed stay trusted until they expire) and the CRD gets both.
    bundle = await sync(api, spec, now=NOW + timedelta(days=300))
    new_ca = await _secret_cert(api, "signer-secret", unique)
    assert new_ca != ca
    assert await _bundle(api, unique) == [new_ca, ca]
    (await _secret_cert(api, "hooks-serving-cert", unique)).verify_directly_issued_by(new_ca)
    got = await api.get(kinds.CRD, calling["metadata"]["name"])
    assert (
        base64.b64decode(got["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]) == bundle
    )

    # Once the old CA has expired, the bundle lets it go.
    await sync(api, spec, now=NOW + timedelta(days=366))
    assert await _bundle(api, unique) == [new_ca]


async def test_a_serving_secret_someone_broke_is_replaced(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    spec = ServingCertificates(
        namespace=unique, service="hooks", serving_secret="hooks-serving-cert"
    )
    await api.create(
        kinds.SECRET,
        {
            "metadata": {"name": "hooks-serving-cert", "namespace": unique},
            "type": "Opaque",
            "data": {"tls.crt": base64.b64encode(b"not a certificate").decode()},
        },
    )
    await sync(api, spec, now=NOW)
    serving = await _secret_cert(api, "hooks-serving-cert", unique)
    serving.verify_directly_issued_by(await _secret_cert(api, "signer-secret", unique))


async def test_updating_crds_keeps_a_webhook_conversion(api: Api, unique: str) -> None:
    """pyocm's CRD definitions say conversion None; a deployment that points a CRD at a
    conversion webhook keeps it when the controller updates the CRDs."""
    crd = _crd(f"{unique}.example.com", namespace=unique, service="hooks")
    await api.create(kinds.CRD, crd)
    changed = {**crd, "spec": {**crd["spec"], "conversion": {"strategy": "None"}}}
    changed["spec"]["names"] = {**crd["spec"]["names"], "shortNames": ["th"]}
    await crdinstall.install(api, [changed])
    got = await api.get(kinds.CRD, crd["metadata"]["name"])
    assert got["spec"]["names"]["shortNames"] == ["th"]
    assert got["spec"]["conversion"]["strategy"] == "Webhook"
    assert got["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"] == "hooks"


async def test_a_configuration_it_may_not_update_does_not_stop_the_others(
    api: Api, hub: HubProcess, unique: str
) -> None:
    """Deployed, the controller may update only the configurations its manifests name;
    another one calling the same Service is skipped, and the rest still get the CA."""
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(kinds.SERVICE_ACCOUNT, {"metadata": {"name": "certs", "namespace": unique}})
    allowed, foreign = _webhooks(f"{unique}-allowed"), _webhooks(f"{unique}-foreign")
    for config in (foreign, allowed):
        config["webhooks"][1]["clientConfig"]["service"]["name"] = "hooks"
        config["webhooks"][0]["clientConfig"]["service"]["namespace"] = unique
        config["webhooks"][1]["clientConfig"]["service"]["namespace"] = unique
        await api.create(kinds.VALIDATING_WEBHOOK_CONFIGURATION, config)
    admission = "admissionregistration.k8s.io"
    await grant(api, f"certs-{unique}", subject_account(unique, "certs"), [
        {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get", "create", "update"]},
        {"apiGroups": [admission], "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"], "verbs": ["list"]},
        {"apiGroups": [admission], "resources": ["validatingwebhookconfigurations"], "verbs": ["update"], "resourceNames": [allowed["metadata"]["name"]]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list"]},
    ])  # fmt: skip
    token = await service_account_token(api, unique, "certs")
    spec = ServingCertificates(
        namespace=unique, service="hooks", serving_secret="hooks-serving-cert"
    )
    async with Api.from_config(token_kubeconfig(hub.url, hub.ca_pem, token)) as limited:
        await sync(limited, spec, now=NOW)
    got = await api.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, allowed["metadata"]["name"])
    assert all("caBundle" in hook["clientConfig"] for hook in got["webhooks"])
    got = await api.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, foreign["metadata"]["name"])
    assert not any("caBundle" in hook["clientConfig"] for hook in got["webhooks"])


def subject_account(namespace: str, name: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


async def test_objects_from_a_cache_are_not_changed_in_place(api: Api, unique: str) -> None:
    """The controller hands its informers' objects to the injection: those are the
    caches' own, so the update is made from a copy."""
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    spec = ServingCertificates(
        namespace=unique, service="hooks", serving_secret="hooks-serving-cert"
    )
    stored = await api.create(kinds.VALIDATING_WEBHOOK_CONFIGURATION, _webhooks(unique))
    cached = {"items": [stored]}

    async def lister(kind: Any) -> list[Obj]:
        return cached["items"] if kind == kinds.VALIDATING_WEBHOOK_CONFIGURATION else []

    bundle = await sync(api, spec, now=NOW, lister=lister)
    assert "caBundle" not in stored["webhooks"][0]["clientConfig"]
    got = await api.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, unique)
    assert base64.b64decode(got["webhooks"][0]["clientConfig"]["caBundle"]) == bundle
