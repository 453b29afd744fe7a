"""A caller with no credential at all reads what kube-apiserver lets anyone read (health,
version, ``kube-public/cluster-info``) and nothing else: every resource the hub serves,
with every verb, and discovery, OpenAPI, metrics and watches answer 401."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from pyocm.testing import Client, HubProcess
from tests.security.conftest import Caller, is_unauthorized

CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"])
async def test_health_and_version_are_open(anonymous: Caller, path: str) -> None:
    code, _ = await anonymous.request("GET", path)
    assert code == 200


async def test_cluster_info_is_open_and_holds_no_credential(anonymous: Caller) -> None:
    code, info = await anonymous.request("GET", CLUSTER_INFO)
    assert code == 200
    config = yaml.safe_load(info["data"]["kubeconfig"])
    assert config["clusters"][0]["cluster"]["certificate-authority-data"]
    assert not config.get("users"), "cluster-info tells where the hub is, never how to log in"


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", CLUSTER_INFO, {"watch": "true"}),
        ("GET", "/api/v1/namespaces/kube-public/configmaps", {}),
        ("GET", "/api/v1/namespaces/kube-public/configmaps", {"watch": "true"}),
        ("GET", "/api/v1/watch/namespaces/kube-public/configmaps/cluster-info", {}),
        ("HEAD", CLUSTER_INFO, {}),
        ("PUT", CLUSTER_INFO, {}),
        ("PATCH", CLUSTER_INFO, {}),
        ("DELETE", CLUSTER_INFO, {}),
        ("POST", "/api/v1/namespaces/kube-public/configmaps", {}),
        ("GET", "/api/v1/namespaces/kube-public", {}),
    ],
    ids=lambda v: str(v) if not isinstance(v, dict) else "&".join(v) or "-",
)
async def test_only_reading_cluster_info_is_open(
    anonymous: Caller, method: str, path: str, params: dict[str, str]
) -> None:
    """Anonymous access to cluster-info is one GET of one object: not a watch of it, not
    its siblings, not a write."""
    body = {} if method in ("PUT", "PATCH", "POST") else None
    kind = "application/merge-patch+json" if method == "PATCH" else "application/json"
    code, answer = await anonymous.request(
        method, path, params=params, body=body, content_type=kind
    )
    if method == "HEAD":
        assert code == 401
    elif code == 403:  # RBAC, as kube, may refuse system:anonymous a watch of the one object
        assert params.get("watch") and answer["reason"] == "Forbidden"
    else:
        assert is_unauthorized(code, answer), (code, answer)


NON_RESOURCE = [
    "/",
    "/api",
    "/api/v1",
    "/apis",
    "/apis/cluster.open-cluster-management.io",
    "/apis/cluster.open-cluster-management.io/v1",
    "/apis/rbac.authorization.k8s.io/v1",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/openapi/v3/apis/cluster.open-cluster-management.io/v1",
    "/metrics",
    "/logs",
    "/no/such/path",
]


@pytest.mark.parametrize("path", NON_RESOURCE)
async def test_discovery_openapi_and_metrics_are_refused(anonymous: Caller, path: str) -> None:
    code, body = await anonymous.request("GET", path)
    assert is_unauthorized(code, body), (code, body)


async def _served_resources(admin: Client) -> list[tuple[str, dict[str, Any]]]:
    """(group-version path, APIResource) for every resource and subresource the hub serves."""
    code, core = await admin.get("/api/v1")
    assert code == 200
    found = [("/api/v1", r) for r in core["resources"]]
    code, groups = await admin.get("/apis")
    assert code == 200
    for group in groups["groups"]:
        for version in group["versions"]:
            base = f"/apis/{version['groupVersion']}"
            code, listed = await admin.get(base)
            assert code == 200, base
            found.extend((base, r) for r in listed["resources"])
    return found


def _requests(base: str, resource: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    name, _, sub = resource["name"].partition("/")
    scope = f"{base}/namespaces/default/{name}" if resource["namespaced"] else f"{base}/{name}"
    one = f"{scope}/some-name"
    if sub:
        target = f"{one}/{sub}"
        return [(m, target, {}) for m in ("GET", "POST", "PUT", "PATCH")]
    found = [
        ("GET", scope, {}),
        ("GET", scope, {"watch": "true"}),
        ("GET", f"{base}/watch/{scope.removeprefix(base + '/')}", {}),
        ("GET", scope, {"fieldSelector": "metadata.name=some-name"}),
        ("POST", scope, {}),
        ("DELETE", scope, {}),
        ("GET", one, {}),
        ("PUT", one, {}),
        ("PATCH", one, {}),
        ("DELETE", one, {}),
    ]
    if resource["namespaced"]:  # across all namespaces too
        found += [("GET", f"{base}/{name}", {}), ("GET", f"{base}/{name}", {"watch": "true"})]
    return found


async def test_every_served_resource_and_verb_is_refused(
    hub: HubProcess, admin: Client, anonymous: Caller
) -> None:
    """Walk discovery as the admin, then try each resource, subresource and verb without
    a credential (namespaced ones in ``default`` and across namespaces)."""
    served = await _served_resources(admin)
    assert {"managedclusters", "secrets", "certificatesigningrequests", "clusterroles"} <= {
        r["name"] for _, r in served
    }
    tried, served_anyway = 0, []
    for base, resource in served:
        for method, path, params in _requests(base, resource):
            body = {} if method in ("PUT", "PATCH", "POST") else None
            kind = "application/merge-patch+json" if method == "PATCH" else "application/json"
            code, answer = await anonymous.request(
                method, path, params=params, body=body, content_type=kind
            )
            tried += 1
            if not is_unauthorized(code, answer):
                served_anyway.append((method, path, params, code))
    assert tried > 300
    assert served_anyway == []
