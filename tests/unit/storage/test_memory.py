"""The memory store: immediate commits and a disk that survives a simulated restart."""

from __future__ import annotations

from pyocm.apiserver.storage import memory
from pyocm.apiserver.storage.interface import KeyValue


async def test_every_write_is_on_the_disk_when_acknowledged() -> None:
    disk = memory.MemoryDisk()
    store = memory.new_backend(disk=disk)
    await store.start()
    a = await store.create("/a", b"1")
    assert disk.rows == {"/a": a} and disk.revision == a.mod_revision
    b = await store.create("/b", b"2")
    gone = await store.delete("/a")
    assert disk.rows == {"/b": b} and disk.revision == gone.mod_revision


async def test_a_new_store_on_the_same_disk_is_a_restart() -> None:
    disk = memory.MemoryDisk()
    first = memory.new_backend(disk=disk)
    await first.start()
    kv = await first.create("/a", b"1")
    await first.close()
    second = memory.new_backend(disk=disk)
    await second.start()
    assert await second.get("/a") == kv
    assert (await second.create("/b", b"")) == KeyValue("/b", b"", 2, 2)


async def test_without_a_disk_each_store_starts_empty() -> None:
    store = memory.new_backend()
    await store.start()
    assert store.current_revision() == 0
    assert await store.list("") == (0, [])
