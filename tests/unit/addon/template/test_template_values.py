"""Upstream's ``values_test.go`` ported (``TestGetValues``,
``TestGetAddOnRegistriesPrivateValuesFromClusterAnnotation``), plus the precedence and
private-value rules the template manager's wiring gives."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.template.render import RenderError
from pyocm.addon.template.values import (
    INSTALL_NAMESPACE,
    REGISTRIES,
    Values,
    get_values,
    registries_from_annotation,
)
from pyocm.api.models.addon_v1alpha1 import AddOnTemplateSpec
from pyocm.api.models.addon_v1beta1 import AddOnDeploymentConfigSpec
from pyocm.api.models.cluster_v1 import ManagedCluster
from tests.unit.addon.template.rendering import rendered_pod

KUBECONFIG = "/managed/hub-kubeconfig/kubeconfig"
WITH_REGISTRATION: AddOnTemplateSpec = {
    "addonName": "a",
    "agentSpec": {},
    "registration": [{"type": "KubeClient"}],
}
WITHOUT_REGISTRATION: AddOnTemplateSpec = {"addonName": "a", "agentSpec": {}}
ANNOTATION = "open-cluster-management.io/image-registries"


def values(spec: AddOnTemplateSpec, adc: AddOnDeploymentConfigSpec | None) -> Values:
    return get_values(
        template_spec=spec, cluster={"metadata": {"name": "test-cluster"}}, deployment_config=adc
    )


def variables(**pairs: str) -> list[Any]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


def test_with_default_value_registration_set_in_template() -> None:
    got = values(WITH_REGISTRATION, None)
    assert got.preset == [("HUB_KUBECONFIG", KUBECONFIG), ("CLUSTER_NAME", "test-cluster")]
    assert got.public == {"CLUSTER_NAME": "test-cluster", "HUB_KUBECONFIG": KUBECONFIG}
    assert got.private == {}


def test_without_default_value_registration_not_set_in_template() -> None:
    got = values(WITHOUT_REGISTRATION, {"agentInstallNamespace": "default-ns"})
    assert got.preset == [("CLUSTER_NAME", "test-cluster"), ("INSTALL_NAMESPACE", "default-ns")]
    assert got.public == {"CLUSTER_NAME": "test-cluster", "INSTALL_NAMESPACE": "default-ns"}
    assert got.private == {INSTALL_NAMESPACE: "default-ns"}


def test_with_private_and_user_defined_values() -> None:
    adc: AddOnDeploymentConfigSpec = {
        "agentInstallNamespace": "default-ns",
        "customizedVariables": variables(key1="value1"),
    }
    got = values(WITHOUT_REGISTRATION, adc)
    assert got.preset == [("CLUSTER_NAME", "test-cluster"), ("INSTALL_NAMESPACE", "default-ns")]
    assert got.public == {
        "CLUSTER_NAME": "test-cluster",
        "INSTALL_NAMESPACE": "default-ns",
        "key1": "value1",
    }
    assert got.private == {INSTALL_NAMESPACE: "default-ns"}


def test_default_value_should_be_overridden() -> None:
    got = values(
        WITH_REGISTRATION, {"customizedVariables": variables(HUB_KUBECONFIG=KUBECONFIG + "-test")}
    )
    assert got.preset == [
        ("HUB_KUBECONFIG", KUBECONFIG + "-test"),
        ("CLUSTER_NAME", "test-cluster"),
    ]
    assert got.public == {"HUB_KUBECONFIG": KUBECONFIG + "-test", "CLUSTER_NAME": "test-cluster"}
    assert got.private == {}


def test_builtin_value_should_not_be_overridden() -> None:
    adc: AddOnDeploymentConfigSpec = {
        "agentInstallNamespace": "default-ns",
        "customizedVariables": variables(
            HUB_KUBECONFIG=KUBECONFIG + "-test", CLUSTER_NAME="cluster1"
        ),
    }
    got = values(WITH_REGISTRATION, adc)
    assert got.preset == [
        ("HUB_KUBECONFIG", KUBECONFIG + "-test"),
        ("CLUSTER_NAME", "test-cluster"),
        ("INSTALL_NAMESPACE", "default-ns"),
    ]
    assert got.public == {
        "HUB_KUBECONFIG": KUBECONFIG + "-test",
        "CLUSTER_NAME": "test-cluster",
        "INSTALL_NAMESPACE": "default-ns",
    }
    assert got.private == {INSTALL_NAMESPACE: "default-ns"}


def test_an_empty_registration_list_still_gives_the_default() -> None:
    """Upstream tests the slice against nil: ``registration: []`` is not nil."""
    spec: AddOnTemplateSpec = {"addonName": "a", "agentSpec": {}, "registration": []}
    assert values(spec, None).preset[0] == ("HUB_KUBECONFIG", KUBECONFIG)


def test_install_namespace_variable_without_config_namespace_renders_but_is_no_env() -> None:
    """A customized ``INSTALL_NAMESPACE`` renders; only the built-in one is injected."""
    got = values(WITHOUT_REGISTRATION, {"customizedVariables": variables(INSTALL_NAMESPACE="mine")})
    assert got.public["INSTALL_NAMESPACE"] == "mine"
    assert got.preset == [("CLUSTER_NAME", "test-cluster")]


def test_private_key_as_customized_variable_is_private() -> None:
    got = values(
        WITHOUT_REGISTRATION, {"customizedVariables": variables(__INSTALL_NAMESPACE="via-variable")}
    )
    assert got.private == {INSTALL_NAMESPACE: "via-variable"}
    assert "__INSTALL_NAMESPACE" not in got.public
    assert got.preset[-1] == ("INSTALL_NAMESPACE", "via-variable")


def cluster(annotation: str | None) -> ManagedCluster:
    meta: dict[str, Any] = {"name": "c1"}
    if annotation is not None:
        meta["annotations"] = {ANNOTATION: annotation}
    return {"metadata": meta}  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(None, {}, id="no values"),
        pytest.param(
            '{"registries-test":[{"mirror-test":"quay.io/ocm","source-test":"quay-test.io/ocm"}]}',
            {},
            id="not expected annotation",
        ),
        pytest.param(
            '{"registries":[{"mirror":"quay.io/ocm","source":"quay-test.io/ocm"}]}',
            {REGISTRIES: [{"source": "quay-test.io/ocm", "mirror": "quay.io/ocm"}]},
            id="override registries",
        ),
        pytest.param(
            '{"registries":[{"mirror":"quay.io/ocm/test","source":"quay.io/open-cluster-management/test"}]}',
            {
                REGISTRIES: [
                    {"source": "quay.io/open-cluster-management/test", "mirror": "quay.io/ocm/test"}
                ]
            },
            id="override image",
        ),
        pytest.param(
            '{"Registries":[{"MIRROR":"m"}]}', {REGISTRIES: [{"mirror": "m"}]}, id="go folds case"
        ),
        pytest.param('{"registries":[]}', {}, id="empty list"),
    ],
)
def test_registries_from_cluster_annotation(
    annotation: str | None, expected: dict[str, object]
) -> None:
    assert registries_from_annotation(cluster(annotation)) == expected


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        ('{"registries":', "unexpected end of JSON input"),
        (
            '{"registries":"x"}',
            "json: cannot unmarshal string into Go struct field ImageRegistries.registries of type []v1beta1.ImageMirror",
        ),
        (
            '{"registries":[{"mirror":1}]}',
            "json: cannot unmarshal number into Go struct field ImageMirror.registries.mirror of type string",
        ),
        ("[]", "json: cannot unmarshal array into Go value of type templateagent.ImageRegistries"),
    ],
)
def test_annotation_invalid(annotation: str, message: str) -> None:
    with pytest.raises(RenderError) as caught:
        registries_from_annotation(cluster(annotation))
    assert str(caught.value) == message


def _image(annotation: str | None, adc: dict[str, Any] | None) -> str:
    containers = [{"name": "c", "image": "quay.io/open-cluster-management/x:v1"}]
    pod = rendered_pod(adc, cluster=cluster(annotation), containers=containers)
    image: str = pod["containers"][0]["image"]
    return image


def test_config_registries_override_the_annotation() -> None:
    annotation = (
        '{"registries":[{"mirror":"from-annotation","source":"quay.io/open-cluster-management"}]}'
    )
    assert _image(annotation, None) == "from-annotation/x:v1"
    config = {
        "registries": [{"mirror": "from-config", "source": "quay.io/open-cluster-management"}]
    }
    assert _image(annotation, config) == "from-config/x:v1"
    # An empty list is a value too (Go's non-nil slice): it replaces the annotation's.
    assert _image(annotation, {"registries": []}) == "quay.io/open-cluster-management/x:v1"
