"""A template of one Deployment, rendered: the pod spec the decorators produced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.addon.template.render import render_manifests


def rendered_pod(
    adc: dict[str, Any] | None, *, cluster: Mapping[str, Any] | None = None, **pod: Any
) -> dict[str, Any]:
    """``pod`` (one container ``c`` by default) in Deployment ``ns/d`` of add-on ``a``,
    rendered for ``cluster`` (``c1``) with deployment config ``adc``."""
    spec = {
        "addonName": "a",
        "agentSpec": {
            "workload": {
                "manifests": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "d", "namespace": "ns"},
                        "spec": {
                            "template": {
                                "spec": {"containers": [{"name": "c", "image": "i"}], **pod}
                            }
                        },
                    }
                ]
            }
        },
    }
    [deployment, *_] = render_manifests(
        addon_name="a",
        template_spec=spec,
        cluster=cluster or {"metadata": {"name": "c1"}},
        deployment_config=adc,
    )
    result: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return result
