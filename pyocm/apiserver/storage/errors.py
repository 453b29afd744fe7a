"""Storage errors are values: each carries the key and, where it helps, the revision.

They are translated into API ``Status`` errors in exactly one place
(:mod:`pyocm.apiserver.registry.errors`). Messages never contain values.
"""

from __future__ import annotations

from pyocm.apiserver.storage.interface import KeyValue


class StorageError(Exception):
    """Base class of every error a backend raises."""

    def __init__(self, message: str, *, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class KeyExists(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key exists: {key}", key=key)


class KeyNotFound(StorageError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}", key=key)


class Conflict(StorageError):
    """The key was modified since the revision the caller expected."""

    def __init__(self, key: str, *, current: KeyValue) -> None:
        super().__init__(f"revision conflict on {key}", key=key)
        self.current = current


class Compacted(StorageError):
    """A watch asked for history the store no longer keeps."""

    def __init__(self, *, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class FutureRevision(StorageError):
    def __init__(self, *, requested: int, current: int) -> None:
        super().__init__(f"Too large resource version: {requested}, current: {current}")
        self.requested = requested
        self.current = current


class Unavailable(StorageError):
    """The store cannot serve the request (closed, or a commit failed on disk)."""
