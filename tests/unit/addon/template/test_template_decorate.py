"""Upstream's ``decorator_test.go`` ported (namespace, proxy, resource requirements), and
the decorators' other rules: image override, node placement, volumes, errors."""

from __future__ import annotations

import base64
from typing import Any, cast

import pytest

from pyocm.addon.template import decorate
from pyocm.addon.template.render import RenderError, render_manifests
from pyocm.addon.template.values import INSTALL_NAMESPACE, deployment_config_values
from pyocm.api.models.addon_v1beta1 import AddOnDeploymentConfigSpec
from tests.unit.addon.template.rendering import rendered_pod

# -- namespace (TestNamespaceDecorator) ------------------------------------------------


def _config(**fields: Any) -> AddOnDeploymentConfigSpec:
    return cast(AddOnDeploymentConfigSpec, fields)


def _decorated(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    decorate.set_namespace(obj, {INSTALL_NAMESPACE: namespace} if namespace else {})
    return obj


def test_no_namespace_set() -> None:
    pod = _decorated(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test", "namespace": "default"}},
        "",
    )
    assert pod["metadata"] == {"name": "test", "namespace": "default"}


def test_namespace_set() -> None:
    pod = _decorated(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test", "namespace": "default"}},
        "newns",
    )
    assert pod["metadata"] == {"name": "test", "namespace": "newns"}


def test_cluster_role_binding() -> None:
    subjects = [
        {"name": "user1", "namespace": "default"},
        {"name": "user2", "namespace": "default"},
    ]
    binding = _decorated(
        {"kind": "ClusterRoleBinding", "metadata": {"name": "test"}, "subjects": subjects}, "newns"
    )
    assert binding["metadata"] == {"name": "test"}  # cluster-scoped: no namespace added
    assert [s["namespace"] for s in binding["subjects"]] == ["newns", "newns"]


def test_role_binding() -> None:
    subjects = [{"name": "user1", "namespace": "default"}, {"kind": "User", "name": "user2"}]
    binding = _decorated(
        {
            "kind": "RoleBinding",
            "metadata": {"name": "test", "namespace": "default"},
            "subjects": subjects,
        },
        "newns",
    )
    assert binding["metadata"] == {"name": "test", "namespace": "newns"}
    # Every subject, whatever its kind, as upstream does.
    assert [s["namespace"] for s in binding["subjects"]] == ["newns", "newns"]


def test_namespace() -> None:
    assert (
        _decorated({"kind": "Namespace", "metadata": {"name": "test"}}, "newns")["metadata"]["name"]
        == "newns"
    )


def test_binding_without_subjects_is_an_error() -> None:
    with pytest.raises(RenderError, match=r"^failed to find field subjects$"):
        _decorated({"kind": "RoleBinding", "metadata": {"name": "t", "namespace": "d"}}, "newns")


def test_binding_with_null_subjects_is_left() -> None:
    assert (
        _decorated(
            {"kind": "ClusterRoleBinding", "metadata": {"name": "t"}, "subjects": None}, "n"
        )["subjects"]
        is None
    )


# -- proxy (TestProxyDecorator) --------------------------------------------------------

PROXY_NAMES = {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}


def _pod() -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "test", "image": "test"}]}}


def _proxied(proxy: dict[str, str]) -> dict[str, Any]:
    pod = _pod()
    decorate.add_proxy(
        pod, addon_name="addon1", private=deployment_config_values(_config(proxyConfig=proxy))
    )
    return pod


def test_no_proxy_set() -> None:
    assert _proxied({}) == _pod()


def test_proxy_set() -> None:
    pod = _proxied(
        {"httpProxy": "http://proxy", "httpsProxy": "https://proxy", "noProxy": "no-proxy"}
    )
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "HTTP_PROXY", "value": "http://proxy"},
        {"name": "http_proxy", "value": "http://proxy"},
        {"name": "HTTPS_PROXY", "value": "https://proxy"},
        {"name": "https_proxy", "value": "https://proxy"},
        {"name": "NO_PROXY", "value": "no-proxy"},
        {"name": "no_proxy", "value": "no-proxy"},
    ]
    assert "volumes" not in pod["spec"]


def test_only_some_proxy_fields() -> None:
    env = _proxied({"noProxy": "localhost"})["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "NO_PROXY", "value": "localhost"},
        {"name": "no_proxy", "value": "localhost"},
    ]


def test_ca_bundle_alone_adds_no_env_but_the_configmap() -> None:
    """Upstream returns before the CA decoration when no proxy env was added, yet its
    injector looks at the bundle only: the ConfigMap comes without any pod using it."""
    bundle = base64.b64encode(b"pem").decode()
    assert _proxied({"caBundle": bundle}) == _pod()
    private = deployment_config_values({"proxyConfig": {"caBundle": bundle}})
    assert [
        o["metadata"]["name"] for o in decorate.proxy_objects(addon_name="a", private=private)
    ] == ["a-proxy-ca"]


# -- resource requirements (TestResourceRequirementsDecorator) --------------------------


def _resourced(resource: str, requirements: list[Any]) -> list[dict[str, Any]]:
    pod: dict[str, Any] = {
        "spec": {"containers": [{"name": "c1", "image": "test"}, {"name": "c2", "image": "test"}]}
    }
    private = deployment_config_values(_config(resourceRequirements=requirements))
    decorate.set_resources(pod, private, container_id_prefix=f"{resource}:d1")
    return [c.get("resources", {}) for c in pod["spec"]["containers"]]


def _memory(container_id: str, memory: str) -> dict[str, Any]:
    return {"containerID": container_id, "resources": {"requests": {"memory": memory}}}


def test_resource_requirements_deployment() -> None:
    assert _resourced("deployments", [_memory("deployments:d1:c1", "128Mi")]) == [
        {"requests": {"memory": "128Mi"}},
        {},
    ]


def test_resource_requirements_daemonset() -> None:
    assert _resourced("daemonsets", [_memory("daemonsets:d1:c1", "128Mi")]) == [
        {"requests": {"memory": "128Mi"}},
        {},
    ]
    assert _resourced("deployments", [_memory("daemonsets:d1:c1", "128Mi")]) == [{}, {}]


def test_resource_requirements_regex_match_last_wins() -> None:
    requirements = [_memory("deployments:d1:c1", "128Mi"), _memory("*:*:*", "256Mi")]
    assert _resourced("deployments", requirements) == [{"requests": {"memory": "256Mi"}}] * 2


def test_invalid_container_id() -> None:
    with pytest.raises(RenderError, match=r"^invalid ContainerID: deployments:d1$"):
        deployment_config_values(_config(resourceRequirements=[_memory("deployments:d1", "1")]))


# -- images, placement, volumes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("registries", "image", "expected"),
    [
        (
            [{"source": "quay.io/ocm/", "mirror": "mirror.io/ocm/"}],
            "quay.io/ocm/agent:v1",
            "mirror.io/ocm/agent:v1",
        ),
        (
            [{"source": "docker.io", "mirror": "m.io"}],
            "quay.io/ocm/agent:v1",
            "quay.io/ocm/agent:v1",
        ),
        ([{"mirror": "m.io/x"}], "quay.io/ocm/agent:v1", "m.io/x/agent:v1"),
        ([{"mirror": ""}], "quay.io/ocm/agent:v1", "agent:v1"),
        (
            [
                {"source": "quay.io", "mirror": "first.io"},
                {"source": "docker.io", "mirror": "x.io"},
            ],
            "quay.io/ocm/agent:v1",
            "first.io/ocm/agent:v1",
        ),
        (
            [
                {"source": "quay.io", "mirror": "first.io"},
                {"source": "quay.io/ocm", "mirror": "second.io"},
            ],
            "quay.io/ocm/agent:v1",
            "second.io/agent:v1",
        ),
    ],
)
def test_override_image(registries: list[Any], image: str, expected: str) -> None:
    assert decorate.override_image(registries, image) == expected


def test_tolerations_need_a_node_selector() -> None:
    """Upstream's quirk: tolerations alone are not applied."""
    toleration = {"key": "k", "operator": "Exists"}
    pod = rendered_pod({"nodePlacement": {"tolerations": [toleration]}}, nodeSelector={"own": "x"})
    assert pod["nodeSelector"] == {"own": "x"}
    assert "tolerations" not in pod


def test_node_selector_replaces_both() -> None:
    placement = {"nodeSelector": {"host": "ssd"}}
    pod = rendered_pod(
        {"nodePlacement": placement}, nodeSelector={"own": "x"}, tolerations=[{"key": "t"}]
    )
    assert pod["nodeSelector"] == {"host": "ssd"}
    assert "tolerations" not in pod  # replaced by the config's none


def test_custom_signer_nil_is_an_error() -> None:
    spec = {
        "addonName": "a",
        "agentSpec": {
            "workload": {
                "manifests": [
                    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}}
                ]
            }
        },
        "registration": [{"type": "CustomSigner"}],
    }
    with pytest.raises(RenderError, match=r"^custom signer is nil$"):
        render_manifests(
            addon_name="a",
            template_spec=spec,
            cluster={"metadata": {"name": "c"}},
            deployment_config=None,
        )


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        ("__NODE_PLACEMENT", "node placement value is invalid"),
        ("__REGISTRIES", "registries value is invalid"),
        ("__RESOURCE_REQUIREMENTS", "resource requirements value is invalid"),
    ],
)
def test_private_keys_as_variables_are_invalid_values(variable: str, message: str) -> None:
    with pytest.raises(RenderError) as caught:
        rendered_pod({"customizedVariables": [{"name": variable, "value": "x"}]})
    assert str(caught.value) == message


def test_resource_quantities_are_canonical() -> None:
    adc: dict[str, Any] = {
        "resourceRequirements": [
            {"containerID": "*:*:*", "resources": {"limits": {"cpu": "0.5", "memory": 1024}}}
        ]
    }
    assert rendered_pod(adc)["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "1024"}
    }
