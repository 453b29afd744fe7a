"""Which resources the server serves right now, for routing and discovery.

Built-in resources are registered at start; CustomResourceDefinitions add and remove
theirs as they are established or deleted. Lookups are by group, version and plural
(the URL), with the version order Kubernetes uses for discovery (GA before beta before
alpha, higher numbers first).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pyocm.apiserver.registry.resources import ResourceInfo

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key: GA versions first, then beta, then alpha; higher numbers first; then
    versions that do not look like Kubernetes versions, alphabetically."""
    match = _VERSION.match(version)
    if not match:
        return (3, 0, 0, version)
    major = int(match.group(1))
    level = {"": 0, None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (level, -major, -minor, "")


class Catalog:
    def __init__(self) -> None:
        self._by_url: dict[tuple[str, str, str], ResourceInfo] = {}
        #: Preferred-version order per group, as a CRD lists it; built-ins sorted.
        self._group_order: dict[str, list[str]] = {}
        self._owner: dict[tuple[str, str, str], str] = {}
        self.generation = 0

    def add(self, info: ResourceInfo, *, owner: str = "") -> None:
        key = (info.group, info.version, info.plural)
        self._by_url[key] = info
        self._owner[key] = owner
        versions = self._group_order.setdefault(info.group, [])
        if info.version not in versions:
            versions.append(info.version)
            versions.sort(key=version_priority)
        self.generation += 1

    def remove_owned_by(self, owner: str) -> list[ResourceInfo]:
        """Drop every resource registered by ``owner`` (a CRD name)."""
        gone = [self._by_url[k] for k, o in self._owner.items() if o == owner]
        for info in gone:
            key = (info.group, info.version, info.plural)
            del self._by_url[key]
            del self._owner[key]
        self._prune_groups()
        self.generation += 1
        return gone

    def _prune_groups(self) -> None:
        live = {(g, v) for (g, v, _) in self._by_url}
        for group, versions in list(self._group_order.items()):
            versions[:] = [v for v in versions if (group, v) in live]
            if not versions:
                del self._group_order[group]

    def get(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        return self._by_url.get((group, version, plural))

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._group_order.get(group, [])

    def groups(self) -> list[str]:
        """Every named group (not the core group), in a stable order."""
        return sorted(g for g in self._group_order if g)

    def versions(self, group: str) -> list[str]:
        return list(self._group_order.get(group, []))

    def resources(self, group: str, version: str) -> list[ResourceInfo]:
        return sorted(
            (i for (g, v, _), i in self._by_url.items() if g == group and v == version),
            key=lambda i: i.plural,
        )

    def all(self) -> Iterable[ResourceInfo]:
        return list(self._by_url.values())

    def by_kind(self, group: str, kind: str) -> list[ResourceInfo]:
        """Every served version of ``kind`` in ``group``, preferred first."""
        found = [i for (g, _, _), i in self._by_url.items() if g == group and i.kind == kind]
        order = self._group_order.get(group, [])
        return sorted(found, key=lambda i: order.index(i.version) if i.version in order else 99)
