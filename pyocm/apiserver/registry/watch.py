"""Watch semantics over the storage event stream.

Turns storage events for a resource prefix into Kubernetes watch events for one client:
selectors applied with transitions (an object that starts matching arrives as ADDED,
one that stops matching as DELETED), the resourceVersion rules ("" and "0" start with
the current state as ADDED events; "N" replays what followed N), and the WatchList
handshake (``sendInitialEvents``) ending the initial state with a bookmark annotated
``k8s.io/initial-events-end``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.registry import codec, errors, watchlag
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import Store, pinned_name
from pyocm.apiserver.storage import errors as storage_errors
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.kube import status
from pyocm.kube.selectors import FieldSelector, LabelSelector

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
#: How long a watch from a future revision waits for the store to catch up (as the
#: watch cache does) before answering 504 ResourceVersionTooLarge.
FUTURE_WAIT_SECONDS = 3.0


@dataclass(frozen=True)
class WatchEvent:
    type: str
    object: Obj


@dataclass(frozen=True)
class WatchRequest:
    info: ResourceInfo
    namespace: str
    labels: LabelSelector | None
    fields: FieldSelector | None
    resource_version: str
    send_initial_events: bool


async def start_revision(store: Store, request: WatchRequest) -> int:
    """Validate the requested resourceVersion before the stream starts (errors here are
    HTTP errors, errors later are ERROR events)."""
    rv = request.resource_version
    if rv in ("", "0"):
        return -1
    try:
        wanted = int(rv)
    except ValueError:
        raise status.bad_request(
            f'resourceVersion: Invalid value: "{rv}": must be a non-negative integer'
        ) from None
    if wanted < 0:
        raise status.bad_request(
            f'resourceVersion: Invalid value: "{rv}": must be a non-negative integer'
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FUTURE_WAIT_SECONDS
    while wanted > store.backend.current_revision():
        if loop.time() >= deadline:
            raise errors.translate(
                storage_errors.FutureRevision(
                    requested=wanted, current=store.backend.current_revision()
                ),
                request.info,
                "",
            )
        await asyncio.sleep(0.05)
    return wanted


async def stream(
    store: Store,
    request: WatchRequest,
    *,
    after: int,
    progress: Callable[[int], None] | None = None,
    progress_interval: float | None = None,
) -> AsyncIterator[WatchEvent]:
    """The events of one watch. ``after`` comes from :func:`start_revision` (-1: start
    with the current state).

    ``progress(revision)`` is called whenever everything up to ``revision`` has been
    yielded or filtered out: what a bookmark may carry. Every store event moves it, and
    with ``progress_interval`` so does the store's progress notification of a quiet
    watch, so a watcher of one unchanging object still learns how far the store went."""
    info = request.info
    # A watch of one object by name listens to its key alone (not to the longer names
    # that start with it), so a write to any other object of the resource never wakes it
    # (kube's watch cache indexes such watchers too).
    name = pinned_name(info, request.namespace, request.fields)
    prefix = (
        info.key(namespace=request.namespace, name=name)
        if name
        else info.key_prefix(request.namespace)
    )
    if after < 0 or request.send_initial_events:
        revision, items = await store.list(
            info, namespace=request.namespace, labels=request.labels, fields=request.fields
        )
        ghosts = (
            []
            if request.send_initial_events
            else _just_deleted(store, request, prefix, revision, items)
        )
        for at in range(len(items)):
            yield WatchEvent("ADDED", items[at])
        del items  # not held for the life of the watch (which may be hours): only sent
        for added, _ in ghosts:
            yield WatchEvent("ADDED", added)
        for _, deleted in ghosts:
            yield WatchEvent("DELETED", deleted)
        del ghosts
        if request.send_initial_events:
            yield WatchEvent("BOOKMARK", bookmark(info, revision, initial_end=True))
        after = revision
    if progress is not None:
        progress(after)
    try:
        async for event in store.backend.watch(
            prefix, after_revision=after, progress_interval=progress_interval, exact=bool(name)
        ):
            converted = (
                None if event.type is EventType.PROGRESS else _convert(store, request, event)
            )
            if converted is not None:
                yield converted
            # Only once the caller asks for more, so after it wrote the event: a bookmark
            # can never overtake it, whatever the writing awaits.
            if progress is not None:
                progress(event.revision)
            del event, converted  # not held while the watch waits for the next write
    except storage_errors.Compacted as err:
        yield WatchEvent("ERROR", errors.translate(err, info, "").status())


def _just_deleted(
    store: Store, request: WatchRequest, prefix: str, revision: int, listed: list[Obj]
) -> list[tuple[Obj, Obj]]:
    """Objects a trailing watch cache would still hold (see :mod:`watchlag`): deleted
    moments before ``revision``, not there again, matching the selectors; each as its
    last state (ADDED) and its deletion (DELETED)."""
    info = request.info
    present = {_name_of(obj) for obj in listed}
    found: list[tuple[Obj, Obj]] = []
    for event in watchlag.recent_deletes(store, prefix, upto=revision):
        assert event.prev is not None  # kept only with it
        last = _present(store, info, event.prev)
        if _name_of(last) in present:
            continue
        if _selective(request) and not store.matches(
            info, last, labels=request.labels, fields=request.fields
        ):
            continue
        found.append((last, _present(store, info, event.kv, at=True)))
    return found


def _name_of(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata", {})
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def bookmark(info: ResourceInfo, revision: int, *, initial_end: bool = False) -> Obj:
    m: dict[str, Any] = {"resourceVersion": str(revision)}
    if initial_end:
        m["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"kind": info.kind, "apiVersion": info.group_version, "metadata": m}


class _SharedObjects:
    """Decoded, presented objects shared by every watcher of a resource version.

    One write reaching a thousand watchers is decoded once, not a thousand times. The
    objects are shared, so nothing downstream may change them."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._items: dict[tuple[str, str, bytes | str, int, bool], Obj] = {}

    def get(
        self,
        store: Store,
        info: ResourceInfo,
        value: bytes,
        key: bytes | str,
        revision: int,
        *,
        at: bool,
    ) -> Obj:
        cache_key = (info.group_version, info.plural, key, revision, at)
        found = self._items.get(cache_key)
        if found is None:
            found = store.present(info, codec.decode_at(value, revision))
            if len(self._items) >= self._size:
                del self._items[next(iter(self._items))]
            self._items[cache_key] = found
        return found


#: One cache per store: two servers in one process (pyocm up, tests) count revisions
#: independently, so a key and revision name an object only within its own store.
_shared: weakref.WeakKeyDictionary[Store, _SharedObjects] = weakref.WeakKeyDictionary()


def _present(store: Store, info: ResourceInfo, kv: Any, *, at: bool = False) -> Obj:
    cache = _shared.get(store)
    if cache is None:
        cache = _shared[store] = _SharedObjects()
    return cache.get(store, info, kv.value, kv.key, kv.mod_revision, at=at)


def _convert(store: Store, request: WatchRequest, event: Event) -> WatchEvent | None:
    info = request.info
    selective = _selective(request)
    if event.type is EventType.DELETE:
        obj = _present(store, info, event.kv, at=True)
        if selective and not store.matches(info, obj, labels=request.labels, fields=request.fields):
            return None
        return WatchEvent("DELETED", obj)
    obj = _present(store, info, event.kv)
    now_matches = not selective or store.matches(
        info, obj, labels=request.labels, fields=request.fields
    )
    if event.prev is None:
        return WatchEvent("ADDED", obj) if now_matches else None
    if not selective:
        return WatchEvent("MODIFIED", obj)
    prev = _present(store, info, event.prev)
    was_matching = store.matches(info, prev, labels=request.labels, fields=request.fields)
    if now_matches:
        return WatchEvent("MODIFIED" if was_matching else "ADDED", obj)
    return WatchEvent("DELETED", obj) if was_matching else None


def _selective(request: WatchRequest) -> bool:
    return bool(
        (request.labels and not request.labels.empty)
        or (request.fields and not request.fields.empty)
    )
