"""Kinds the code does not name, mapped through discovery: GVK to resource and scope.

The static constants of :mod:`pyocm.kube.kinds` and :mod:`pyocm.api.kinds` stay the
fast path for the kinds pyocm's own code addresses. A work agent applying whatever a ManifestWork carries, CRDs
included, asks a :class:`RESTMapper` instead::

    mapper = RESTMapper(api)
    kind = await mapper.kind_for(api_version="apps/v1", kind="Deployment")
    await api.apply(kind, deployment, field_manager="work-agent")

Like controller-runtime's lazy mapper, it reads one group-version when first asked
and caches it. Like client-go's deferred mapper, a kind missing from the cache reads
its group-version once more, so a CRD created after the first read is found without a
restart; re-reads of one group-version are at least ``min_refresh_interval`` apart, so
a controller retrying an unknown kind does not hammer discovery. :meth:`invalidate`
drops what is cached (a CRD informer's handler may call it on every change).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from pyocm.base.clock import Clock, RealClock
from pyocm.kube.kinds import Kind
from pyocm.runtime import discovery
from pyocm.runtime.discovery import APIResource, Requester

_K = TypeVar("_K", bound=Hashable)


class NoKindMatchError(LookupError):
    """The server serves no such kind (client-go's ``meta.NoKindMatchError``)."""

    def __init__(self, *, group: str, version: str, kind: str) -> None:
        api_version = f"{group}/{version}" if group else version
        super().__init__(f'no matches for kind "{kind}" in version "{api_version}"')
        self.group, self.version, self.kind = group, version, kind


@dataclass(frozen=True, eq=False)
class _Read:
    """One read of a discovery document, and when (monotonic) it was made."""

    at: float
    resources: dict[str, APIResource] = field(default_factory=dict)
    preferred: str | None = None


class RESTMapper:
    """GVK to :class:`APIResource` through one server's discovery, cached and refreshed
    on misses. Safe to share between tasks: concurrent misses share one read."""

    def __init__(
        self, api: Requester, *, clock: Clock | None = None, min_refresh_interval: float = 1.0
    ) -> None:
        self._api = api
        self._clock = clock or RealClock()
        self._interval = min_refresh_interval
        self._versions: dict[tuple[str, str], _Read] = {}
        self._groups: dict[str, _Read] = {}
        self._locks: dict[object, asyncio.Lock] = {}

    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        """The :class:`Kind` (plural, scope) of ``kind`` in ``api_version``; raises
        :class:`NoKindMatchError` when the server does not serve it."""
        return (await self.resource_for(api_version=api_version, kind=kind)).kind

    async def resource_for(self, *, api_version: str, kind: str) -> APIResource:
        """As :meth:`kind_for`, with the resource's verbs and subresources."""
        group, _, version = api_version.rpartition("/")
        read = await self._version(group, version, stale=None)
        if kind not in read.resources and self._may_refresh(read):
            read = await self._version(group, version, stale=read)
        if kind not in read.resources:
            raise NoKindMatchError(group=group, version=version, kind=kind)
        return read.resources[kind]

    async def preferred_kind(self, *, group: str, kind: str) -> Kind:
        """``kind`` in its group's preferred version (for a kind named without one)."""
        version = await self.preferred_version(group)
        return await self.kind_for(
            api_version=f"{group}/{version}" if group else version, kind=kind
        )

    async def preferred_version(self, group: str) -> str:
        """The version the server prefers for ``group`` (``v1`` for the core group)."""
        read = await self._group(group, stale=None)
        if read.preferred is None and self._may_refresh(read):
            read = await self._group(group, stale=read)
        if read.preferred is None:
            raise NoKindMatchError(group=group, version="", kind="")
        return read.preferred

    def invalidate(self, *, group: str | None = None) -> None:
        """Forget what was read (of one group, or all): the next lookup reads again."""
        if group is None:
            self._versions.clear()
            self._groups.clear()
            return
        self._groups.pop(group, None)
        for key in [k for k in self._versions if k[0] == group]:
            del self._versions[key]

    def _may_refresh(self, read: _Read) -> bool:
        return self._clock.monotonic() - read.at >= self._interval

    async def _version(self, group: str, version: str, *, stale: _Read | None) -> _Read:
        """The cached read of ``group/version``, read (again) when missing or ``stale``."""

        async def read() -> _Read:
            found = await discovery.resources(self._api, group=group, version=version)
            return _Read(self._clock.monotonic(), resources=found or {})

        return await self._cached(self._versions, (group, version), stale=stale, read=read)

    async def _group(self, group: str, *, stale: _Read | None) -> _Read:
        async def read() -> _Read:
            preferred = await discovery.preferred_version(self._api, group=group)
            return _Read(self._clock.monotonic(), preferred=preferred)

        return await self._cached(self._groups, group, stale=stale, read=read)

    async def _cached(
        self,
        cache: dict[_K, _Read],
        key: _K,
        *,
        stale: _Read | None,
        read: Callable[[], Awaitable[_Read]],
    ) -> _Read:
        """``cache[key]``, read when missing or ``stale``; tasks missing together share
        one read (the second finds the first's under the lock)."""
        found = cache.get(key)
        if found is not None and found is not stale:
            return found
        async with self._lock(key):
            found = cache.get(key)
            if found is None or found is stale:
                found = cache[key] = await read()
        return found

    def _lock(self, key: object) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())
