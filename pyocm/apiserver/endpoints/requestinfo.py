"""Parse a request path and method into Kubernetes' RequestInfo.

Follows apiserver's ``RequestInfoFactory``: ``/api/v1/...`` and ``/apis/<group>/<version>/...``
are resource requests; everything else is a non-resource request whose verb is the
lower-cased HTTP method. A Namespace object's namespace is its own name, and list/watch
requests pinned to one object with ``fieldSelector=metadata.name=X`` carry that name so
RBAC ``resourceNames`` rules apply to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyocm.kube import selectors

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def truthy(value: str | None) -> bool:
    """apimachinery boolean query parameters (``Convert_Slice_string_To_bool``): only
    "0" and "false" in any case are false; any other value, empty included, is true."""
    if value is None:
        return False
    return value != "0" and value.lower() != "false"


@dataclass(frozen=True)
class RequestInfo:
    path: str
    verb: str
    resource_request: bool
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    #: The path segments after the resource (resource, name, subresource, ...).
    parts: tuple[str, ...] = ()


def parse(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    segments = [s for s in path.strip("/").split("/") if s]
    method = method.upper()
    http_verb = method.lower()
    if not segments or segments[0] not in ("api", "apis"):
        return RequestInfo(path=path, verb=http_verb, resource_request=False)
    prefix = segments[0]
    rest = segments[1:]
    if prefix == "api":
        if not rest:
            return RequestInfo(path=path, verb=http_verb, resource_request=False)
        group, version, rest = "", rest[0], rest[1:]
    else:
        if len(rest) < 2:
            return RequestInfo(path=path, verb=http_verb, resource_request=False)
        group, version, rest = rest[0], rest[1], rest[2:]
    if not rest:
        return RequestInfo(path=path, verb=http_verb, resource_request=False)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = _verb(method, name=name, query=query)
    if verb in ("list", "watch") and not name:
        name = _pinned_name(query)
    return RequestInfo(
        path=path,
        verb=verb,
        resource_request=True,
        api_prefix=prefix,
        api_group=group,
        api_version=version,
        namespace=namespace,
        resource=resource,
        subresource=subresource,
        name=name,
        parts=tuple(rest),
    )


def _verb(method: str, *, name: str, query: Mapping[str, str]) -> str:
    if method in ("GET", "HEAD"):
        if truthy(query.get("watch")) if "watch" in query else False:
            return "watch"
        return "get" if name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return method.lower()


def _pinned_name(query: Mapping[str, str]) -> str:
    raw = query.get("fieldSelector")
    if not raw:
        return ""
    try:
        return selectors.parse_field_selector(raw).pinned_value("metadata.name") or ""
    except ValueError:
        return ""
