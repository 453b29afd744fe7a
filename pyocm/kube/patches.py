"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on plain JSON values.

Every function returns a new value and leaves its arguments untouched, so a caller can
keep the stored object for conflict checks. :class:`PatchError` carries the HTTP status
the apiserver answers for the failure, so the HTTP layer need not guess: 400 for a patch
document that cannot be decoded, 422 when a well-formed patch does not apply to this
object, 413 for more operations than the apiserver accepts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jsonpatch
import jsonpointer
import orjson

from pyocm.kube import jsonlimits

# apiserver's maxJSONPatchOperations: bounds the work one request can ask for.
MAX_JSON_PATCH_OPERATIONS = 10000
# apiserver's JSONPatchMaxCopyBytes (its request body limit): "copy" operations may add
# this many bytes (of the copied values' JSON) in all, or a small patch doubling a
# value again and again could grow an object without bound.
MAX_COPY_BYTES = 3 * 1024 * 1024

_OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")


class PatchError(ValueError):
    """A patch that cannot be applied; ``code`` is the status Kubernetes answers with."""

    def __init__(self, message: str, *, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(original: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch: ``null`` deletes a key, anything but an object
    replaces the target whole (lists included)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(original) if isinstance(original, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return {k: v if k in patch else copy.deepcopy(v) for k, v in result.items()}


def create_merge_patch(old: Any, new: Any) -> Any:
    """The smallest merge patch that turns ``old`` into ``new``.

    Removed keys become ``null``; changed objects are diffed recursively; any other change
    (lists included, as RFC 7386 cannot address list items) carries the new value whole.
    A ``null`` inside ``new`` cannot be expressed by a merge patch and reads as deletion.
    """
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return copy.deepcopy(new)
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            patch[key] = copy.deepcopy(value)
        elif isinstance(old[key], Mapping) and isinstance(value, Mapping):
            nested = create_merge_patch(old[key], value)
            if nested:
                patch[key] = nested
        elif not _same(old[key], value):
            patch[key] = copy.deepcopy(value)
    return patch


def json_patch(original: Any, operations: Any) -> Any:
    """Apply RFC 6902 ``operations`` to a copy of ``original``.

    Raises :class:`PatchError` with code 400 when ``operations`` is not a list of
    objects, 413 past :data:`MAX_JSON_PATCH_OPERATIONS`, and 422 with the reason when an
    operation is malformed, a path is missing, or a ``test`` fails.
    """
    if not isinstance(operations, list) or not all(isinstance(op, Mapping) for op in operations):
        raise PatchError("json: cannot unmarshal the patch into a list of operations", code=400)
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}",
            code=413,
        )
    for op in operations:
        _check_operation(op)
    document = copy.deepcopy(original)
    copied = 0
    for op in operations:
        if op["op"] == "copy":
            copied += _copy_size(document, op)
            if copied > MAX_COPY_BYTES:
                raise PatchError(
                    "Unable to complete the copy, the accumulated size increase of copy is "
                    f"{copied}, exceeding the limit {MAX_COPY_BYTES}"
                )
        document = _apply_one(document, op)
    return document


def _copy_size(document: Any, op: Mapping[str, Any]) -> int:
    """What one copy adds, counted before it runs, as evanphx/json-patch counts it."""
    try:
        value = jsonpointer.resolve_pointer(document, op["from"])
    except (jsonpointer.JsonPointerException, LookupError, TypeError):
        return 0  # the copy itself fails, naming the path
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        # Earlier operations nested the value past what can be encoded (or copied):
        # the document is refused as too deep, as it would be once patched.
        raise PatchError(str(jsonlimits.TooDeep(jsonlimits.MAX_DEPTH))) from None


def _apply_one(document: Any, op: Mapping[str, Any]) -> Any:
    """Apply one operation in place, naming the operation and path when it fails."""
    kind, path = op["op"], op["path"]
    try:
        if kind == "test":
            # Compared as JSON, where true is not 1, rather than with Python's ==.
            if not _same(jsonpointer.resolve_pointer(document, path), op["value"]):
                raise PatchError(f"testing value {path} failed: test failed")
            return document
        return jsonpatch.JsonPatch([copy.deepcopy(dict(op))]).apply(document, in_place=True)
    except RecursionError:  # a copy or test of a value nested far past the limit
        raise PatchError(str(jsonlimits.TooDeep(jsonlimits.MAX_DEPTH))) from None
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, LookupError, TypeError):
        if kind in ("move", "copy"):
            raise PatchError(
                f'{kind} operation does not apply: doc is missing from path: "{op["from"]}"'
            ) from None
        raise PatchError(
            f'{kind} operation does not apply: doc is missing path: "{path}"'
        ) from None


def _check_operation(op: Mapping[str, Any]) -> None:
    """Reject what the decoder would: unknown ops, and missing or mistyped members."""
    kind = op.get("op")
    if kind not in _OPERATIONS:
        raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    if not isinstance(op.get("path"), str):
        raise PatchError(f'{kind} operation does not apply: missing "path"')
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f'{kind} operation does not apply: missing "value"')
    if kind in ("move", "copy") and not isinstance(op.get("from"), str):
        raise PatchError(f'{kind} operation does not apply: missing "from"')


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1`` and ``1`` is ``1.0``, unlike Python's ``==``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return (type(a) is type(b) and a == b) or _numbers(a, b)


def _numbers(a: Any, b: Any) -> bool:
    return isinstance(a, int | float) and isinstance(b, int | float) and a == b
