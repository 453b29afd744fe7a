"""Upstream's ``TestAddonTemplateAgentManifests`` (``templateagent/template_agent_test.go``)
ported: the same templates and configs, the same expected objects, env, volumes, node
placement, images and namespaces."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyocm.addon.template.render import render_manifests
from tests.unit.addon.template import upstream_manifests as tm

CLUSTER = {"metadata": {"name": "cluster1"}}
PLACEMENT = {
    "nodeSelector": {"host": "ssd"},
    "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoExecute"}],
}
REGISTRIES = [{"source": "quay.io/open-cluster-management", "mirror": "quay.io/ocm"}]
PROXY_URL = "http://proxy.example.com:8080"


def config(**extra: Any) -> dict[str, Any]:
    return {
        "customizedVariables": [{"name": "LOG_LEVEL", "value": "4"}],
        "nodePlacement": PLACEMENT,
        "registries": REGISTRIES,
        **extra,
    }


def env(*, install_namespace: bool = True, proxy: bool = False) -> list[dict[str, str]]:
    pairs = [
        ("LOG_LEVEL", "4"),
        ("HUB_KUBECONFIG", "/managed/hub-kubeconfig/kubeconfig"),
        ("CLUSTER_NAME", "cluster1"),
    ]
    if install_namespace:
        pairs.append(("INSTALL_NAMESPACE", "test-install-namespace"))
    if proxy:
        pairs += [
            ("HTTP_PROXY", PROXY_URL),
            ("http_proxy", PROXY_URL),
            ("HTTPS_PROXY", PROXY_URL),
            ("https_proxy", PROXY_URL),
            ("NO_PROXY", "localhost"),
            ("no_proxy", "localhost"),
            ("CA_BUNDLE_FILE_PATH", "/managed/proxy-ca/ca-bundle.crt"),
        ]
    return [{"name": k, "value": v} for k, v in pairs]


def validate_pod_template(
    pod: dict[str, Any], expected_env: list[dict[str, str]], ca_bundle: bool
) -> None:
    """Upstream's ``validatePodTemplate``."""
    spec = pod["spec"]
    container = spec["containers"][0]
    assert container["image"] == "quay.io/ocm/addon-examples:v1"
    assert spec["nodeSelector"] == {"host": "ssd"}
    assert spec["tolerations"] == [{"key": "foo", "operator": "Exists", "effect": "NoExecute"}]
    assert container["env"] == expected_env
    volumes = [
        {"name": "hub-kubeconfig", "secret": {"secretName": "hello-template-hub-kubeconfig"}},
        {
            "name": "cert-example-com-signer-name",
            "secret": {"secretName": "hello-template-example.com-signer-name-client-cert"},
        },
    ]
    mounts = [
        {"name": "hub-kubeconfig", "mountPath": "/managed/hub-kubeconfig"},
        {"name": "cert-example-com-signer-name", "mountPath": "/managed/example.com-signer-name"},
    ]
    if ca_bundle:
        volumes.append(
            {"name": "proxy-ca-bundle", "configMap": {"name": "hello-template-proxy-ca"}}
        )
        mounts.append({"name": "proxy-ca-bundle", "mountPath": "/managed/proxy-ca"})
    assert spec["volumes"] == volumes
    assert container["volumeMounts"] == mounts


def render(spec: dict[str, Any], adc: dict[str, Any] | None) -> list[dict[str, Any]]:
    return render_manifests(
        addon_name="hello-template", template_spec=spec, cluster=CLUSTER, deployment_config=adc
    )


def test_manifests_rendered_successfully() -> None:
    objects = render(tm.addontemplate(), config(agentInstallNamespace="test-install-namespace"))
    assert len(objects) == 5
    deployment, daemonset, _, binding, job = objects
    for workload in (deployment, daemonset):
        assert workload["metadata"]["namespace"] == "test-install-namespace"
        validate_pod_template(workload["spec"]["template"], env(), ca_bundle=False)
    assert binding["subjects"][0]["namespace"] == "test-install-namespace"
    # The Job is neither a Deployment nor a DaemonSet: its namespace changes, its pod not.
    assert job["metadata"]["namespace"] == "test-install-namespace"
    assert job["spec"]["template"] == tm.cleanup_job()["spec"]["template"]


def test_manifests_with_proxy_config_rendered_successfully() -> None:
    proxy = {
        "httpProxy": PROXY_URL,
        "httpsProxy": PROXY_URL,
        "noProxy": "localhost",
        "caBundle": base64.b64encode(b"fake-ca-bundle").decode(),
    }
    adc = config(agentInstallNamespace="test-install-namespace", proxyConfig=proxy)
    objects = render(tm.addontemplate(), adc)
    assert len(objects) == 6
    for workload in objects[:2]:
        assert workload["metadata"]["namespace"] == "test-install-namespace"
        validate_pod_template(workload["spec"]["template"], env(proxy=True), ca_bundle=True)
    assert objects[3]["subjects"][0]["namespace"] == "test-install-namespace"
    assert objects[5] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "creationTimestamp": None,
            "name": "hello-template-proxy-ca",
            "namespace": "test-install-namespace",
        },
        "data": {"ca-bundle.crt": "fake-ca-bundle"},
    }


def test_only_daemonset_and_no_namespace_configured() -> None:
    objects = render(tm.addontemplate_daemonset(), config())
    assert len(objects) == 3
    daemonset, _, binding = objects
    assert daemonset["metadata"]["namespace"] == "open-cluster-management-agent-addon-ds"
    validate_pod_template(
        daemonset["spec"]["template"], env(install_namespace=False), ca_bundle=False
    )
    assert binding["subjects"][0]["namespace"] == "open-cluster-management-agent-addon-ds"


def test_only_deployment_rendered_successfully() -> None:
    objects = render(
        tm.addontemplate_deployment(), config(agentInstallNamespace="test-install-namespace")
    )
    assert len(objects) == 4
    assert objects[0]["metadata"]["namespace"] == "test-install-namespace"
    validate_pod_template(objects[0]["spec"]["template"], env(), ca_bundle=False)
    assert objects[2]["subjects"][0]["namespace"] == "test-install-namespace"


def test_the_daemonset_round_trip_writes_gos_zero_values() -> None:
    """Go's ``appsv1.DaemonSet`` has four status counters without ``omitempty``."""
    daemonset = render(tm.addontemplate_daemonset(), None)[0]
    assert daemonset["status"] == {
        "currentNumberScheduled": 0,
        "desiredNumberScheduled": 0,
        "numberMisscheduled": 0,
        "numberReady": 0,
    }
    assert daemonset["spec"]["updateStrategy"] == {}
    assert daemonset["metadata"]["creationTimestamp"] is None
    assert daemonset["spec"]["template"]["metadata"]["creationTimestamp"] is None


@pytest.mark.parametrize("adc", [None, {}])
def test_without_config_only_presets_and_volumes(adc: dict[str, Any] | None) -> None:
    deployment = render(tm.addontemplate_deployment(), adc)[0]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["containers"][0]["env"] == [
        {"name": "LOG_LEVEL"},  # {{LOG_LEVEL}} renders empty; Go's omitempty drops the value
        {"name": "HUB_KUBECONFIG", "value": "/managed/hub-kubeconfig/kubeconfig"},
        {"name": "CLUSTER_NAME", "value": "cluster1"},
    ]
    assert pod["containers"][0]["image"] == "quay.io/open-cluster-management/addon-examples:v1"
    assert "nodeSelector" not in pod
    assert deployment["metadata"]["namespace"] == tm.NS


def test_keys_are_in_gos_order() -> None:
    """Go's encoder writes map keys sorted; so does every rendered object here."""
    deployment = render(tm.addontemplate_deployment(), None)[0]
    assert list(deployment) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert list(deployment["spec"]["template"]["spec"]["containers"][0]) == sorted(
        deployment["spec"]["template"]["spec"]["containers"][0]
    )
