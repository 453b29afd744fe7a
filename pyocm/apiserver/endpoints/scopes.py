"""Read scopes: objects a caller may see only when they carry its label.

Kubernetes RBAC cannot say "the CSRs of my own cluster": CSRs are cluster-scoped and a
role grants all of them or named ones. Upstream OCM grants each cluster agent
get/list/watch on every CSR, so agent A could read cluster B's requests. A pyocm hub
confines a cluster agent (client certificate ``system:open-cluster-management:<c>:<agent>``
in group ``system:open-cluster-management:<c>``) to CSRs labelled
``open-cluster-management.io/cluster-name=<c>``. Upstream agents already list with
exactly that selector, so they see no difference (issue 4: "an agent of cluster A can
read nothing of cluster B").
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.kube import status

AGENT_PREFIX = "system:open-cluster-management:"
CLUSTER_LABEL = "open-cluster-management.io/cluster-name"
_SCOPED = {("certificates.k8s.io", "certificatesigningrequests")}


def agent_cluster(user: UserInfo) -> str | None:
    """The cluster whose agent ``user`` is, or None."""
    if user.is_superuser() or not user.name.startswith(AGENT_PREFIX):
        return None
    parts = user.name[len(AGENT_PREFIX) :].split(":")
    if len(parts) != 2 or not all(parts):
        return None
    cluster = parts[0]
    return cluster if f"{AGENT_PREFIX}{cluster}" in user.groups else None


def read_scope(info: ResourceInfo, user: UserInfo) -> str:
    if (info.group, info.plural) not in _SCOPED:
        return ""
    cluster = agent_cluster(user)
    return f"{CLUSTER_LABEL}={cluster}" if cluster else ""


def in_scope(obj: dict[str, Any], scope: str) -> bool:
    key, _, value = scope.partition("=")
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(key) == value)


def forbidden(info: ResourceInfo, user: UserInfo, verb: str, name: str) -> status.ApiError:
    resource = status.qualified(info.plural, info.group)
    return status.forbidden_error(
        message=f'{resource} "{name}" is forbidden: User "{user.name}" cannot {verb} resource '
        f'"{info.plural}" in API group "{info.group}" outside its own cluster',
        resource=info.plural,
        group=info.group,
        name=name,
    )
