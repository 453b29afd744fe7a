"""Choosing a store by URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyocm.apiserver.storage import backends, etcd, logstructured, memory, sqlite


def test_memory_url_opens_a_memory_store_with_options() -> None:
    disk = memory.MemoryDisk()
    store = backends.open_backend("memory://", disk=disk, history_size=7)
    assert isinstance(store, logstructured.LogStructured)
    assert isinstance(store.log, memory.MemoryLog) and store.log.disk is disk
    assert store.options.history_size == 7


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param(
            "sqlite:///var/lib/pyocm/state.db", Path("/var/lib/pyocm/state.db"), id="absolute"
        ),
        pytest.param("sqlite://data/state.db", Path("data/state.db"), id="relative"),
    ],
)
def test_sqlite_url_names_the_file(url: str, expected: Path) -> None:
    store = backends.open_backend(url, synchronous="NORMAL", max_batch=10, watch_queue_size=3)
    assert isinstance(store, logstructured.LogStructured)
    assert isinstance(store.log, sqlite.SqliteLog)
    assert store.log.path == expected
    assert store.log.options == sqlite.SqliteOptions(synchronous="NORMAL", max_batch=10)
    assert store.options.watch_queue_size == 3


@pytest.mark.parametrize(
    ("url", "message"),
    [
        pytest.param(
            "redis://user:secret@host:6379",
            "unsupported storage scheme 'redis'; supported: etcd://, memory://, sqlite://",
            id="unknown-scheme",
        ),
        pytest.param(
            "/var/lib/state.db",
            "unsupported storage URL without a scheme; supported: etcd://, memory://, sqlite://",
            id="no-scheme",
        ),
        pytest.param(
            "etcd://10.0.0.1:2379,user:secret@host:2379",
            "etcd:// takes only host:port endpoints: no user, path or query"
            " (authenticate with a client certificate)",
            id="etcd-credentials",
        ),
        pytest.param("etcd://", "etcd:// needs host:port[,host:port...]", id="etcd-nothing"),
        pytest.param("etcd://a:1,,b:2", "etcd:// needs host:port[,host:port...]", id="etcd-empty"),
        pytest.param("etcd://host", "etcd:// endpoints are host:port", id="etcd-no-port"),
        pytest.param(
            "sqlite://",
            "sqlite:// needs a path: sqlite:///absolute/file.db or sqlite://relative/file.db",
            id="no-path",
        ),
        pytest.param(
            "sqlite:///db?cache=shared",
            "sqlite:// takes no query parameters; pass options instead",
            id="query",
        ),
        pytest.param("memory://somewhere", "memory:// takes no location", id="memory-location"),
    ],
)
def test_bad_urls_raise_value_error_without_echoing_the_url(url: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        backends.open_backend(url)
    assert str(caught.value) == message
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "options", "message"),
    [
        pytest.param(
            "memory://",
            {"synchronous": "FULL"},
            "unknown memory storage option(s): synchronous",
            id="sqlite-option-on-memory",
        ),
        pytest.param(
            "etcd://h:1",
            {"synchronous": "FULL", "prefix": "/x"},
            "unknown etcd storage option(s): prefix, synchronous",
            id="unprefixed-on-etcd",
        ),
        pytest.param(
            "sqlite:///x.db",
            {"disk": None, "colour": 1},
            "unknown sqlite storage option(s): colour, disk",
            id="unknown",
        ),
    ],
)
def test_options_a_scheme_does_not_take_raise_type_error(
    url: str, options: dict[str, object], message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        backends.open_backend(url, **options)
    assert str(caught.value) == message


def test_etcd_url_names_the_members_in_order_with_kube_apiservers_option_names() -> None:
    store = backends.open_backend(
        "etcd://10.0.0.1:2379, etcd-2.example:2379,[::1]:2379",
        etcd_prefix="/hub-a",
        etcd_cafile="/pki/ca.crt",
        etcd_certfile="/pki/client.crt",
        etcd_keyfile="/pki/client.key",
        etcd_compaction_interval=60,
        history_size=9,
    )
    assert isinstance(store, etcd.EtcdStore)
    assert store.name == "etcd"
    assert store.endpoints == ["10.0.0.1:2379", "etcd-2.example:2379", "[::1]:2379"]
    assert store.settings == etcd.EtcdOptions(
        prefix="/hub-a",
        cafile="/pki/ca.crt",
        certfile="/pki/client.crt",
        keyfile="/pki/client.key",
        compaction_interval=60,
    )
    assert store.options.history_size == 9


def test_invalid_option_values_raise_value_error() -> None:
    with pytest.raises(ValueError, match=r"^etcd_keyfile needs etcd_certfile$"):
        backends.open_backend("etcd://h:1", etcd_keyfile="/k")
    with pytest.raises(ValueError, match=r"^etcd_compaction_interval must not be negative$"):
        backends.open_backend("etcd://h:1", etcd_compaction_interval=-1)
    with pytest.raises(ValueError, match=r"^synchronous must be FULL or NORMAL, not 'OFF'$"):
        backends.open_backend("sqlite:///x.db", synchronous="OFF")
    with pytest.raises(TypeError, match="disk must be a MemoryDisk"):
        backends.open_backend("memory://", disk={})
