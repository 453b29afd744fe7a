"""What the etcd store promises beyond the conformance suite: several API server
processes on one etcd, failing over between members, kube-apiserver's compaction, the
health check, and TLS to etcd. Against real etcd processes (tests/etcd.py)."""

from __future__ import annotations

import asyncio
import ipaddress
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyocm.apiserver.storage import backends, errors, etcd
from pyocm.apiserver.storage.etcdgateway import (
    OUT_OF_RANGE,
    EtcdError,
    Gateway,
    b64,
    revision_of,
)
from pyocm.apiserver.storage.interface import Backend, Event, EventType, KeyValue
from pyocm.pki.ca import CertificateAuthority
from tests.etcd import EtcdServer, TlsFiles, etcd_server, free_port, start_etcd

__all__ = ["etcd_server"]


@pytest.fixture
async def open_etcd(etcd_server: EtcdServer) -> AsyncIterator[Callable[..., Any]]:
    """Opens stores on the session's etcd, all on one new key prefix unless told."""
    prefix = f"/test-{uuid.uuid4().hex}"
    opened: list[Backend] = []

    async def open_(url: str = etcd_server.url, **options: Any) -> Backend:
        store = backends.open_backend(url, **{"etcd_prefix": prefix, **options})
        await store.start()
        opened.append(store)
        return store

    yield open_
    for store in opened:
        await store.close()


async def eventually(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.01)


async def test_two_api_servers_on_one_etcd_see_each_others_writes(
    open_etcd: Callable[..., Any],
) -> None:
    one, two = await open_etcd(), await open_etcd()
    seen: list[Event] = []
    two.add_commit_hook(seen.extend)
    created = await one.create("/r/a", b"1")
    # The other process's hooks get the write through its own watch.
    await eventually(lambda: [e.kv for e in seen] == [created])
    assert await two.get("/r/a") == created
    # Compare-and-swap is etcd's: the second process updates, the first is now stale.
    updated = await two.update("/r/a", b"2", expected_revision=created.mod_revision)
    with pytest.raises(errors.Conflict) as caught:
        await one.update("/r/a", b"3", expected_revision=created.mod_revision)
    assert caught.value.current == updated
    # A watch from a revision the other process gave, before this one has seen it.
    later = await one.update("/r/a", b"4", expected_revision=updated.mod_revision)
    stream = two.watch("/r/", after_revision=later.mod_revision)
    last = await one.delete("/r/a")
    event = await asyncio.wait_for(anext(stream), timeout=5)
    assert event == Event(EventType.DELETE, last, later)
    assert await two.list("/r/") == (last.mod_revision, [])


async def test_a_dead_member_is_skipped(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    store = await open_etcd(f"etcd://127.0.0.1:{free_port()},{etcd_server.endpoint}")
    created = await store.create("/r/a", b"x")
    assert await store.get("/r/a") == created
    await store.check()


async def test_no_member_answering_is_unavailable_without_the_url() -> None:
    store = backends.open_backend(f"etcd://127.0.0.1:{free_port()},127.0.0.1:{free_port()}")
    with pytest.raises(errors.Unavailable, match="is unreachable"):
        await store.start()
    with pytest.raises(errors.Unavailable, match="not started"):
        await store.get("/r/a")


async def test_a_process_started_later_resumes_watches_from_before_its_start(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    # A replica that died gave its clients resourceVersions; one started a moment ago
    # replays every change since (deletions too) from etcd's history, not 410 Gone.
    one = await open_etcd()
    before = await one.create("/b/x", b"x")
    a = await one.create("/b/a", b"1")
    a2 = await one.update("/b/a", b"2", expected_revision=a.mod_revision)
    gone = await one.delete("/b/x")
    late = backends.open_backend(etcd_server.url, etcd_prefix=one.settings.prefix)
    hooked: list[Event] = []
    late.add_commit_hook(hooked.extend)
    await late.start()
    try:
        # Until the back-fill is known complete, the history begins at the start.
        with pytest.raises(errors.Compacted):
            await anext(late.watch("/b/", after_revision=before.mod_revision))
        after = await late.create("/b/c", b"3")  # the watch's first change past the start
        stream = late.watch("/b/", after_revision=before.mod_revision)
        replayed = [await asyncio.wait_for(anext(stream), 5) for _ in range(4)]
        assert replayed == [
            Event(EventType.PUT, a, None),
            Event(EventType.PUT, a2, a),
            Event(EventType.DELETE, gone, before),
            Event(EventType.PUT, after, None),
        ]
        # The hooks begin at the start: what came before it is in their caches already.
        assert [e.kv.key for e in hooked] == ["/b/c"]
    finally:
        await late.close()


async def test_the_back_fill_begins_at_etcds_compaction_or_history_size(tmp_path: Path) -> None:
    server = start_etcd(tmp_path)  # its own: compaction is global to an etcd
    stores: list[Backend] = []

    async def open_(**options: Any) -> Backend:
        store = backends.open_backend(server.url, etcd_prefix="/p", **options)
        await store.start()
        stores.append(store)
        return store

    try:
        one = await open_()
        written = [await one.create(f"/k/{i}", b"") for i in range(6)]
        compacted = written[2].mod_revision
        await one._call("/v3/kv/compaction", {"revision": str(compacted)})  # type: ignore[attr-defined]
        late = await open_()
        small = await open_(history_size=2)
        last = await one.create("/k/last", b"")
        await eventually(lambda: late.oldest_revision() == compacted - 1)
        # history_size 2: the back-fill's last two, then the newest two are kept.
        await eventually(lambda: small.oldest_revision() == written[-2].mod_revision)
        with pytest.raises(errors.Compacted):
            await anext(late.watch("/k/", after_revision=compacted - 2))
        stream = late.watch("/k/", after_revision=compacted - 1)
        replayed = [(await asyncio.wait_for(anext(stream), 5)).kv for _ in range(5)]
        assert replayed == [*written[2:], last]
    finally:
        for store in stores:
            await store.close()
        server.stop()


async def test_compaction_keeps_the_history_since_the_previous_tick(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    store = await open_etcd(etcd_compaction_interval=0.2)
    old = await store.create("/c/a", b"")
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)

    def at(revision: int) -> dict[str, str]:  # a read of etcd itself at a revision
        return {"key": b64(b"/c/"), "revision": str(revision)}

    try:
        await gateway.call("/v3/kv/range", at(old.mod_revision))
        # The first tick only records the revision; the second compacts to it.
        await asyncio.sleep(0.7)
        with pytest.raises(EtcdError) as caught:
            await gateway.call("/v3/kv/range", at(old.mod_revision))
        assert caught.value.code == OUT_OF_RANGE
        newer = await store.create("/c/b", b"")
        await gateway.call("/v3/kv/range", at(newer.mod_revision))
    finally:
        await gateway.close()
    # The store lists from its own history, as its watches resume from it (and as
    # kube-apiserver's watch cache outlives etcd's compaction).
    assert (await store.list("/c/", revision=old.mod_revision))[1] == [old]
    assert (await store.list("/c/", revision=newer.mod_revision))[1] == [old, newer]


async def test_check_fails_soon_when_etcd_is_gone(tmp_path: Path) -> None:
    server = start_etcd(tmp_path)
    store = backends.open_backend(server.url, etcd_healthcheck_timeout=0.5)
    try:
        await store.start()
        await store.check()
        server.stop()
        with pytest.raises(errors.Unavailable):
            await asyncio.wait_for(store.check(), timeout=5)
        with pytest.raises(errors.Unavailable):
            await asyncio.wait_for(store.create("/r/a", b""), timeout=40)
    finally:
        server.stop()
        await store.close()


def _member_certificate(ca: CertificateAuthority) -> tuple[bytes, bytes]:
    """etcd's gateway dials its own member with the member's certificate, so with
    --client-cert-auth that certificate must allow client use too (as etcd's docs make
    theirs)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd")]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    )
    certificate = ca.sign(builder)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    directory = tmp_path_factory.mktemp("etcd-pki")
    ca = CertificateAuthority.create("etcd-ca", valid_for=timedelta(days=1))
    server_cert, server_key = _member_certificate(ca)
    client_cert, client_key = ca.issue_client(common_name="pyocm", valid_for=timedelta(days=1))
    files = {
        "ca": ca.cert_pem,
        "server_cert": server_cert,
        "server_key": server_key,
        "client_cert": client_cert,
        "client_key": client_key,
    }
    for name, pem in files.items():
        (directory / name).write_bytes(pem)
    return TlsFiles(**{name: directory / name for name in files})


async def test_tls_to_etcd_with_a_client_certificate(tmp_path: Path, tls_files: TlsFiles) -> None:
    server = start_etcd(tmp_path, tls=tls_files)
    store = backends.open_backend(
        server.url,
        etcd_cafile=str(tls_files.ca),
        etcd_certfile=str(tls_files.client_cert),
        etcd_keyfile=str(tls_files.client_key),
    )
    anonymous = backends.open_backend(server.url, etcd_cafile=str(tls_files.ca))
    try:
        await store.start()
        created = await store.create("/r/a", b"secret")
        assert await store.get("/r/a") == KeyValue(
            "/r/a", b"secret", created.mod_revision, created.mod_revision
        )
        await store.check()
        with pytest.raises(errors.Unavailable) as caught:
            await anonymous.start()  # etcd asks for a client certificate
        assert "secret" not in str(caught.value)
    finally:
        await store.close()
        server.stop()


async def test_reads_see_every_write_etcd_acknowledged_before_them(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    """Reads come from the state the watch keeps, yet are linearizable: a write another
    client made straight to etcd is seen by the very next read."""
    store = await open_etcd()
    root = store.settings.prefix.encode()
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)
    try:
        for n in range(20):
            value = str(n).encode()
            put = {"key": b64(root + b"/r/x"), "value": b64(value)}
            revision = revision_of(await gateway.call("/v3/kv/put", put))
            got = await store.get("/r/x")
            assert got is not None and (got.value, got.mod_revision) == (value, revision)
            assert (await store.list("/r/"))[1] == [got]
            assert await store.count("/r/") == 1
    finally:
        await gateway.close()


async def test_writes_outside_the_prefix_do_not_hold_reads_up(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another prefix's write moves etcd's revision past anything under this one: the
    watch brings it too, so reads do not wait for a change under the prefix."""
    monkeypatch.setattr(etcd, "FRESH_TIMEOUT", 600.0)
    store = await open_etcd()
    created = await store.create("/r/a", b"1")
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)
    try:
        put = {"key": b64(f"/elsewhere-{uuid.uuid4().hex}".encode()), "value": b64(b"")}
        revision = revision_of(await gateway.call("/v3/kv/put", put))
    finally:
        await gateway.close()
    assert await asyncio.wait_for(store.get("/r/a"), 60) == created
    assert store.current_revision() >= revision
    assert (await store.list("/r/"))[1] == [created]


async def test_closing_ends_reads_waiting_on_a_fence(open_etcd: Callable[..., Any]) -> None:
    """close() while one read's fence is being asked of etcd and another waits for the
    next: both end (with the value or Unavailable), neither hangs."""
    store = await open_etcd()
    await store.create("/r/a", b"1")
    asked = asyncio.create_task(store.get("/r/a"))
    for _ in range(3):  # let the fence task send its read to etcd
        await asyncio.sleep(0)
    queued = asyncio.create_task(store.get("/r/a"))
    await asyncio.sleep(0)
    await store.close()
    done, _ = await asyncio.wait({asked, queued}, timeout=10)
    assert done == {asked, queued}
    for read in done:
        assert read.exception() is None or isinstance(read.exception(), errors.Unavailable)


async def test_a_back_fill_from_etcds_compaction_refuses_lists_it_cannot_undo(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    """etcd sends the change at its compaction revision without the value before it: a
    store starting there must answer Compacted below it, not a list missing that key."""
    prefix = f"/test-{uuid.uuid4().hex}".encode()
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)

    async def put(key: bytes, value: bytes) -> int:
        answer = await gateway.call("/v3/kv/put", {"key": b64(prefix + key), "value": b64(value)})
        return revision_of(answer)

    try:
        await put(b"/r/k", b"old")
        await put(b"/r/filler", b"")
        compacted = await put(b"/r/k", b"new")  # an update at the compaction revision
        await gateway.call("/v3/kv/compaction", {"revision": str(compacted)})
        started = await put(b"/r/filler", b"2")
        store = await open_etcd(etcd_prefix=prefix.decode(), etcd_compaction_interval=0)
        await put(b"/r/after", b"")  # the first change past the start ends the back-fill
        await eventually(lambda: store.oldest_revision() < started)
    finally:
        await gateway.close()
    assert store.oldest_revision() == compacted
    with pytest.raises(errors.Compacted):
        await store.list("/r/", revision=compacted - 1)
    assert [kv.value for kv in (await store.list("/r/", revision=compacted))[1]] == [b"", b"new"]


async def test_reads_while_the_watch_is_down_go_to_etcd(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read the watch cannot bring does not wait on it (and leaves nothing behind)."""
    monkeypatch.setattr(etcd, "FRESH_TIMEOUT", 600.0)
    store = await open_etcd()
    root = store.settings.prefix.encode()
    store._follower.cancel()  # the watch is gone, as while it reconnects
    await asyncio.gather(store._follower, return_exceptions=True)
    store._connected = False
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)
    try:
        put = {"key": b64(root + b"/r/x"), "value": b64(b"v")}
        revision = revision_of(await gateway.call("/v3/kv/put", put))
    finally:
        await gateway.close()
    got = await asyncio.wait_for(store.get("/r/x"), 60)
    assert got is not None and got.mod_revision == revision
    assert [kv.key for kv in (await store.list("/r/"))[1]] == ["/r/x"]
    assert store._waiters == []


async def test_a_fence_that_fails_unexpectedly_fails_its_reads(
    open_etcd: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever breaks the read of etcd's revision, the reads waiting on it end, with
    the store's own error (no driver exception escapes)."""
    store = await open_etcd()
    await store.create("/r/a", b"1")

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Session is closed")

    monkeypatch.setattr(store._gateway, "call", broken)
    reads = [asyncio.create_task(store.get("/r/a")) for _ in range(3)]
    done, _ = await asyncio.wait(reads, timeout=10)
    assert done == set(reads)
    assert all(isinstance(read.exception(), errors.Unavailable) for read in reads)
    monkeypatch.undo()
    assert (await store.get("/r/a")) is not None  # the next fence asks again


async def test_past_the_back_fill_the_watch_takes_previous_values_from_the_state(
    open_etcd: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """etcd reads and sends each change's previous value again for every replica's
    watch that asks for it; once the history is filled back the state has them, so the
    store watches on without, and its events still carry them."""
    requests: list[dict[str, Any]] = []
    watch = Gateway.watch

    def recording(self: Gateway, request: dict[str, Any]) -> Any:
        requests.append(request)
        return watch(self, request)

    monkeypatch.setattr(Gateway, "watch", recording)
    store = await open_etcd()
    a = await store.create("/r/a", b"1")  # the first change past the start ends the back-fill
    # (On a compacted etcd, the back-fill starts again first, with prev_kv too.)
    await eventually(lambda: not requests[-1]["prev_kv"])
    assert len(requests) >= 2 and all(r["prev_kv"] for r in requests[:-1])
    assert int(requests[-1]["start_revision"]) <= a.mod_revision + 1
    stream = store.watch("/r/", after_revision=a.mod_revision)
    a2 = await store.update("/r/a", b"2", expected_revision=a.mod_revision)
    gone = await store.delete("/r/a")
    again = await store.create("/r/a", b"3")
    events = [await asyncio.wait_for(anext(stream), 5) for _ in range(3)]
    assert events == [
        Event(EventType.PUT, a2, a),
        Event(EventType.DELETE, gone, a2),
        Event(EventType.PUT, again, None),
    ]
    assert gone.value == b"2"
    assert (await store.list("/r/", revision=a2.mod_revision))[1] == [a2]


async def test_changes_the_watch_catches_up_on_chain_their_previous_values(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    """A watch that comes back brings the changes it missed at once (etcd sends them in
    one response), before the state has any of them: each change's previous value is
    the one before it."""
    store = await open_etcd()
    a = await store.create("/r/a", b"1")
    await eventually(lambda: store._backfill is None and store._connected)
    stream = store.watch("/r/", after_revision=a.mod_revision)
    store._follower.cancel()  # the watch is lost for a while
    await asyncio.gather(store._follower, return_exceptions=True)
    root = store.settings.prefix.encode()
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)
    key = b64(root + b"/r/a")
    try:
        revisions = [
            revision_of(await gateway.call("/v3/kv/put", {"key": key, "value": b64(b"2")})),
            revision_of(await gateway.call("/v3/kv/put", {"key": key, "value": b64(b"3")})),
            revision_of(await gateway.call("/v3/kv/deleterange", {"key": key})),
        ]
    finally:
        await gateway.close()
    store._follower = asyncio.create_task(store._follow(asyncio.Future()))
    events = [await asyncio.wait_for(anext(stream), 5) for _ in range(3)]
    a2 = KeyValue("/r/a", b"2", a.create_revision, revisions[0])
    a3 = KeyValue("/r/a", b"3", a.create_revision, revisions[1])
    assert events == [
        Event(EventType.PUT, a2, a),
        Event(EventType.PUT, a3, a2),
        Event(EventType.DELETE, KeyValue("/r/a", b"3", a.create_revision, revisions[2]), a3),
    ]
    assert await store.get("/r/a") is None


async def test_changes_to_one_key_in_one_watch_response_chain_their_previous_values(
    open_etcd: Callable[..., Any],
) -> None:
    """A watch catching up sends several revisions at once: each change's previous value
    is the one before it in the response, not the state's (which has neither yet)."""
    store = await open_etcd()
    a = await store.create("/r/a", b"1")
    await eventually(lambda: store._backfill is None)
    root = store.settings.prefix.encode()
    key = b64(root + b"/r/a")

    def kv(value: bytes, mod: int, create: int = a.create_revision) -> dict[str, Any]:
        return {"key": key, "value": b64(value), "create_revision": str(create),
                "mod_revision": str(mod)}  # fmt: skip

    r = a.mod_revision
    batch = store._events(
        [
            {"kv": kv(b"2", r + 1)},
            {"type": "DELETE", "kv": {"key": key, "mod_revision": str(r + 2)}},
            {"kv": kv(b"3", r + 3, create=r + 3)},
            {"kv": kv(b"4", r + 4, create=r + 3)},
        ]
    )
    a2 = KeyValue("/r/a", b"2", a.create_revision, r + 1)
    a3, a4 = KeyValue("/r/a", b"3", r + 3, r + 3), KeyValue("/r/a", b"4", r + 3, r + 4)
    assert batch == [
        Event(EventType.PUT, a2, a),
        Event(EventType.DELETE, KeyValue("/r/a", b"2", a.create_revision, r + 2), a2),
        Event(EventType.PUT, a3, None),
        Event(EventType.PUT, a4, a3),
    ]
    assert await store.get("/r/a") == a  # nothing applied: that is _deliver's


async def test_catching_up_brings_another_writers_changes_to_the_hooks(
    open_etcd: Callable[..., Any], etcd_server: EtcdServer
) -> None:
    """What another API server wrote (a CRD, say) has reached this one's hooks, and so
    its routes, once catch_up returns."""
    store = await open_etcd()
    seen: list[int] = []
    store.add_commit_hook(lambda batch: seen.extend(event.revision for event in batch))
    root = store.settings.prefix.encode()
    gateway = Gateway([etcd_server.endpoint], ssl_context=None, request_timeout=5)
    try:
        for n in range(10):
            put = {"key": b64(root + b"/c/crd"), "value": b64(str(n).encode())}
            revision = revision_of(await gateway.call("/v3/kv/put", put))
            await store.catch_up()
            assert seen[-1] == revision
    finally:
        await gateway.close()


async def test_catching_up_while_the_watch_is_down_is_unavailable(
    open_etcd: Callable[..., Any],
) -> None:
    store = await open_etcd()
    store._follower.cancel()
    await asyncio.gather(store._follower, return_exceptions=True)
    store._connected = False
    with pytest.raises(errors.Unavailable):
        await store.catch_up()
