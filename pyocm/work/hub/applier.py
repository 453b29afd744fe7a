"""Bringing a ManifestWork to what a hub controller wants, as sdk-go's WorkApplier does.

Two works are equal when their specs are (Go's semantic equality over the typed spec: an
absent, ``null`` or empty list is the same; each manifest compared as JSON with the
``creationTimestamp`` Go's decoding adds taken out) and their labels, annotations and
owner references are. An unequal work gets a JSON merge patch computed from the old
labels/annotations/ownerReferences/spec to the new ones, so what the new work leaves out
(a template field removed, a label dropped) is removed, not kept as a plain merge of
the new spec would keep it; the patch carries the work's uid and resourceVersion, so a
work changed or replaced meanwhile gives a Conflict and the next reconcile retries.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import orjson

from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.kube.patches import create_merge_patch
from pyocm.runtime.client import Api

Obj = dict[str, Any]
#: What the applier owns on a work: everything else (status, other metadata) is left.
_META_FIELDS = ("labels", "annotations", "ownerReferences")


def spec_equal(wanted: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    """Whether two ManifestWork specs are equal as upstream compares them."""
    return _canonical(_mutated(wanted)) == _canonical(_mutated(found))


def works_equal(wanted: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    """Whether ``found`` already is ``wanted``: spec, labels, annotations and owner
    references (an empty map or list counts as absent, as Go's ``omitempty``)."""
    if not spec_equal(wanted.get("spec") or {}, found.get("spec") or {}):
        return False
    new, old = wanted.get("metadata") or {}, found.get("metadata") or {}
    return all(
        _canonical(new.get(key) or None) == _canonical(old.get(key) or None) for key in _META_FIELDS
    )


def update_patch(wanted: Mapping[str, Any], found: ManifestWork) -> Obj:
    """The merge patch taking ``found`` to ``wanted`` (labels, annotations, owner
    references and spec), conditional on ``found``'s uid and resourceVersion."""
    old_meta, new_meta = found["metadata"], wanted.get("metadata") or {}
    old = {"metadata": _owned(old_meta), "spec": found.get("spec") or {}}
    new = {"metadata": _owned(new_meta), "spec": wanted.get("spec") or {}}
    patch: Obj = create_merge_patch(old, new)
    meta = patch.setdefault("metadata", {})
    meta["uid"] = old_meta.get("uid")
    meta["resourceVersion"] = old_meta.get("resourceVersion")
    return patch


async def apply(api: Api, wanted: Mapping[str, Any], found: ManifestWork | None) -> Obj | None:
    """Create ``wanted`` (by its ``generateName`` when it has no name) when ``found`` is
    None; else patch ``found`` to it unless they are already equal. Returns the work
    written, or None when nothing was."""
    if found is None:
        return await api.create(ocm.MANIFEST_WORK, copy.deepcopy(dict(wanted)))
    if works_equal(wanted, found):
        return None
    meta = found["metadata"]
    return await api.patch(
        ocm.MANIFEST_WORK,
        meta["name"],
        update_patch(wanted, found),
        namespace=meta.get("namespace"),
    )


def _owned(meta: Mapping[str, Any]) -> Obj:
    # Go marshals an empty map or list with omitempty as nothing at all.
    return {key: meta[key] for key in _META_FIELDS if meta.get(key)}


def _mutated(spec: Mapping[str, Any]) -> Any:
    """The spec with each manifest's ``metadata.creationTimestamp`` and
    ``spec.template.metadata.creationTimestamp`` taken out (Go's decoding adds them as
    null), and lists, nulls and empty lists elsewhere as the typed spec holds them."""
    out = _drop_empty({k: v for k, v in spec.items() if k != "workload"})
    workload = spec.get("workload")
    if isinstance(workload, Mapping):
        manifests = [_without_timestamps(m) for m in workload.get("manifests") or []]
        rest = _drop_empty({k: v for k, v in workload.items() if k != "manifests"})
        out["workload"] = {**rest, **({"manifests": manifests} if manifests else {})}
    return out


def _without_timestamps(manifest: Any) -> Any:
    if not isinstance(manifest, Mapping):
        return manifest
    found = copy.deepcopy(dict(manifest))
    metadata = found.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("creationTimestamp", None)
    template = (
        (found.get("spec") or {}).get("template") if isinstance(found.get("spec"), dict) else None
    )
    if isinstance(template, dict) and isinstance(template.get("metadata"), dict):
        template["metadata"].pop("creationTimestamp", None)
    return found


def _drop_empty(value: Any) -> Any:
    """Nulls and empty lists out of typed fields (Go: a nil and an empty slice are
    semantically equal, and a null decodes to the zero value)."""
    if isinstance(value, Mapping):
        kept = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != []}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def _canonical(value: Any) -> bytes:
    # JSON equality: sorted keys; an integral float is the integer Go would print.
    return orjson.dumps(_integral(value), option=orjson.OPT_SORT_KEYS)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


__all__ = ["apply", "spec_equal", "update_patch", "works_equal"]
