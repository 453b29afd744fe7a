"""The seed's example renders to the seed's agent Deployment (seed 003's test plan: render
``addon-template.yaml`` with ``addon-deployment-config.yaml`` for ``cluster1`` and compare
with ``agent-deployment-output.yaml`` field by field).

The seed files are read from the shared directory, never copied into the repository.
The config is taken as the API server stores it: the CRD's default for
``agentInstallNamespace`` (``open-cluster-management-agent-addon``) is applied, read from
the upstream CRD, which is why the seed shows the ``INSTALL_NAMESPACE`` env.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.addon.template.render import render_manifests
from tests.reference import shared, shared_files

EXAMPLES = ("seeds", "addon-template-examples")
ADC_CRD = shared_files(
    "reference", "ocm-crds", pattern="addon-v1beta1-*addondeploymentconfigs.crd.yaml"
)[0]


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _stored_config() -> dict[str, Any]:
    """The example's config spec with the CRD's default namespace, as stored."""
    spec: dict[str, Any] = _load(shared(*EXAMPLES, "addon-deployment-config.yaml"))["spec"]
    served = next(v for v in _load(ADC_CRD)["spec"]["versions"] if v["storage"])
    props = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec.setdefault("agentInstallNamespace", props["agentInstallNamespace"]["default"])
    return spec


def _rendered() -> list[dict[str, Any]]:
    template = _load(shared(*EXAMPLES, "addon-template.yaml"))
    return render_manifests(
        addon_name=template["spec"]["addonName"],
        template_spec=template["spec"],
        cluster={"metadata": {"name": "cluster1"}},
        deployment_config=_stored_config(),
    )


def _expected_as_upstream_renders() -> dict[str, Any]:
    """``agent-deployment-output.yaml`` turned into what upstream's code renders; every
    change is a difference between the hand-written file and upstream's renderer:

    - ``spec.template.spec.serviceAccount``: the file shows the deprecated field, which a
      Kubernetes API server fills in from ``serviceAccountName`` when it serves the pod
      template; upstream's renderer does not write it. Dropped.
    - ``volumes[*].secret.defaultMode: 420``: the API server's default for a secret
      volume; upstream's volume decorator sets no mode. Dropped.
    - ``metadata.creationTimestamp: null`` and ``spec.template.metadata.creationTimestamp:
      null``, ``spec.strategy: {}``, ``status: {}`` and the container's ``resources: {}``:
      upstream decorates the Deployment as Go's typed ``appsv1.Deployment`` and converts
      it back, which writes these zero values. Added.

    The env order (``HUB_KUBECONFIG``, then ``CLUSTER_NAME``, ``INSTALL_NAMESPACE``), the
    two volumes and mounts and every rendered argument are the file's as written. Key
    order inside maps is not a difference: the comparison is of values.
    """
    expected: dict[str, Any] = copy.deepcopy(
        _load(shared(*EXAMPLES, "agent-deployment-output.yaml"))
    )
    pod = expected["spec"]["template"]["spec"]
    del pod["serviceAccount"]
    for volume in pod["volumes"]:
        del volume["secret"]["defaultMode"]
    expected["metadata"]["creationTimestamp"] = None
    expected["spec"]["template"]["metadata"]["creationTimestamp"] = None
    expected["spec"]["strategy"] = {}
    expected["status"] = {}
    for container in pod["containers"]:
        container["resources"] = {}
    return expected


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf by its path (``spec.template.spec.containers[0].env[1].value``), so a
    mismatch names the field; empty maps and lists are leaves."""
    if isinstance(value, dict) and value:
        return {
            k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}").items()
        }
    if isinstance(value, list) and value:
        return {
            k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()
        }
    return {path: value}


def test_deployment_matches_the_seed_output_field_by_field() -> None:
    deployment = _rendered()[0]
    assert _leaves(deployment) == _leaves(_expected_as_upstream_renders())


def test_the_seed_differences_are_only_the_documented_ones() -> None:
    """The file's fields upstream does not render are exactly the three API-server
    defaults the first test's docstring lists; nothing else of the file is missing."""
    rendered = _leaves(_rendered()[0])
    written = _leaves(_load(shared(*EXAMPLES, "agent-deployment-output.yaml")))
    missing = {path for path in written if rendered.get(path, object()) != written[path]}
    assert missing == {
        ".spec.template.spec.serviceAccount",
        ".spec.template.spec.volumes[0].secret.defaultMode",
        ".spec.template.spec.volumes[1].secret.defaultMode",
    }


def test_other_manifests_follow_in_the_template_order() -> None:
    objects = _rendered()
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Deployment", "hello-template-agent"),
        ("ServiceAccount", "hello-template-agent-sa"),
        ("ClusterRoleBinding", "hello-template-agent"),
    ]
    # Not workloads: nothing added, not even the zero values of a typed round trip.
    assert objects[1] == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": "hello-template-agent-sa",
            "namespace": "open-cluster-management-agent-addon",
        },
    }
