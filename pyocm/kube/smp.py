"""Strategic merge patch, as apimachinery's ``strategicpatch`` applies it on the server.

A strategic merge patch is a JSON merge patch whose lists follow the Go struct tags of
``k8s.io/api``: a list tagged ``patchStrategy:"merge"`` is merged by its
``patchMergeKey`` (or as a set of primitives), every other list is replaced. Directives:
``$patch: replace|delete`` on maps and list items, ``$retainKeys``,
``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>``. ``$patch: merge``
is refused, as apimachinery refuses it. Failures raise :class:`patches.PatchError` with
the status the apiserver answers: 400 for malformed directives, 422 for lists of lists,
500 where apimachinery lets the error through uninterpreted.

Go decodes the result into typed structs, which drops leftover directive keys; since
pyocm stores plain JSON, directive keys are stripped from values taken whole instead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.kube.patches import PatchError

PATCH = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder"
DELETE_FROM = "$deleteFromPrimitiveList"
_MISSING = ("missing",)  # the identity of an item without the merge key


@dataclass(frozen=True)
class Schema:
    """Patch metadata for one value, from its Go struct tags.

    ``fields`` holds struct members and ``elements`` the schema of list items or map
    values; a field found in neither merges as a map or is replaced as a list, the
    default for untagged fields. ``merge`` is ``patchStrategy:"merge"`` (by ``merge_key``,
    or as a set when there is none). ``retain_keys`` records ``patchStrategy:"retainKeys"``
    for clients that compose patches; applying honours a ``$retainKeys`` directive
    wherever it appears, as apimachinery does.
    """

    fields: Mapping[str, Schema] = field(default_factory=dict)
    elements: Schema | None = None
    merge: bool = False
    merge_key: str = ""
    retain_keys: bool = False

    def child(self, name: str) -> Schema:
        return self.fields.get(name) or self.elements or OPAQUE


OPAQUE = Schema()


def strategic_merge(original: Any, patch: Any, *, schema: Schema) -> dict[str, Any]:
    """Apply ``patch`` to ``original``; neither argument is modified."""
    if not isinstance(original, dict):
        raise PatchError("invalid JSON document", code=400)
    if not isinstance(patch, dict):
        shown = "array" if isinstance(patch, list) else "value"
        raise PatchError(
            f"json: cannot unmarshal {shown} into Go value of type map[string]interface {{}}",
            code=400,
        )
    return _merge_map(copy.deepcopy(original), copy.deepcopy(patch), schema)


def schema_for(api_version: str, kind: str) -> Schema | None:
    """The schema of a built-in kind the server serves, or ``None`` (custom resources and
    unknown kinds, which Kubernetes answers with 415 Unsupported Media Type)."""
    found = _SCHEMAS.get((api_version, kind))
    if found is None:
        from pyocm.kube import patchmeta  # it builds on this module's Schema

        found = patchmeta.kind_schema(api_version, kind)
    return found


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """``mergeMap``: directives first, then each key by the kind of its two values."""
    if PATCH in patch:
        return _map_directive(patch)
    _retain_keys(original, patch)
    _apply_element_orders(original, patch, schema)
    for key, value in list(patch.items()):
        delete_list = key.startswith(DELETE_FROM)
        if delete_list:
            key = _field_of(key, DELETE_FROM)
        if value is None:
            original.pop(key, None)
        elif key not in original or _kind(original[key]) != _kind(value):
            if not delete_list:
                _set_clean(original, key, value)
        elif isinstance(value, dict):
            original[key] = _merge_map(original[key], value, schema.child(key))
        elif isinstance(value, list):
            original[key] = _merge_list_field(original[key], value, schema.child(key), delete_list)
        else:
            original[key] = value
    return original


def _map_directive(patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch[PATCH]
    if directive == "replace":
        replaced: dict[str, Any] = _clean({k: v for k, v in patch.items() if k != PATCH})
        return replaced
    if directive == "delete":
        return {}
    raise PatchError(f"unknown patch type: {_go(directive)} in map: {_go(patch)}", code=500)


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """Drop from ``original`` every key not listed; the patch may only set listed keys."""
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise PatchError("invalid patch format of retainKeys", code=400)
    allowed = {k for k in retained if isinstance(k, str)}
    for key, value in patch.items():
        if (
            value is not None
            and not key.startswith((DELETE_FROM, SET_ORDER))
            and key not in allowed
        ):
            raise PatchError("invalid patch format of retainKeys", code=400)
    for key in [k for k in original if k not in allowed]:
        del original[key]


def _apply_element_orders(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> None:
    """``mergePatchIntoOriginal``: merge each list that has a ``$setElementOrder`` and
    order it by that list, then the patch, then the live object."""
    for key in [k for k in patch if k.startswith(SET_ORDER)]:
        order = _require_list(patch.pop(key))
        name = _field_of(key, SET_ORDER)
        sub = schema.child(name)
        live, change = _list_or_none(original, name), _list_or_none(patch, name)
        _check_order(change or [], order, sub.merge_key)
        if live is None and change is None:
            continue
        if change is None:
            merged = live or []
        elif live is None:
            merged = _clean(change)
        else:
            merged = _merge_list_field(live, change, sub, False)
        in_order, server_only = _partition(merged, order, sub.merge_key)
        is_map = _element_kind((live or []) + (change or [])) == "map"
        server_order = live or []
        if live and change and sub.merge and is_map:
            server_order = _aliased_live(live, change, sub.merge_key)
        original[name] = _normalize(
            in_order, server_only, order, server_order, sub.merge_key, is_map
        )
        patch.pop(name, None)


def _aliased_live(live: list[Any], change: list[Any], key: str) -> list[Any]:
    """The live list as apimachinery sees it after merging ``change`` into it.

    Go deletes list items by shifting them left in the same backing array, and appends new
    items into the freed slots, so the "live order" used to place server-only items also
    contains the deletions' leftovers and the additions. Replaying that keeps element order
    identical to Kubernetes when one patch both deletes and adds items.
    """
    slots, length = list(live), len(live)
    for item in change:
        if isinstance(item, dict) and item.get(PATCH) == "delete":
            while (i := _index(slots[:length], item, key)) >= 0:
                slots[i : length - 1] = slots[i + 1 : length]
                length -= 1
    if any(isinstance(item, dict) and item.get(PATCH) == "replace" for item in change):
        return slots  # the merge then builds a new list and leaves these slots alone
    for item in change:
        if PATCH in item or _index(slots[:length], item, key) >= 0:
            continue
        if length == len(slots):
            break  # a full array is reallocated: later additions land elsewhere
        slots[length] = item
        length += 1
    return slots


def _merge_list_field(
    live: list[Any], change: list[Any], schema: Schema, delete_list: bool
) -> list[Any]:
    if schema.merge or delete_list:
        return _merge_list(live, change, schema, delete_list)
    replaced: list[Any] = _clean(change)
    return replaced


def _merge_list(live: list[Any], change: list[Any], schema: Schema, delete_list: bool) -> list[Any]:
    """``mergeSlice``: a set union of primitives, or items merged by the merge key."""
    if not live and not change:
        return live
    key = schema.merge_key
    is_map = _element_kind(live + change) == "map"
    if not is_map:
        if delete_list:
            doomed = {_scalar(v) for v in change}
            return [v for v in live if _scalar(v) not in doomed]
        merged = list({_scalar(v): v for v in live + change}.values())
    else:
        if not key:
            raise PatchError("cannot merge lists without merge key for type map", code=500)
        live, change = _special_items(live, change, key)
        merged = _merge_items(live, change, key, schema.elements or OPAQUE)
    in_patch, server_only = _partition(merged, change, key)
    return _normalize(in_patch, server_only, change, live, key, is_map)


def _special_items(live: list[Any], change: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """Apply ``$patch`` items: ``delete`` drops matching live items, ``replace`` makes the
    other patch items the whole list."""
    plain, replace = [], False
    for item in change:
        if PATCH not in item:
            plain.append(item)
        elif item[PATCH] == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            live = [v for v in live if _merge_value(v, key) != _scalar(item[key])]
        elif item[PATCH] == "replace":
            replace = True
        elif item[PATCH] == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch", code=500)
        else:
            raise PatchError(
                f"unknown patch type: {_go(item[PATCH])} in map: {_go(item)}", code=500
            )
    return (plain, []) if replace else (live, plain)


def _merge_items(live: list[Any], change: list[Any], key: str, schema: Schema) -> list[Any]:
    merged = list(live)
    for item in change:
        if key not in item:
            raise _no_merge_key(item, key)
        wanted = _scalar(item[key])
        index = next((i for i, v in enumerate(merged) if _merge_value(v, key) == wanted), None)
        if index is None:
            merged.append(_clean(item))
        else:
            merged[index] = _merge_map(merged[index], item, schema)
    return merged


def _check_order(change: list[Any], order: list[Any], key: str) -> None:
    """``validatePatchWithSetOrderList``: patch items must appear in the order list, in
    the same relative order (deletions aside)."""
    if not change or not order:
        return
    pending = [v for v in change if not (isinstance(v, dict) and v.get(PATCH) == "delete")]
    position, step = 0, 0
    while position < len(pending) and step < len(order):
        item = pending[position]
        if isinstance(item, dict) and PATCH in item:
            position += 1
            continue
        if _same_key(item, order[step], key):
            position += 1
        step += 1
    if position < len(pending):
        raise PatchError(
            f"the order in patch list:\n{_go(change)}\n doesn't match {SET_ORDER} list:\n{_go(order)}",
            code=500,
        )


def _same_key(left: Any, right: Any, key: str) -> bool:
    if not key:
        return bool(_scalar(left) == _scalar(right))
    for item in (left, right):
        if not isinstance(item, dict) or key not in item:
            raise _no_merge_key(item, key)
    return bool(_scalar(left[key]) == _scalar(right[key]))


def _partition(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """Split ``items`` into those present in ``by`` (same merge key, or equal) and the rest."""
    wanted = {_identity(v, key) for v in by} - {_MISSING}
    inside = [v for v in items if _identity(v, key) in wanted]
    return inside, [v for v in items if _identity(v, key) not in wanted]


def _normalize(
    in_patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    live: list[Any],
    key: str,
    is_map: bool,
) -> list[Any]:
    """``normalizeElementOrder``: sort each part by its own order, then interleave them,
    placing a server-only item before a patch item only when the live list did so."""
    mk = key if is_map else ""
    if is_map:
        for item in in_patch + server_only + patch_order + live:
            if not isinstance(item, dict) or key not in item:
                raise _no_merge_key(item, key)
    in_patch = _sorted_by(in_patch, patch_order, mk)
    server_only = _sorted_by(server_only, live, mk)
    result, i, j = [], 0, 0
    while i < len(server_only) and j < len(in_patch):
        left, right = _index(live, server_only[i], mk), _index(live, in_patch[j], mk)
        if left >= 0 and right >= 0 and left < right:
            result.append(server_only[i])
            i += 1
        else:
            result.append(in_patch[j])
            j += 1
    return result + server_only[i:] + in_patch[j:]


def _sorted_by(items: list[Any], order: list[Any], key: str) -> list[Any]:
    # Every item is in its order list; the fallback only keeps sorting total.
    return sorted(items, key=lambda item: _index(order, item, key) % (len(order) + 1))


def _index(items: list[Any], item: Any, key: str) -> int:
    wanted = _identity(item, key)
    return next((i for i, v in enumerate(items) if _identity(v, key) == wanted), -1)


def _identity(item: Any, key: str) -> Any:
    return _merge_value(item, key) if key else _scalar(item)


def _merge_value(item: Any, key: str) -> Any:
    return _scalar(item[key]) if isinstance(item, dict) and key in item else _MISSING


def _scalar(value: Any) -> Any:
    """A hashable identity with JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(value, dict | list):
        return ("json", repr(value))
    return (_kind(value), value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "map"
    return "list" if isinstance(value, list) else "string"


def _element_kind(items: list[Any]) -> str:
    """``sliceElementType``: every item of one kind, and no lists of lists."""
    kinds = {_kind(v) for v in items}
    if "list" in kinds:
        raise PatchError("lists of lists are not supported", code=422)
    if len(kinds) > 1:
        raise PatchError(f"list element types are not identical: {_go(items)}", code=500)
    if not kinds:
        raise PatchError("no elements in any of the given slices", code=500)
    return kinds.pop()


def _field_of(key: str, prefix: str) -> str:
    head, _, name = key.partition("/")
    if head != prefix or not _:
        kind = "primitive list" if prefix == DELETE_FROM else "setElementOrder list"
        raise PatchError(f"invalid patch format of {kind}", code=400)
    return name


def _list_or_none(doc: dict[str, Any], name: str) -> list[Any] | None:
    return _require_list(doc[name]) if name in doc else None


def _require_list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise PatchError(f"expected a list, but received a {_kind(value)}", code=500)
    return value


def _no_merge_key(item: Any, key: str) -> PatchError:
    return PatchError(f"map: {_go(item)} does not contain declared merge key: {key}", code=500)


def _set_clean(doc: dict[str, Any], key: str, value: Any) -> None:
    """Take a new value whole, minus nulls in its maps and any directive it carries."""
    if isinstance(value, dict) and PATCH in value:
        doc.pop(key, None)
    else:
        doc[key] = _clean(value)


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _clean(v)
            for k, v in value.items()
            if v is not None and not k.startswith("$") and not (isinstance(v, dict) and PATCH in v)
        }
    if isinstance(value, list):
        return [_clean(v) for v in value if not (isinstance(v, dict) and PATCH in v)]
    return value


def _go(value: Any) -> str:
    """Roughly Go's ``%v`` of decoded JSON, for messages."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _struct(**fields: Schema) -> Schema:
    return Schema(fields=fields)


def _merged(key: str = "") -> Schema:
    """A ``patchStrategy:"merge"`` list, by ``key`` or (without one) as a set."""
    return Schema(merge=True, merge_key=key)


def _object(**fields: Schema) -> Schema:
    # ObjectMeta: ownerReferences merge by uid, finalizers as a set, labels and
    # annotations are maps, managedFields is untagged and so replaced.
    metadata = _struct(ownerReferences=_merged("uid"), finalizers=_merged())
    return _struct(metadata=metadata, **fields)


_CONDITIONS = _merged("type")
_RBAC = "rbac.authorization.k8s.io/v1"
# Lists not named here are untagged in k8s.io/api and replaced whole: RBAC rules and
# subjects, CSR usages and conditions, Node taints, Namespace spec.finalizers,
# ServiceAccount imagePullSecrets, CRD versions.
_SCHEMAS: dict[tuple[str, str], Schema] = {
    ("v1", "Namespace"): _object(status=_struct(conditions=_CONDITIONS)),
    ("v1", "ConfigMap"): _object(),
    ("v1", "Secret"): _object(),
    ("v1", "ServiceAccount"): _object(secrets=_merged("name")),
    ("v1", "Event"): _object(),
    ("v1", "Node"): _object(spec=_struct(podCIDRs=_merged()),
                            status=_struct(conditions=_CONDITIONS, addresses=_merged("type"))),
    ("events.k8s.io/v1", "Event"): _object(),
    ("coordination.k8s.io/v1", "Lease"): _object(),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): _object(),
    (_RBAC, "Role"): _object(), (_RBAC, "ClusterRole"): _object(),
    (_RBAC, "RoleBinding"): _object(), (_RBAC, "ClusterRoleBinding"): _object(),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): _object(),
}  # fmt: skip
