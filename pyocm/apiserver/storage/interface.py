"""The storage contract every backend implements.

The API server stores each object under one key (``/registry/<group>/<resource>/<ns>/<name>``)
as opaque bytes. The store gives every successful write one revision taken from a single,
global, strictly increasing counter that survives restarts; that revision is what clients
see as ``metadata.resourceVersion``. Reads and watches only ever show committed (durable)
writes, in revision order.

A backend is done when ``tests/conformance/test_storage.py`` passes unchanged against it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One live key.

    ``create_revision`` is the revision of the write that created the key (it changes only
    when the key is deleted and created again); ``mod_revision`` is the revision of the
    last write to it.
    """

    key: str
    value: bytes
    create_revision: int
    mod_revision: int


class EventType(Enum):
    PUT = "PUT"
    DELETE = "DELETE"
    #: Only in a watch that asked for progress: nothing at or below the event's
    #: revision is left to deliver (etcd's progress notification). Its ``kv`` carries
    #: only that revision.
    PROGRESS = "PROGRESS"


@dataclass(frozen=True, slots=True)
class Event:
    """One committed change.

    For PUT, ``kv`` is the new state and ``prev`` the state before (None on create).
    For DELETE, ``kv`` carries the deleted value with ``mod_revision`` set to the
    revision of the delete, and ``prev`` the state just before the delete.
    """

    type: EventType
    kv: KeyValue
    prev: KeyValue | None

    @property
    def revision(self) -> int:
        return self.kv.mod_revision


CommitHook = Callable[[list[Event]], None]


class Backend(Protocol):
    """A revisioned key-value store with compare-and-swap and watch.

    Every method is a coroutine function called on the server's event loop, except
    ``current_revision`` and ``add_commit_hook`` which are plain methods. Errors are the
    classes of :mod:`pyocm.apiserver.storage.errors`; a backend never lets a driver
    exception escape.
    """

    async def start(self) -> None:
        """Open the store, recover the state and the revision counter from disk."""

    async def close(self) -> None:
        """Stop accepting writes, wait for pending commits, end every open watch, close."""

    @property
    def name(self) -> str:
        """What the store is (``sqlite``, ``memory``, ``etcd``), as health checks name it."""

    async def check(self) -> None:
        """Raise ``Unavailable`` unless a write would commit now.

        A commit that fails (a full disk) does not stop the store for good: writes are
        tried again once those in flight with it have failed, and the store recovers by
        itself when the cause is gone. Until a write commits again, ``check`` makes a
        small write that changes nothing, so the store reports healthy again even with
        no client writing."""

    async def catch_up(self) -> None:
        """Return once every write acknowledged before this call, by any process sharing
        the store, has reached this process's state and commit hooks (at once when only
        this process writes). Raises ``Unavailable`` when that cannot be known now."""

    def current_revision(self) -> int:
        """The revision of the last committed write (0 for an empty, new store)."""

    async def get(self, key: str) -> KeyValue | None:
        """The committed value of ``key``, or None when it does not exist."""

    async def list(self, prefix: str, *, revision: int = 0) -> tuple[int, list[KeyValue]]:
        """Every key starting with ``prefix`` that was live at ``revision``, sorted by key,
        and the revision of that snapshot.

        ``revision`` 0 means the current revision. A past revision is served while the
        store still keeps the changes since (as for a watch): older raises ``Compacted``,
        newer than ``current_revision()`` raises ``FutureRevision``."""

    async def count(self, prefix: str) -> int:
        """How many live keys start with ``prefix``."""

    async def create(self, key: str, value: bytes) -> KeyValue:
        """Store a new key. Raises ``KeyExists`` if the key is live.

        Returns once the write is durable, with the assigned revision."""

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        """Replace the value of ``key`` if its ``mod_revision`` is still
        ``expected_revision``.

        Raises ``KeyNotFound`` if the key is not live and ``Conflict`` (carrying the
        current KeyValue) if it was modified since. Returns once durable."""

    async def delete(self, key: str, *, expected_revision: int | None = None) -> KeyValue:
        """Delete ``key``, optionally only if its ``mod_revision`` is ``expected_revision``.

        Returns the deleted value with ``mod_revision`` set to the revision of the delete.
        Raises ``KeyNotFound`` or ``Conflict`` like ``update``."""

    def watch(
        self,
        prefix: str,
        *,
        after_revision: int,
        progress_interval: float | None = None,
        exact: bool = False,
    ) -> AsyncIterator[Event]:
        """Every committed event for keys under ``prefix`` with a revision greater than
        ``after_revision``, in revision order, without gaps, until the watch is closed.
        With ``exact``, for the key ``prefix`` alone (etcd's watch without a range end,
        kube's non-recursive watch), not for the longer keys that start with it.

        With ``progress_interval``, a watch that has delivered everything and then hears
        nothing for that many seconds yields a ``PROGRESS`` event at the store's current
        revision, so a client watching a quiet key can resume from a recent revision
        (kube-apiserver's bookmarks rest on etcd's progress notifications the same way).

        Raises ``Compacted`` (on the first iteration) when ``after_revision`` is older than
        the retained history, and ``FutureRevision`` when it is ahead of
        ``current_revision()``. A watcher that falls too far behind the writers gets
        ``Compacted`` in the middle of the stream instead of holding memory without bound.
        ``after_revision`` equal to ``current_revision()`` means "only what comes next"."""

    def oldest_revision(self) -> int:
        """The oldest ``after_revision`` a new watch may still start from."""

    def add_commit_hook(self, hook: CommitHook) -> None:
        """Call ``hook`` synchronously on the event loop with every batch of committed
        events, in revision order, before the writers of that batch are answered.

        This lets in-process caches (RBAC, CRD routes) be current the moment a write is
        acknowledged. A hook must be fast and must not raise."""
