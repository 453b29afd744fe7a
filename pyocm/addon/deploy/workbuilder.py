"""Objects into ManifestWorks of bounded size, as sdk-go's ``WorkBuilder`` splits them.

Given the objects wanted and the works that exist, each existing work keeps the wanted
objects it already holds (updated in place, so an object never moves between works
while it stays wanted); objects new to every work go, largest first, into the existing
work with the most room left, else into new works filled up to the limit. An existing
work left holding nothing is deleted. Every work gets the same options (manifest
configs, delete option, annotations) and the metadata ``meta(index)`` makes.

Sizes are what upstream measures: the protobuf size of a ``Manifest`` holding the
object's JSON as Go encodes it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.addon.hub.spechash import go_json
from pyocm.api import kinds as ocm
from pyocm.api.models.meta_v1 import ObjectMeta
from pyocm.api.models.work_v1 import (
    ManifestWork,
    ManifestWorkSpecDeleteOption,
    ManifestWorkSpecManifestConfig,
)

Obj = dict[str, Any]
#: ``DefaultManifestThreshold``: a new work is filled to this share of the limit.
THRESHOLD = 0.8
#: The metadata of the work at an index (its name must be unique per index).
MetaOf = Callable[[int], ObjectMeta]


class BuildError(ValueError):
    """An object cannot be put in a work (no kind or version)."""


@dataclass(frozen=True)
class Options:
    """What every built work carries besides its manifests."""

    manifest_configs: Sequence[ManifestWorkSpecManifestConfig] = ()
    delete_option: ManifestWorkSpecDeleteOption | None = None
    annotations: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Built:
    """The works to apply (new or updated) and those to delete."""

    apply: list[ManifestWork]
    delete: list[ManifestWork]


@dataclass
class _Buffer:
    work: ManifestWork
    room: int


def limit_of(manifests_limit: int) -> int:
    """``WithManifestsLimit``: the bytes a new work is filled to."""
    return int(manifests_limit * THRESHOLD)


def build(
    objects: Sequence[Obj],
    meta: MetaOf,
    *,
    existing: Sequence[ManifestWork],
    options: Options,
    limit: int,
) -> Built:
    """``WorkBuilder.Build``: the works holding ``objects`` given the ``existing`` ones."""
    required = {_key(obj): copy.deepcopy(obj) for obj in objects}
    updated: list[_Buffer] = []
    for found in existing:
        work = _new_work(meta(0), options)
        work["metadata"]["name"] = found["metadata"]["name"]
        held = work["spec"]["workload"]["manifests"]
        for manifest in found.get("spec", {}).get("workload", {}).get("manifests") or []:
            key = _key(manifest)
            if key in required:
                held.append(required.pop(key))
        updated.append(_Buffer(work, max(limit - sum(map(size, held)), 0)))

    applied: list[ManifestWork] = []
    if required:
        fresh: list[Obj] = []
        # Largest first (a stable sort: equal sizes keep the objects' order).
        for manifest in sorted(required.values(), key=size, reverse=True):
            roomiest = _roomiest(updated)
            if roomiest is not None and size(manifest) < roomiest.room:
                roomiest.work["spec"]["workload"]["manifests"].append(manifest)
                roomiest.room -= size(manifest)
            else:
                fresh.append(manifest)
        if fresh:
            applied.extend(_new_works(fresh, len(updated), meta, options, limit))

    deleted = [b.work for b in updated if not b.work["spec"]["workload"]["manifests"]]
    applied.extend(b.work for b in updated if b.work["spec"]["workload"]["manifests"])
    return Built(applied, deleted)


def size(manifest: Obj) -> int:
    """``Manifest.Size()``: a protobuf ``Manifest`` wrapping a ``RawExtension`` of the
    object's Go JSON."""
    raw = len(go_json(manifest).encode())
    return _field(_field(raw))


def _field(length: int) -> int:
    """One length-delimited protobuf field: tag, length varint, bytes."""
    varint = 1
    while length >= 1 << (7 * varint):
        varint += 1
    return 1 + varint + length


def _key(obj: Obj) -> tuple[str, str, str, str]:
    """``manifestKey``: group/version, kind, namespace, name."""
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    version = str(api_version).rpartition("/")[2]
    if not kind or not version:
        raise BuildError(f"got empty kind/version from object {go_json(obj)}")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return str(api_version), str(kind), str(meta.get("namespace", "")), str(meta.get("name", ""))


def _roomiest(buffers: list[_Buffer]) -> _Buffer | None:
    """The first work with the most room (none when every work is full)."""
    best: _Buffer | None = None
    for buffer in buffers:
        if buffer.room > (best.room if best is not None else 0):
            best = buffer
    return best


def _new_works(
    manifests: list[Obj], index: int, meta: MetaOf, options: Options, limit: int
) -> list[ManifestWork]:
    work = _new_work(meta(index), options)
    works = [work]
    total = 0
    for manifest in manifests:
        grown = size(manifest)
        if total + grown < limit:
            work["spec"]["workload"]["manifests"].append(manifest)
            total += grown
            continue
        index += 1
        work = _new_work(meta(index), options)
        works.append(work)
        work["spec"]["workload"]["manifests"].append(manifest)
        total = grown
    return works


def _new_work(meta: ObjectMeta, options: Options) -> ManifestWork:
    metadata: ObjectMeta = copy.deepcopy(meta)
    if options.annotations:
        metadata["annotations"] = dict(options.annotations)
    work: ManifestWork = {
        "apiVersion": ocm.MANIFEST_WORK.api_version,
        "kind": ocm.MANIFEST_WORK.kind,
        "metadata": metadata,
        "spec": {"workload": {"manifests": []}},
    }
    if options.manifest_configs:
        work["spec"]["manifestConfigs"] = copy.deepcopy(list(options.manifest_configs))
    if options.delete_option is not None:
        work["spec"]["deleteOption"] = copy.deepcopy(options.delete_option)
    return work
