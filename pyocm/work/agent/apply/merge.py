"""Metadata merging as upstream's appliers do it (library-go's ``resourcemerge``).

Labels and annotations of the manifest are merged into the object's: a key ending in
``-`` removes that key instead (``kubectl label`` style). Owner references merge the
same way: one matching by name, kind and API group is replaced, a new one is appended,
and one whose uid ends in ``-`` removes its match (how the work agent drops its own
owner reference when a resource is to be orphaned).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pyocm.api.models.meta_v1 import OwnerReference

Obj = dict[str, Any]

REMOVAL_SUFFIX = "-"


def meta(obj: Obj) -> Obj:
    """``obj``'s metadata, made a dict when missing (so it can be written)."""
    found = obj.get("metadata")
    if not isinstance(found, dict):
        found = obj["metadata"] = {}
    return found


def merge_map(
    existing: Mapping[str, str] | None, required: Mapping[str, str] | None
) -> tuple[dict[str, str], bool]:
    """``existing`` with ``required`` merged in, and whether anything changed."""
    merged = dict(existing or {})
    modified = False
    for key, value in (required or {}).items():
        if key.endswith(REMOVAL_SUFFIX):
            actual = key.rstrip(REMOVAL_SUFFIX)
            if actual in merged:
                del merged[actual]
                modified = True
        elif key not in merged or merged[key] != value:
            merged[key] = value
            modified = True
    return merged, modified


def merge_owner_refs(
    existing: Sequence[Mapping[str, Any]] | None, required: Sequence[Mapping[str, Any]]
) -> tuple[list[OwnerReference], bool]:
    """``existing`` owner references with ``required`` merged in, and whether anything changed."""
    merged = [cast(OwnerReference, dict(ref)) for ref in existing or ()]
    modified = False
    for wanted in required:
        remove = str(wanted.get("uid", "")).endswith(REMOVAL_SUFFIX)
        index = next((i for i, ref in enumerate(merged) if _same_owner(wanted, ref)), None)
        if index is None:
            if not remove:
                merged.append(cast(OwnerReference, dict(wanted)))
                modified = True
        elif remove:
            del merged[index]
            modified = True
        elif merged[index] != wanted:
            merged[index] = cast(OwnerReference, dict(wanted))
            modified = True
    return merged, modified


def _same_owner(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Matched by name, kind and API group (not version, not uid), as library-go does."""
    if a.get("name") != b.get("name") or a.get("kind") != b.get("kind"):
        return False
    group_a, group_b = _group(a.get("apiVersion")), _group(b.get("apiVersion"))
    return group_a is not None and group_a == group_b


def _group(api_version: Any) -> str | None:
    """The group of ``apiVersion`` (``""`` for ``v1``), None when it does not parse."""
    text = str(api_version or "")
    if text.count("/") > 1:
        return None
    return text.partition("/")[0] if "/" in text else ""


def without_removals(obj: Obj) -> Obj:
    """A copy of ``obj`` without removal keys and removal owner references: what is
    created when the object does not exist yet."""
    clean = copy.deepcopy(obj)
    metadata = meta(clean)
    for field in ("labels", "annotations"):
        values = metadata.get(field)
        if isinstance(values, dict):
            metadata[field] = {k: v for k, v in values.items() if not k.endswith(REMOVAL_SUFFIX)}
    owners = metadata.get("ownerReferences")
    if isinstance(owners, list):
        metadata["ownerReferences"] = [
            ref
            for ref in owners
            if not (isinstance(ref, dict) and str(ref.get("uid", "")).endswith(REMOVAL_SUFFIX))
        ]
    return clean


def ensure_object_meta(existing: Obj, required: Obj) -> bool:
    """Write ``required``'s namespace, name, labels, annotations and owner references
    into ``existing``'s metadata (in place, merging); whether anything changed."""
    into, wanted = meta(existing), required.get("metadata") or {}
    modified = False
    for field in ("namespace", "name"):
        if wanted.get(field) and into.get(field) != wanted[field]:
            into[field] = wanted[field]
            modified = True
    for field in ("labels", "annotations"):
        merged, changed = merge_map(into.get(field), wanted.get(field))
        if changed:
            into[field] = merged
            modified = True
    owners, changed = merge_owner_refs(
        into.get("ownerReferences"), wanted.get("ownerReferences") or []
    )
    if changed:
        into["ownerReferences"] = owners
    return modified or changed


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two decoded JSON values as Go's ``DeepEqual`` on unstructured objects
    sees it: a boolean is never a number, a missing key never equals an empty value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def typed_equal(a: Any, b: Any) -> bool:
    """Equality as Go's ``equality.Semantic`` sees two typed values: an absent field is
    its zero value, so ``""``, ``0``, ``false``, ``null``, ``[]`` and ``{}`` equal absence."""
    return json_equal(zeroless(a), zeroless(b))


def zeroless(value: Any) -> Any:
    """``value`` with every zero-valued field dropped (recursively); None when all zero."""
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, zeroless(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        return [zeroless(item) for item in value] or None
    if value is None or value == "" or value is False:
        return None
    if isinstance(value, int | float) and value == 0:
        return None
    return value
