"""Choose a store by URL scheme, from one explicit table.

``sqlite:///var/lib/pyocm/state.db`` (absolute) or ``sqlite://state.db`` (relative to
the working directory), ``memory://``, and ``etcd://host:port[,host:port...]`` (the
members to try, in order). Options are keyword arguments: those of
:class:`logstructured.Options` for every scheme, those of :class:`sqlite.SqliteOptions`
for ``sqlite``, ``disk`` (a :class:`memory.MemoryDisk`) for ``memory``, and those of
:class:`etcd.EtcdOptions` prefixed ``etcd_`` (``etcd_prefix``, ``etcd_cafile`` ...: the
names of kube-apiserver's flags) for ``etcd``. Errors name the scheme but never repeat
the URL, which for network stores may carry credentials.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pyocm.apiserver.storage import etcd, logstructured, memory, sqlite
from pyocm.apiserver.storage.interface import Backend

_STORE_OPTIONS = frozenset(f.name for f in dataclasses.fields(logstructured.Options))
_SQLITE_OPTIONS = frozenset(f.name for f in dataclasses.fields(sqlite.SqliteOptions))
_ETCD_OPTIONS = frozenset(f"etcd_{f.name}" for f in dataclasses.fields(etcd.EtcdOptions))


def open_backend(url: str, **options: Any) -> Backend:
    """A store (not yet started) for ``url``.

    Raises ``ValueError`` for an unknown scheme or a malformed location, and
    ``TypeError`` for an option the scheme does not take.
    """
    scheme, separator, location = url.partition("://")
    opener = _OPENERS.get(scheme) if separator else None
    if opener is None:
        named = f"scheme {scheme!r}" if separator else "URL without a scheme"
        raise ValueError(f"unsupported storage {named}; supported: {_supported()}")
    return opener(location, dict(options))


def _open_memory(location: str, options: dict[str, Any]) -> Backend:
    if location:
        raise ValueError("memory:// takes no location")
    disk = options.pop("disk", None)
    if disk is not None and not isinstance(disk, memory.MemoryDisk):
        raise TypeError("the memory option disk must be a MemoryDisk")
    store = logstructured.Options(**_take(options, _STORE_OPTIONS))
    _reject_rest("memory", options)
    return memory.new_backend(disk=disk, options=store)


def _open_sqlite(location: str, options: dict[str, Any]) -> Backend:
    if not location:
        raise ValueError(
            "sqlite:// needs a path: sqlite:///absolute/file.db or sqlite://relative/file.db"
        )
    if "?" in location:
        raise ValueError("sqlite:// takes no query parameters; pass options instead")
    dialect = sqlite.SqliteOptions(**_take(options, _SQLITE_OPTIONS))
    store = logstructured.Options(**_take(options, _STORE_OPTIONS))
    _reject_rest("sqlite", options)
    return sqlite.new_backend(location, sqlite=dialect, options=store)


def _open_etcd(location: str, options: dict[str, Any]) -> Backend:
    endpoints = [endpoint.strip() for endpoint in location.split(",")]
    if not all(endpoints):
        raise ValueError("etcd:// needs host:port[,host:port...]")
    for endpoint in endpoints:
        host, colon, port = endpoint.rpartition(":")
        if "@" in endpoint or "/" in endpoint or "?" in endpoint:
            raise ValueError(
                "etcd:// takes only host:port endpoints: no user, path or query"
                " (authenticate with a client certificate)"
            )
        if not (colon and host and port.isdigit()):
            raise ValueError("etcd:// endpoints are host:port")
    taken = _take(options, _ETCD_OPTIONS)
    settings = etcd.EtcdOptions(
        **{name.removeprefix("etcd_"): value for name, value in taken.items()}
    )
    store = logstructured.Options(**_take(options, _STORE_OPTIONS))
    _reject_rest("etcd", options)
    return etcd.new_backend(endpoints, etcd=settings, options=store)


def _take(options: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    return {name: options.pop(name) for name in sorted(names & options.keys())}


def _reject_rest(scheme: str, options: dict[str, Any]) -> None:
    if options:
        raise TypeError(f"unknown {scheme} storage option(s): {', '.join(sorted(options))}")


def _supported() -> str:
    return ", ".join(f"{scheme}://" for scheme in sorted(_OPENERS))


_OPENERS: dict[str, Callable[[str, dict[str, Any]], Backend]] = {
    "etcd": _open_etcd,
    "memory": _open_memory,
    "sqlite": _open_sqlite,
}
