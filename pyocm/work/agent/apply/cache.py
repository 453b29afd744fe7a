"""The Update strategy's record of what it applied: library-go's ``resourceCache``
(``SafeToSkipApply`` and ``UpdateCachedResourceMetadata``), which upstream's
``UpdateApply`` passes to every apply (pkg/work/spoke/apply/resource_cache.go).

After an apply, an object maps to a fingerprint of the manifest as applied (with the
work's owner on it) and the resourceVersion the cluster answered with. While both still
match, the same manifest over an object nobody has written since, the apply is skipped
without comparing or writing: a write would only send again what produced that
resourceVersion. Without it, an object the server defaults (a Deployment whose manifest
leaves out fields the server fills in) would be written at every resync.

Two differences from upstream, both only skipping writes that could change nothing:
upstream's generic path records the object it merged for the write, so its record stops
matching after the first update (the skip then lasts only from a create to the first
change of the object), while this one records the manifest, as library-go's typed
appliers do; and library-go's appliers for RBAC objects, PodDisruptionBudgets, CRDs,
StorageClasses and CSIDrivers keep no record, while every Update apply here does.

Upstream's cache never forgets (its own TODO says so); this one is kept small for
fleets of simulated clusters in one process: its owner calls :meth:`ResourceCache.prune`
after each round of applies, which drops the entries that round did not use, the
objects no longer applied.
"""

from __future__ import annotations

import hashlib

import orjson

from pyocm.kube.kinds import Kind
from pyocm.work.agent.apply.merge import Obj, meta

#: An object's identity: group, resource (plural), namespace ("" if cluster-scoped), name.
Key = tuple[str, str, str, str]


def fingerprint(required: Obj) -> bytes:
    """A digest of ``required`` (keys sorted), to compare manifests without keeping them."""
    return hashlib.blake2b(
        orjson.dumps(required, option=orjson.OPT_SORT_KEYS), digest_size=16
    ).digest()


class ResourceCache:
    """Fingerprint and resourceVersion of each object last applied, by object.

    Not safe for concurrent use on the same object; the manifest work controller keeps
    one per work, and never reconciles one work twice at once."""

    def __init__(self) -> None:
        self._entries: dict[Key, tuple[bytes, str]] = {}
        self._used: set[Key] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def safe_to_skip(self, kind: Kind, applying: bytes, existing: Obj) -> bool:
        """Whether the manifest of fingerprint ``applying`` was the last applied to
        ``existing`` and the object has not been written since (same resourceVersion)."""
        key = _key(kind, existing)
        self._used.add(key)
        version = meta(existing).get("resourceVersion")
        return bool(version) and self._entries.get(key) == (applying, version)

    def record(self, kind: Kind, applied: bytes, actual: Obj) -> None:
        """Remember that the manifest of fingerprint ``applied`` made ``actual`` (the
        cluster's answer, or the object left as it was)."""
        key = _key(kind, actual)
        self._used.add(key)
        version = meta(actual).get("resourceVersion")
        if version:
            self._entries[key] = (applied, str(version))
        else:
            self._entries.pop(key, None)

    def prune(self) -> None:
        """Drop the entries not used since the last prune: objects no longer applied."""
        for key in self._entries.keys() - self._used:
            del self._entries[key]
        self._used.clear()


def _key(kind: Kind, obj: Obj) -> Key:
    metadata = meta(obj)
    namespace = str(metadata.get("namespace") or "") if kind.namespaced else ""
    return (kind.group, kind.plural, namespace, str(metadata.get("name") or ""))
