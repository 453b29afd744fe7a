"""List and watch one kind into a :class:`~pyocm.runtime.cache.Store`, and tell handlers.

The loop is client-go's reflector: list (every page) and replace the cache, then watch
from the list's resourceVersion, applying events and remembering the newest version
seen (bookmarks included). When the watch ends, or its connection breaks or is refused
(a server restarting, a replica gone behind a shared address), it is reopened from
there after a pause: the server replays every change since, deletions included, so a
fleet whose server went away resumes instead of relisting, one LIST per informer at
once (client-go's reflector re-watches from its last version in these cases too). When
the version is too old (410 Gone) or the server refuses the watch, the informer lists
again and *diffs* the new list against the cache, so handlers hear about objects added,
changed and deleted while it was not watching.

Handlers run synchronously in the informer's task; they are meant to map an object
to work-queue keys and return, never to call the API.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyocm.base.backoff import Backoff
from pyocm.base.clock import Clock, RealClock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.cache import IndexFunc, Store, key_of
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

Obj = dict[str, Any]
log = logging.getLogger(__name__)
#: Longest wait between failed lists: access granted a moment later (RBAC) must not
#: leave a cache empty for long.
MAX_BACKOFF = 5.0
#: Pauses between failed lists: 0.2 s doubling up to MAX_BACKOFF.
RELIST_BACKOFF = Backoff(duration=0.2, cap=MAX_BACKOFF)


@dataclass(frozen=True)
class Change:
    """What happened to one object: ``old`` is None when added, ``new`` when deleted."""

    old: Obj | None
    new: Obj | None

    @property
    def obj(self) -> Obj:
        found = self.new if self.new is not None else self.old
        assert found is not None
        return found


Handler = Callable[[Change], None]


class Informer:
    def __init__(
        self,
        api: Api,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
        resync: float | None = None,
        clock: Clock | None = None,
        watch_timeout: int = 300,
        quiet_failures: int = 2,
    ) -> None:
        self.api = api
        #: Consecutive failures logged at INFO before they become warnings (an agent
        #: whose access the hub is still granting expects a few more than most).
        self.quiet_failures = quiet_failures
        self.kind = kind
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.store = Store()
        self._resync = resync
        self._clock = clock or RealClock()
        self._watch_timeout = watch_timeout
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._version: str | None = None
        #: Consecutive failures to list or watch: the pause before the next attempt.
        self._failures = 0

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler`` for every change from now on, after a replay of the cache."""
        self._handlers.append(handler)
        for obj in self.store.objects():
            handler(Change(None, obj))

    def add_index(self, name: str, func: IndexFunc) -> Informer:
        """File the cache's objects under ``func(obj)`` in index ``name``; return self.

        Controllers sharing this informer may each ask for the same index: a name
        means one function, so a second request for a name is a no-op. Read it with
        ``informer.store.by_index(name, value)`` or ``index_keys``."""
        if not self.store.has_index(name):
            self.store.add_index(name, func)
        return self

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    async def run(self) -> None:
        """List and watch until cancelled."""
        resync = asyncio.create_task(self._resync_loop()) if self._resync else None
        listed = False
        try:
            while True:
                try:
                    if not listed:
                        await self._list()
                        listed, self._failures = True, 0
                    await self._watch_until_broken()
                except ApiError as err:
                    listed = False
                    if err.code != 410:
                        self._failures += 1
                        log.log(self._level(), "%s: %s; listing again", self.kind, err.message)
                except ApiConnectionError as err:
                    # The server went away: once listed, watch again from the version
                    # last seen (a relist would be one LIST per informer, all at once).
                    self._failures += 1
                    log.log(self._level(), "%s: %s", self.kind, err)
                if self._failures:
                    await self._clock.sleep(RELIST_BACKOFF.delay(self._failures - 1))
        finally:
            if resync is not None:
                resync.cancel()

    def _level(self) -> int:
        """A failure or two is routine (RBAC granted a moment later, a server
        restarting); more is news."""
        return logging.WARNING if self._failures > self.quiet_failures else logging.INFO

    async def _list(self) -> None:
        listed = await self.api.list_all(
            self.kind, namespace=self.namespace, labels=self.labels, fields=self.fields
        )
        fresh = {key_of(obj): obj for obj in listed.get("items") or []}
        for key in self.store:
            if key not in fresh:
                self._apply("DELETED", self.store.get(key) or {})
        for obj in fresh.values():
            self._apply("MODIFIED", obj)
        self._version = str(listed["metadata"]["resourceVersion"])
        self._synced.set()

    async def _watch_until_broken(self) -> None:
        """Watch from the last version seen, reopening when the server ends a stream."""
        while True:
            async for event_type, obj in self.api.watch(
                self.kind,
                namespace=self.namespace,
                labels=self.labels,
                fields=self.fields,
                resource_version=self._version,
                # Between one and two timeouts, as client-go's reflector picks: a fleet of
                # agents that started together does not re-watch together ever after.
                timeout_seconds=int(self._watch_timeout * (1 + random.random())),
            ):
                self._failures = 0  # the watch works again
                if event_type != "BOOKMARK":
                    self._apply(event_type, obj)
                version = (obj.get("metadata") or {}).get("resourceVersion")
                if version:
                    self._version = str(version)

    def _apply(self, event_type: str, obj: Obj) -> None:
        if event_type == "DELETED":
            old = self.store.delete(key_of(obj))
            change = Change(old if old is not None else obj, None)
        else:
            held = self.store.get(key_of(obj))
            if held is not None and _version(held) == _version(obj):
                return  # a relist returned what the cache already holds
            old = self.store.upsert(obj)
            change = Change(old, obj)
        for handler in self._handlers:
            try:
                handler(change)
            except Exception:
                log.exception("%s: a handler failed on %s", self.kind, key_of(change.obj))

    async def _resync_loop(self) -> None:
        assert self._resync
        while True:
            await self._clock.sleep(self._resync)
            for obj in self.store.objects():
                for handler in self._handlers:
                    handler(Change(obj, obj))


def _version(obj: Obj) -> str | None:
    version = (obj.get("metadata") or {}).get("resourceVersion")
    return str(version) if version is not None else None
