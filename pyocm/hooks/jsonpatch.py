"""The RFC 6902 JSON Patch a mutating webhook answers: from the object it was sent to the
object it wants stored (controller-runtime's ``PatchResponseFromRaw`` does the same).

Only ``add``, ``remove`` and ``replace``: an object's changed keys each get one operation
(recursing into values that are objects on both sides); an array keeps its common
prefix, patches the items at the same index, then appends or removes the rest from the
end (so each index is valid when its operation applies). Keys are written as JSON
Pointer reference tokens (``~`` as ``~0``, ``/`` as ``~1``), which label and annotation
keys such as ``cluster.open-cluster-management.io/clusterset`` need.

Values are compared as JSON compares them: ``true`` is no ``1`` (Python's ``True == 1``
would hide that change), ``1`` and ``1.0`` are the same number.
"""

from __future__ import annotations

from typing import Any

Operation = dict[str, Any]


def diff(before: Any, after: Any) -> list[Operation]:
    """The operations that turn ``before`` into ``after``; [] when they are equal."""
    ops: list[Operation] = []
    _diff(before, after, "", ops)
    return ops


def pointer_token(key: str) -> str:
    """RFC 6901: ``~`` first, then ``/``, so ``~1`` in a key stays distinguishable."""
    return key.replace("~", "~0").replace("/", "~1")


def same(a: Any, b: Any) -> bool:
    """JSON equality: types matter (booleans apart from numbers), key order does not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _diff(before: Any, after: Any, path: str, ops: list[Operation]) -> None:
    if same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{pointer_token(key)}"})
        for key, value in after.items():
            child = f"{path}/{pointer_token(key)}"
            if key in before:
                _diff(before[key], value, child, ops)
            else:
                ops.append({"op": "add", "path": child, "value": value})
        return
    if isinstance(before, list) and isinstance(after, list):
        common = min(len(before), len(after))
        for index in range(common):
            _diff(before[index], after[index], f"{path}/{index}", ops)
        for index in range(common, len(after)):
            ops.append({"op": "add", "path": f"{path}/{index}", "value": after[index]})
        for index in reversed(range(common, len(before))):
            ops.append({"op": "remove", "path": f"{path}/{index}"})
        return
    ops.append({"op": "replace", "path": path, "value": after})
