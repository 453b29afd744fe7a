"""What the agent makes of a ManagedClusterAddOn's registrations (upstream configuration.go)."""

from __future__ import annotations

from typing import Any

from pyocm.api import models
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.registration.agent.addons import config

SCOPE = "system:open-cluster-management:cluster:c1:addon:hello"


def addon(status: dict[str, Any], annotations: dict[str, str] | None = None) -> ManagedClusterAddOn:
    metadata: dict[str, Any] = {"name": "hello", "namespace": "c1", "resourceVersion": "1"}
    if annotations:
        metadata["annotations"] = annotations
    found: ManagedClusterAddOn = models.view(
        ManagedClusterAddOn, {"metadata": metadata, "spec": {}, "status": status}
    )
    return found


def only(found: dict[str, config.Registration]) -> config.Registration:
    [registration] = found.values()
    return registration


def test_a_kubeclient_registration_without_a_subject_gets_upstreams_defaults() -> None:
    registration = only(
        config.registrations(
            addon({"registrations": [{"type": "kubeClient", "kubeClient": {}}]}), cluster="c1"
        )
    )
    assert registration.secret == "hello-hub-kubeconfig"
    assert registration.namespace == "open-cluster-management-agent-addon"
    assert registration.kube_client
    request = registration.request
    assert request.common_name == f"{SCOPE}:agent:hello"
    assert request.organizations == (SCOPE,)
    assert request.signer == "kubernetes.io/kube-apiserver-client"
    assert request.name_prefix == "addon-c1-hello-"
    assert dict(request.labels) == {
        "open-cluster-management.io/cluster-name": "c1",
        "open-cluster-management.io/addon-name": "hello",
    }
    assert request.dns_names == ("hello.addon.open-cluster-management.io",)


def test_a_kubeclient_subject_is_taken_as_given() -> None:
    subject = {
        "user": f"{SCOPE}:agent:hello-agent",
        "groups": [SCOPE, "system:open-cluster-management:addon:hello"],
    }
    request = only(
        config.registrations(
            addon({"registrations": [{"type": "kubeClient", "kubeClient": {"subject": subject}}]}),
            cluster="c1",
            expiration_seconds=7200,
        )
    ).request
    assert request.common_name == subject["user"]
    assert request.organizations == tuple(subject["groups"])
    assert request.expiration_seconds == 7200


def test_a_custom_signer_keeps_its_groups_and_units_and_gets_only_the_default_user() -> None:
    entry = {
        "type": "customSigner",
        "customSigner": {
            "signerName": "example.com/signer1",
            "subject": {"organizationUnits": ["ou"]},
        },
    }
    registration = only(config.registrations(addon({"registrations": [entry]}), cluster="c1"))
    # Slashes become dashes, dots stay.
    assert registration.secret == "hello-example.com-signer1-client-cert"
    assert not registration.kube_client
    assert registration.request.signer == "example.com/signer1"
    assert registration.request.common_name == f"{SCOPE}:agent:hello"
    assert registration.request.organizations == ()
    assert registration.request.organizational_units == ("ou",)


def test_entries_upstream_skips_are_skipped() -> None:
    entries = [
        {"type": "kubeClient"},
        {"type": "customSigner", "customSigner": {"signerName": ""}},
        {"type": "somethingElse"},
    ]
    assert config.registrations(addon({"registrations": entries}), cluster="c1") == {}


def test_the_install_namespace_is_the_status_then_the_annotation_then_the_default() -> None:
    annotation = {"addon.open-cluster-management.io/v1alpha1-install-namespace": "from-annotation"}
    assert config.install_namespace(addon({"namespace": "ns"}, annotation)) == "ns"
    assert config.install_namespace(addon({}, annotation)) == "from-annotation"
    assert config.install_namespace(addon({})) == "open-cluster-management-agent-addon"


def test_a_registration_changes_its_key_when_its_subject_or_namespace_does() -> None:
    entry = {"type": "kubeClient", "kubeClient": {"subject": {"user": "u"}}}
    other = {"type": "kubeClient", "kubeClient": {"subject": {"user": "v"}}}
    same = set(config.registrations(addon({"registrations": [entry]}), cluster="c1"))
    assert same == set(config.registrations(addon({"registrations": [entry]}), cluster="c1"))
    assert same != set(config.registrations(addon({"registrations": [other]}), cluster="c1"))
    moved = addon({"registrations": [entry], "namespace": "elsewhere"})
    assert same != set(config.registrations(moved, cluster="c1"))
    hosted = addon(
        {"registrations": [entry]}, {"addon.open-cluster-management.io/hosting-cluster-name": "h"}
    )
    assert only(config.registrations(hosted, cluster="c1")).running_outside


def test_the_first_kubeclient_entry_gets_the_csr_driver_once() -> None:
    entries = [
        {"type": "customSigner", "customSigner": {"signerName": "a/b"}},
        {"type": "kubeClient"},
        {"type": "kubeClient", "kubeClient": {"driver": "token"}},
    ]
    updated = config.with_driver(addon({"registrations": entries}))
    assert updated is not None
    assert updated[1] == {"type": "kubeClient", "kubeClient": {"driver": "csr"}}
    assert updated[2] == entries[2]  # only the first, as upstream
    assert config.with_driver(addon({"registrations": updated})) is None
    assert config.with_driver(addon({"registrations": entries[:1]})) is None
