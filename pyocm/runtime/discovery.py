"""What a server serves, read from its legacy discovery documents.

``GET /api/v1`` and ``/apis/<group>/<version>`` list a group-version's resources (an
``APIResourceList``: plural, kind, scope, verbs; ``plural/sub`` entries are
subresources); ``GET /apis/<group>`` names a group's versions and the preferred one.
kube-apiserver and pyocm's server serve both, and every client understands them
(aggregated discovery, apidiscovery.k8s.io/v2, only saves round trips when reading
every group at once, which the lazy :class:`~pyocm.runtime.restmapper.RESTMapper`
never does). Reads one group-version at a time, as controller-runtime's lazy mapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError


class Requester(Protocol):
    """What discovery needs of a client: :meth:`~pyocm.runtime.client.Api.request`."""

    async def request(self, method: str, target: str) -> Any: ...


@dataclass(frozen=True)
class APIResource:
    """One served resource: its :class:`Kind` (enough to address it), what may be done
    to it, and its subresources (``status``, ``scale``, ...)."""

    kind: Kind
    verbs: frozenset[str]
    subresources: frozenset[str] = frozenset()
    short_names: tuple[str, ...] = ()


def group_version_path(group: str, version: str) -> str:
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


async def resources(api: Requester, *, group: str, version: str) -> dict[str, APIResource] | None:
    """The resources of ``group/version`` by kind, or None when it is not served."""
    document = await _get(api, group_version_path(group, version))
    return None if document is None else parse_resource_list(document, group=group, version=version)


async def preferred_version(api: Requester, *, group: str) -> str | None:
    """The group's preferred version (``v1`` for the core group), None when not served."""
    if not group:
        return "v1"
    document = await _get(api, f"/apis/{group}")
    if document is None:
        return None
    preferred = (document.get("preferredVersion") or {}).get("version")
    versions = [v.get("version") for v in document.get("versions") or []]
    found = preferred or (versions[0] if versions else None)
    return str(found) if found else None


def parse_resource_list(
    document: dict[str, Any], *, group: str, version: str
) -> dict[str, APIResource]:
    """An ``APIResourceList``'s resources by kind. A kind served by two resources keeps
    the first listed, as client-go's mapper prefers the first match."""
    entries = [e for e in document.get("resources") or [] if isinstance(e, dict)]
    subresources: dict[str, set[str]] = {}
    for entry in entries:
        plural, _, sub = str(entry.get("name") or "").partition("/")
        if sub:
            subresources.setdefault(plural, set()).add(sub)
    found: dict[str, APIResource] = {}
    for entry in entries:
        plural, kind = str(entry.get("name") or ""), str(entry.get("kind") or "")
        if "/" in plural or not plural or not kind or kind in found:
            continue
        found[kind] = APIResource(
            kind=Kind(group, version, kind, plural, bool(entry.get("namespaced"))),
            verbs=frozenset(entry.get("verbs") or ()),
            subresources=frozenset(subresources.get(plural, ())),
            short_names=tuple(entry.get("shortNames") or ()),
        )
    return found


async def _get(api: Requester, target: str) -> dict[str, Any] | None:
    try:
        document = await api.request("GET", target)
    except ApiError as err:
        if err.code == 404:
            return None
        raise
    return document if isinstance(document, dict) else None
