"""Legacy discovery documents: ``/api``, ``/api/v1``, ``/apis``, ``/apis/<g>``, ``/apis/<g>/<v>``.

Clients that ask for aggregated discovery (apidiscovery.k8s.io/v2) also accept these and
fall back to one request per group-version.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from pyocm.apiserver.endpoints import responses
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.state import ServerState
from pyocm.kube import status


def handles(path: str) -> bool:
    return path == "/api" or path == "/apis" or path.startswith(("/api/", "/apis/"))


async def serve(request: web.Request, state: ServerState, path: str) -> web.StreamResponse:
    if request.method not in ("GET", "HEAD"):
        raise status.method_not_allowed(request.method, "")
    parts = path.strip("/").split("/")
    catalog = state.catalog
    if parts == ["api"]:
        return responses.json_response(_api_versions(request))
    if parts == ["apis"]:
        return responses.json_response(group_list(catalog))
    if len(parts) == 2 and parts[0] == "api":
        return _resource_list(catalog, "", parts[1])
    if len(parts) == 2:
        if parts[1] not in catalog.groups():
            raise status.path_not_found()
        return responses.json_response(_group(catalog, parts[1]))
    if len(parts) == 3 and parts[0] == "apis":
        return _resource_list(catalog, parts[1], parts[2])
    raise status.path_not_found()


def _api_versions(request: web.Request) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": request.host}],
    }


def _group(catalog: Catalog, group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in catalog.versions(group)]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def group_list(catalog: Catalog) -> dict[str, Any]:
    groups = [
        {k: v for k, v in _group(catalog, g).items() if k not in ("kind", "apiVersion")}
        for g in catalog.groups()
    ]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _resource_list(catalog: Catalog, group: str, version: str) -> web.Response:
    if not catalog.has_group_version(group, version):
        raise status.path_not_found()
    gv = f"{group}/{version}" if group else version
    resources: list[dict[str, Any]] = []
    for info in catalog.resources(group, version):
        resources.append(_entry(info))
        resources.extend(_subresource_entry(info, sub.name) for sub in info.subresources)
    return responses.json_response(
        {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
    )


def _entry(info: ResourceInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    return entry


def _subresource_entry(info: ResourceInfo, name: str) -> dict[str, Any]:
    sub = info.subresource(name)
    assert sub is not None
    entry: dict[str, Any] = {
        "name": f"{info.plural}/{sub.name}",
        "singularName": "",
        "namespaced": info.namespaced,
        "kind": sub.kind or info.kind,
        "verbs": list(sub.verbs),
    }
    if sub.group:
        entry["group"] = sub.group
    if sub.version:
        entry["version"] = sub.version
    return entry
