"""Which template and deployment config an MCA runs with, and which MCAs and CMAs are
template ones (upstream's FilterTemplateBasedAddOns and SupportAddOnTemplate)."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.template import refs
from pyocm.addon.template.agent import registries_changed, workload_namespace
from pyocm.runtime.cache import Store

GROUP = "addon.open-cluster-management.io"


def ref(resource: str, name: str, spec_hash: str, namespace: str = "") -> dict[str, Any]:
    desired = {"name": name, "specHash": spec_hash}
    if namespace:
        desired["namespace"] = namespace
    return {"group": GROUP, "resource": resource, "desiredConfig": desired}


def mca(*config_refs: dict[str, Any]) -> Any:
    return {
        "metadata": {"name": "hello", "namespace": "c1"},
        "status": {"configReferences": list(config_refs)},
    }


def test_template_based_needs_a_template_reference_with_a_spec_hash() -> None:
    assert refs.template_based(mca(ref("addontemplates", "t", "h")))
    assert not refs.template_based(mca(ref("addontemplates", "t", "")))
    assert not refs.template_based(mca(ref("addondeploymentconfigs", "t", "h", "ns")))
    assert not refs.template_based(mca())


def test_a_cma_supports_templates_when_its_defaults_name_the_kind() -> None:
    cma: Any = {
        "metadata": {"name": "a"},
        "spec": {
            "defaultConfigs": [
                {"group": GROUP, "resource": "addontemplates", "name": "__reserved_no_default__"}
            ]
        },
    }
    assert refs.supports_templates(cma)
    assert not refs.supports_templates({"metadata": {"name": "a"}, "spec": {}})  # type: ignore[typeddict-item]
    assert not refs.supports_templates(None)


def test_the_deployment_config_in_effect() -> None:
    configs = Store()
    configs.upsert(
        {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"agentInstallNamespace": "x"}}
    )
    assert refs.deployment_config(configs, mca()) is None
    found = refs.deployment_config(configs, mca(ref("addondeploymentconfigs", "c", "h", "ns")))
    assert found == {"agentInstallNamespace": "x"}
    with pytest.raises(
        refs.TemplateError, match=r"^addon hello deployment config desired spec hash is empty$"
    ):
        refs.deployment_config(configs, mca(ref("addondeploymentconfigs", "c", "", "ns")))
    with pytest.raises(refs.TemplateError) as gone:
        refs.deployment_config(configs, mca(ref("addondeploymentconfigs", "d", "h", "ns")))
    assert (
        str(gone.value) == 'addondeploymentconfigs.addon.open-cluster-management.io "d" not found'
    )


def test_the_template_in_effect_and_its_errors() -> None:
    templates = Store()
    templates.upsert({"metadata": {"name": "t"}, "spec": {"addonName": "hello"}})
    found: Any = refs.addon_template(templates, mca(ref("addontemplates", "t", "h")))
    assert found["spec"] == {"addonName": "hello"}
    with pytest.raises(refs.TemplateError, match=r"^addon c1/hello template not found in status$"):
        refs.addon_template(templates, mca())


def test_the_workload_namespace_is_the_first_deployments_else_daemonsets() -> None:
    def template(*manifests: dict[str, Any]) -> Any:
        return {"spec": {"agentSpec": {"workload": {"manifests": list(manifests)}}}}

    def obj(kind: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": "x", "namespace": namespace},
        }

    assert workload_namespace(template(obj("DaemonSet", "ds"), obj("Deployment", "dep"))) == "dep"
    assert workload_namespace(template(obj("DaemonSet", "ds"), obj("DaemonSet", "ds2"))) == "ds"
    assert (
        workload_namespace(
            template(
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {"name": "a", "namespace": "sa"},
                }
            )
        )
        == ""
    )


def test_apps_workloads_of_any_version_name_the_namespace() -> None:
    manifest = {"apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": {"namespace": "x"}}
    template: Any = {"spec": {"agentSpec": {"workload": {"manifests": [manifest]}}}}
    assert workload_namespace(template) == "x"


def test_only_the_registries_annotation_re_renders() -> None:
    def cluster(**annotations: str) -> Any:
        return {"metadata": {"name": "c1", "annotations": annotations}}

    key = "open-cluster-management.io/image-registries"
    assert registries_changed(cluster(), cluster(**{key: "{}"}))
    assert not registries_changed(cluster(other="1"), cluster(other="2"))
