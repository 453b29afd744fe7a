"""Validate a custom resource against its compiled CRD schema, as kube-apiserver does.

:func:`validate` runs kube-apiserver's three passes in its order:

1. the OpenAPI schema walk (kube-openapi's validator): type and ``nullable``, ``anyOf``/
   ``oneOf``/``allOf``/``not``, string length and ``pattern``, ``format``, number bounds
   and ``multipleOf``, item and property counts, ``enum``, ``required`` and maps
   (``additionalProperties``);
2. embedded resources (``x-kubernetes-embedded-resource``): ``apiVersion`` and ``kind``
   are required and well formed, embedded ``metadata`` decodes as ObjectMeta and its
   ``name``/``generateName``/``namespace`` are valid;
3. ``x-kubernetes-list-type`` ``set`` and ``map`` uniqueness.

kube-openapi words its messages as ``"<path> in body should ..."``; apiextensions turns each
into a field error (``Required value``, ``Unsupported value``, ``Too long``, ``Too many``,
``Invalid value`` with the type name for type errors, ``Invalid value`` with the offending
value otherwise) and this module does the same, so the causes of a 422 read as Kubernetes'.
``anyOf``/``oneOf``/``allOf``/``not`` failures are not tied to a field there: they carry the
field ``<nil>`` when validating a whole object.

Not done: CEL ``x-kubernetes-validations`` rules are ignored, validation ratcheting on
update is not applied, and embedded ObjectMeta labels, annotations and owner references are
not checked (the root ObjectMeta is the generic store's job).
"""

from __future__ import annotations

import decimal
import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from pyocm.apiserver.apiextensions import schema
from pyocm.apiserver.apiextensions.schema import CompiledSchema, Node
from pyocm.kube import status
from pyocm.kube.status import ErrorType, FieldError

_NIL = "<nil>"
_JSON_LIMIT = 2**53
_KINDS: dict[type, tuple[str, str]] = {
    bool: ("boolean", ""),
    str: ("string", ""),
    int: ("integer", "int64"),
    float: ("number", "float64"),
    list: ("array", ""),
    dict: ("object", ""),
}


def validate(
    obj: Any, compiled: CompiledSchema, *, kind: str = "", api_version: str = ""
) -> list[FieldError]:
    """All schema errors of a custom resource; ``[]`` when it is valid.

    ``kind``/``api_version``, when given, must match the object's type meta first (as
    apiextensions checks before anything else); a mismatch is the only error returned.
    """
    if errs := _type_meta_errors(obj, kind=kind, api_version=api_version):
        return errs
    errs = validate_value(obj, compiled.root)
    if compiled.root.walk_embedded:
        _embedded(obj, compiled.root, "", errs)
    if compiled.root.walk_lists:
        _lists(obj, compiled.root, "", errs)
    return errs


def validate_value(value: Any, node: Node, *, prefix: str | None = None) -> list[FieldError]:
    """The OpenAPI pass alone; field paths are appended to ``prefix`` (a schema path for defaults)."""
    run = _Run(prefix)
    _check(node, value, "", run)
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for err in run.out:  # kube-openapi reports each distinct message once
        key = (err.type.reason, err.field, err.detail)
        if key not in seen:
            seen.add(key)
            unique.append(err)
    return unique


def _type_meta_errors(obj: Any, *, kind: str, api_version: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not isinstance(obj, dict):
        return errs
    if kind and obj.get("kind") != kind:
        errs.append(status.invalid("kind", obj.get("kind", ""), f"must be {kind}"))
    if api_version and obj.get("apiVersion") != api_version:
        errs.append(
            status.invalid("apiVersion", obj.get("apiVersion", ""), f"must be {api_version}")
        )
    return errs


@dataclass(slots=True)
class _Run:
    """One OpenAPI walk: where its paths start and the errors found, in kube-openapi's order."""

    prefix: str | None
    out: list[FieldError] = field(default_factory=list)

    def path(self, name: str) -> str:
        name = name[1:] if name.startswith(".") else name
        if not name:
            return self.prefix if self.prefix is not None else _NIL
        return f"{self.prefix}.{name}" if self.prefix else name

    def invalid(self, name: str, value: Any, detail: str) -> None:
        self.out.append(status.invalid(self.path(name), value, detail))

    def type_invalid(self, name: str, type_name: str, value: str) -> None:
        detail = f"{name} in body must be of type {type_name}: {_go_quote(value)}"
        self.out.append(FieldError(ErrorType.TYPE_INVALID, self.path(name), detail, value))

    def composite(self, detail: str) -> None:
        self.out.append(
            status.invalid(self.prefix if self.prefix is not None else _NIL, "", detail)
        )


def _check(node: Node, data: Any, name: str, run: _Run) -> int:
    """Validate ``data`` at ``name``, appending to ``run``; returns how many checks held.

    The count plays the part of kube-openapi's match count: when no ``anyOf``/``oneOf``
    branch holds, the failures of the branch that got furthest are the ones reported.
    """
    if data is None:
        return _check_null(node, name, run)
    count = 1
    if node.types or node.format:
        count += _check_type(node, data, name, run)
    if node.composed:
        count += _check_composed(node, data, name, run)
    if isinstance(data, str):
        count += _check_string(node, data, name, run)
    elif isinstance(data, int | float) and not isinstance(data, bool):
        count += _check_number(node, data, name, run)
    elif isinstance(data, list):
        count += _check_array(node, data, name, run)
    if node.enum and not any(_enum_equal(data, v) for v in node.enum):
        run.out.append(_not_supported(run.path(name), data, node.enum))
    if isinstance(data, dict):
        count += _check_object(node, data, name, run)
    return count


def _check_null(node: Node, name: str, run: _Run) -> int:
    ok = not node.types or "null" in node.types or node.nullable
    if not ok:
        run.type_invalid(name, ",".join(node.types), "null")
    if node.enum:  # kube-openapi never matches null against an enum
        run.out.append(_not_supported(run.path(name), None, node.enum))
    return int(ok)


def _check_type(node: Node, data: Any, name: str, run: _Run) -> int:
    found, found_format = _KINDS.get(type(data), ("object", ""))
    types = node.types
    if found in types and (not node.format or found in ("string", "array")):
        return 1  # the common case, decided without the numeric special cases below
    float_int = (
        found == "number"
        and "integer" in types
        and abs(data) <= _JSON_LIMIT
        and float(data).is_integer()
    )
    int_float = found == "integer" and "number" in types
    matches = found in types or float_int or int_float
    if (
        found not in ("string", "array")
        and node.format
        and not (matches or found_format == node.format)
    ):
        run.type_invalid(name, node.format, found_format)
        return 0
    if (
        node.format
        and "number" not in types
        and "integer" not in types
        and found in ("string", "array")
    ):
        return 1
    if not matches:
        run.type_invalid(name, ",".join(types), found)
        return 0
    return 1


def _check_composed(node: Node, data: Any, name: str, run: _Run) -> int:
    count = 1
    if node.any_of:
        results = []
        for sub in node.any_of:  # like kube-openapi, stop at the first branch that holds
            results.append(_branch(sub, data, name, run))
            if not results[-1][0]:
                break
        else:
            run.composite(f"{_go_quote(name)} must validate at least one schema (anyOf)")
            run.out.extend(_best(results))
    if node.one_of:
        results = [_branch(sub, data, name, run) for sub in node.one_of]
        valid = sum(1 for errs, _ in results if not errs)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            run.composite(
                f"{_go_quote(name)} must validate one and only one schema (oneOf). {found}"
            )
            run.out.extend(_best(results) if valid == 0 else [])
    if node.all_of:
        results = [_branch(sub, data, name, run) for sub in node.all_of]
        failed = [errs for errs, _ in results if errs]
        for errs in failed:
            run.out.extend(errs)
        if failed:
            none = ". None validated" if len(failed) == len(results) else ""
            run.composite(f"{_go_quote(name)} must validate all the schemas (allOf){none}")
    if node.not_ is not None and not _branch(node.not_, data, name, run)[0]:
        run.composite(f"{_go_quote(name)} must not validate the schema (not)")
    return count


def _branch(node: Node, data: Any, name: str, run: _Run) -> tuple[list[FieldError], int]:
    sub = _Run(run.prefix)
    count = _check(node, data, name, sub)
    return sub.out, count


def _best(results: list[tuple[list[FieldError], int]]) -> list[FieldError]:
    """The failures of the branch that got furthest (the first of equals), as kube-openapi picks."""
    best: tuple[list[FieldError], int] | None = None
    for errs, count in results:
        if errs and (best is None or count > best[1]):
            best = (errs, count)
    return best[0] if best else []


def _check_string(node: Node, data: str, name: str, run: _Run) -> int:
    # kube-openapi stops at the first string failure: length before pattern.
    ok = 1
    if node.max_length is not None and len(data) > node.max_length:
        unit = "byte" if node.max_length == 1 else "bytes"
        run.out.append(
            FieldError(
                ErrorType.TOO_LONG, run.path(name), f"may not be more than {node.max_length} {unit}"
            )
        )
        ok = 0
    elif node.min_length is not None and len(data) < node.min_length:
        run.invalid(name, data, f"{name} in body should be at least {node.min_length} chars long")
        ok = 0
    elif node.regex is not None and node.regex.search(data) is None:
        run.invalid(name, data, f"{name} in body should match '{node.pattern}'")
        ok = 0
    if node.format_check is not None and not node.format_check(data):
        run.type_invalid(name, node.format, data)
        ok = 0
    return ok


def _check_number(node: Node, data: int | float, name: str, run: _Run) -> int:
    before = len(run.out)
    factor = node.multiple_of
    if factor is not None:
        if isinstance(data, int) and int(factor) != 0 and data % int(factor):
            run.invalid(name, data, f"{name} in body should be a multiple of {int(factor)}")
        elif not isinstance(data, int) or int(factor) == 0:
            ratio = data * (1 / factor) if factor < 1 else data / factor
            if not (abs(ratio) <= _JSON_LIMIT and float(ratio).is_integer()):
                run.invalid(
                    name, data, f"{name} in body should be a multiple of {go_number(float(factor))}"
                )
    if node.minimum is not None:
        low = int(node.minimum) if isinstance(data, int) else float(node.minimum)
        if data < low or (node.exclusive_minimum and data == low):
            word = "greater than" if node.exclusive_minimum else "greater than or equal to"
            run.invalid(name, data, f"{name} in body should be {word} {go_number(low)}")
    if node.maximum is not None:
        high = int(node.maximum) if isinstance(data, int) else float(node.maximum)
        if data > high or (node.exclusive_maximum and data == high):
            word = "less than" if node.exclusive_maximum else "less than or equal to"
            run.invalid(name, data, f"{name} in body should be {word} {go_number(high)}")
    return int(len(run.out) == before)


def _check_array(node: Node, data: list[Any], name: str, run: _Run) -> int:
    count = 1
    if node.items is not None:
        for i, item in enumerate(data):
            count += _check(node.items, item, f"{name}[{i}]", run)
    size = len(data)
    if node.min_items is not None and size < node.min_items:
        run.invalid(name, size, f"{name} in body should have at least {node.min_items} items")
    if node.max_items is not None and size > node.max_items:
        run.out.append(_too_many(run.path(name), size, node.max_items))
    if node.unique_items and len({_set_key(x) for x in data}) != size:
        run.invalid(name, "", f"{name} in body shouldn't contain duplicates")
    return count


def _check_object(node: Node, data: dict[str, Any], name: str, run: _Run) -> int:
    size = len(data)
    if node.min_properties is not None and size < node.min_properties:
        run.invalid(
            name, size, f"{name} in body should have at least {node.min_properties} properties"
        )
        return 0
    if node.max_properties is not None and size > node.max_properties:
        run.out.append(_too_many(run.path(name), size, node.max_properties))
        return 0
    count = 1
    props = node.properties
    if not node.additional_allowed:
        for key in data:
            if key not in props:
                run.invalid(name, key, f"{name}.{key} in body is a forbidden property")
    elif node.additional is not None:
        for key, value in data.items():
            if key not in props:
                count += _check(node.additional, value, f"{name}.{key}", run)
    for key, sub in props.items():
        if key in data:
            count += _check(sub, data[key], f"{name}.{key}" if name else key, run)
    for key in node.required:
        if key not in data:
            run.out.append(status.required(run.path(f"{name}.{key}")))
    return count


def _too_many(path: str, actual: int, limit: int) -> FieldError:
    # apimachinery's TooMany says "items" for properties too.
    return FieldError(
        ErrorType.TOO_MANY,
        path,
        f"must have at most {limit} {'item' if limit == 1 else 'items'}",
        actual,
    )


def _enum_equal(data: Any, allowed: Any) -> bool:
    if isinstance(data, bool) or isinstance(allowed, bool):
        return type(data) is type(allowed) and data == allowed
    if isinstance(data, int | float) and isinstance(allowed, int | float):
        return data == allowed
    return type(data) is type(allowed) and bool(data == allowed)


def _not_supported(path: str, value: Any, enum: tuple[Any, ...]) -> FieldError:
    shown = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in enum]
    return status.not_supported(path, value, shown)


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the strings that appear in kube-openapi messages."""
    return json.dumps(text, ensure_ascii=False)


def go_number(value: int | float) -> str:
    """Render a number as Go's ``%v`` does (``1e+06``, ``0.5``, ``10``)."""
    if isinstance(value, int):
        return str(value)
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return {"inf": "+Inf", "-inf": "-Inf", "nan": "NaN"}.get(repr(value), "0")
    sign, digits, exp = decimal.Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exp) - 1
    lead = "-" if sign else ""
    if point < -4 or point >= 6:  # shortest %g: exponent form outside [1e-4, 1e6)
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{lead}{mantissa}e{'+' if point >= 0 else '-'}{abs(point):02d}"
    if point < 0:
        return f"{lead}0.{'0' * (-point - 1)}{text}"
    whole, frac = text[: point + 1].ljust(point + 1, "0"), text[point + 1 :]
    return f"{lead}{whole}.{frac}" if frac else f"{lead}{whole}"


# --- embedded resources and list types: walks over the structural part only -------------


def _child(base: str, name: str) -> str:
    return f"{base}.{name}" if base else name


def _embedded(data: Any, node: Node, path: str, out: list[FieldError]) -> None:
    if isinstance(data, dict):
        if node.embedded:
            out.extend(_embedded_resource(data, path))
        for key, value in data.items():
            sub = node.properties.get(key)
            if sub is not None:
                if sub.walk_embedded:
                    _embedded(value, sub, _child(path, key), out)
            elif node.additional is not None and node.additional.walk_embedded:
                _embedded(value, node.additional, f"{path}[{key}]", out)
    elif isinstance(data, list) and node.items is not None:
        for i, item in enumerate(data):
            _embedded(item, node.items, f"{path}[{i}]", out)


def _embedded_resource(obj: dict[str, Any], path: str) -> list[FieldError]:
    errs = [status.required(_child(path, k)) for k in ("apiVersion", "kind") if k not in obj]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if key in obj and not isinstance(value, str):
            errs.append(status.invalid(_child(path, key), value, "must be a string"))
        elif value == "":
            errs.append(status.required(_child(path, key)))
    if isinstance(api_version, str) and api_version.count("/") > 1:
        detail = f"unexpected GroupVersion string: {api_version}"
        errs.append(status.invalid(_child(path, "apiVersion"), api_version, detail))
    if isinstance(kind, str) and kind and (problems := schema.dns1035_label_errors(kind.lower())):
        detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
        errs.append(status.invalid(_child(path, "kind"), kind, detail))
    if "metadata" in obj:
        errs.extend(_embedded_meta(obj["metadata"], _child(path, "metadata")))
    return errs


_META_STRINGS = ("name", "generateName", "namespace")


def _embedded_meta(meta: Any, path: str) -> list[FieldError]:
    if not isinstance(meta, dict):
        found = _KINDS.get(type(meta), ("null", ""))[0]
        return [
            status.invalid(
                path, meta, f"json: cannot unmarshal {found} into Go value of type v1.ObjectMeta"
            )
        ]
    for key in _META_STRINGS:
        if key in meta and meta[key] is not None and not isinstance(meta[key], str):
            found = _KINDS.get(type(meta[key]), ("object", ""))[0]
            detail = f"json: cannot unmarshal {found} into Go struct field ObjectMeta.{key} of type string"
            return [status.invalid(path, meta, detail)]
    errs = []
    name = meta.get("name") or ""
    for msg in (
        [f"may not be '{name}'"]
        if name in (".", "..")
        else [f"may not contain '{c}'" for c in "/%" if c in name]
    ):
        errs.append(status.invalid(f"{path}.name", name, msg))
    generate = meta.get("generateName") or ""
    errs += [
        status.invalid(f"{path}.generateName", generate, f"may not contain '{c}'")
        for c in "/%"
        if c in generate
    ]
    if namespace := meta.get("namespace") or "":
        errs += [
            status.invalid(f"{path}.namespace", namespace, m)
            for m in schema.dns1123_label_errors(namespace)
        ]
    return errs


def _lists(data: Any, node: Node, path: str, out: list[FieldError]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            sub = node.properties.get(key) or node.additional
            if sub is not None and sub.walk_lists:
                _lists(
                    value,
                    sub,
                    _child(path, key) if key in node.properties else f"{path}[{key}]",
                    out,
                )
    elif isinstance(data, list):
        if node.list_type == "set":
            out.extend(
                status.duplicate(f"{path}[{i}]", data[i])
                for i in _repeats([_set_key(x) for x in data])
            )
        elif node.list_type == "map":
            out.extend(_list_map_errors(data, node.list_map_keys, path))
        if node.items is not None and node.items.walk_lists:
            for i, item in enumerate(data):
                _lists(item, node.items, f"{path}[{i}]", out)


def _list_map_errors(data: list[Any], keys: tuple[str, ...], path: str) -> list[FieldError]:
    for i, item in enumerate(data):
        if item is not None and not isinstance(item, dict):
            return [
                status.invalid(
                    f"{path}[{i}]", item, "must be an object for an array of list-type map"
                )
            ]
    entries = [{k: item[k] for k in keys if k in item} if item else {} for item in data]
    return [
        status.duplicate(f"{path}[{i}]", entries[i])
        for i in _repeats([_set_key(e) for e in entries])
    ]


def _set_key(value: Any) -> Any:
    # Go compares scalars by dynamic type and value, compound values by their JSON.
    if isinstance(value, dict | list):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return (type(value).__name__, value)


def _repeats(keys: list[Any]) -> list[int]:
    """Indices of the second occurrence of each repeated key, as apiextensions reports them."""
    seen: dict[Any, int] = {}
    repeats = []
    for i, key in enumerate(keys):
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeats.append(i)
    return repeats
