"""A store whose log commits at once, in memory: for unit tests and the simulator.

It runs the very same MVCC rules as the SQLite store (:class:`LogStructured`); only the
durable part is a :class:`MemoryDisk`. Handing the same disk to a new store simulates a
restart: the state and revision counter survive, the watch history does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyocm.apiserver.storage import logstructured
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue


@dataclass
class MemoryDisk:
    """What "survives a restart" of a memory store."""

    revision: int = 0
    rows: dict[str, KeyValue] = field(default_factory=dict)


class MemoryLog:
    """A :class:`logstructured.Log` that is durable the moment a write is appended."""

    name = "memory"

    def __init__(self, disk: MemoryDisk | None = None) -> None:
        self.disk = disk if disk is not None else MemoryDisk()
        self._sink: logstructured.CommitSink | None = None

    async def open(self, sink: logstructured.CommitSink) -> logstructured.Recovered:
        self._sink = sink
        return logstructured.Recovered(self.disk.revision, list(self.disk.rows.values()))

    def append(self, event: Event) -> None:
        assert self._sink is not None, "append before open"
        if event.type is EventType.PUT:
            self.disk.rows[event.kv.key] = event.kv
        else:
            self.disk.rows.pop(event.kv.key, None)
        self.disk.revision = event.revision
        self._sink.committed([event])

    def resume(self) -> None:
        """Nothing to resume: this log never fails."""

    async def probe(self) -> None:
        """Memory always takes a write."""

    async def close(self) -> None:
        self._sink = None


def new_backend(
    *, disk: MemoryDisk | None = None, options: logstructured.Options | None = None
) -> logstructured.LogStructured:
    """A memory store (not started) over ``disk``, or over a fresh one."""
    return logstructured.LogStructured(MemoryLog(disk), options=options)
