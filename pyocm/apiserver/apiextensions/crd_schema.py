"""The rules a CustomResourceDefinition's ``openAPIV3Schema`` must follow, as kube-apiserver checks them.

In its order: the root restrictions when the status subresource is on; the OpenAPI
restrictions (no ``$ref``, ``patternProperties``, ``uniqueItems``, unknown types, defaults in
the top-level type and object meta...) and the ``x-kubernetes-*`` extension rules; the
structural-schema rules (a ``type`` everywhere unless int-or-string or preserve-unknown, no
types or defaults inside ``anyOf``/``allOf``/``oneOf``/``not``, a root ``metadata`` that
restricts only ``name``/``generateName``), sorted by message as kube-apiserver sorts them;
then defaults, which must be pruned already and valid against their own node.

Not checked: CEL rule compilation (only the shape of the rules), and that every field a
value validation mentions also appears in the structural part of the schema.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.apiextensions import defaulting, pruning, schema, validation
from pyocm.kube import status
from pyocm.kube.status import FieldError

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_NESTED_FORBIDDEN = (  # inside anyOf/allOf/oneOf/not: (key, detail)
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)
_UNSUPPORTED = ("id", "additionalItems", "patternProperties", "definitions", "dependencies", "$ref")


# JSONSchemaProps fields in declaration order (kube-apiserver reports the first offender
# at the root of a schema with the status subresource), and those it allows there.
_ROOT_FIELD_ORDER = (
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "nullable",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
)
_ROOT_ALLOWED = frozenset(
    (
        "description",
        "type",
        "format",
        "title",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "required",
        "items",
        "properties",
        "externalDocs",
        "example",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    )
)
_ROOT_ALLOWED_GO = (
    "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
    "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
    "ExternalDocs Example XPreserveUnknownFields XValidations]"
)
_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META = ("metadata", "kind", "apiVersion")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def has_default(raw: Any) -> bool:
    """Whether the schema sets a default anywhere, value validations included."""
    return isinstance(raw, dict) and (
        "default" in raw or any(has_default(s) for s, _ in _children(raw, ""))
    )


def schema_errors(raw: Any, path: str, *, status_enabled: bool) -> list[FieldError]:
    """``path`` is the ``validation``/``schema`` parent; errors sit under ``.openAPIV3Schema``."""
    top = f"{path}.openAPIV3Schema"
    if not isinstance(raw, dict):
        return [status.invalid(top, raw, "must be an object")]
    errs = _status_root_errors(raw, top) if status_enabled else []
    if raw.get("nullable") is True:
        errs.append(status.forbidden(f"{top}.nullable", "nullable cannot be true at the root"))
    errs += _openapi_errors(raw, top, root=True)
    structural = sorted(_structural_errors(raw, top, _ROOT), key=lambda e: e.message())
    errs += structural or _default_errors(raw, top)
    if not errs:
        try:
            schema.CompiledSchema.from_openapi(raw)
        except ValueError as e:
            errs.append(status.invalid(path, "", f"error building validator: {e}"))
    return errs


def _status_root_errors(raw: dict[str, Any], top: str) -> list[FieldError]:
    for key in (k for k in _ROOT_FIELD_ORDER if raw.get(k) not in (None, False, "", [], {}, 0)):
        if key == "type" and raw["type"] != "object":
            detail = 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'
            return [status.invalid(f"{top}.type", raw["type"], detail)]
        if key != "type" and key not in _ROOT_ALLOWED:
            detail = f"only {_ROOT_ALLOWED_GO} fields are allowed at the root of the schema if the status subresource is enabled"
            return [status.invalid(top, raw, detail)]
    return []


def _children(raw: dict[str, Any], path: str) -> list[tuple[dict[str, Any], str]]:
    """Every directly nested schema with its path, as kube-apiserver recurses into them."""
    out = []
    if isinstance(raw.get("additionalProperties"), dict):
        out.append((raw["additionalProperties"], f"{path}.additionalProperties"))
    out += [(_d(s), f"{path}.properties[{k}]") for k, s in _d(raw.get("properties")).items()]
    if isinstance(raw.get("not"), dict):
        out.append((raw["not"], f"{path}.not"))
    for key in ("allOf", "oneOf", "anyOf"):
        out += [(_d(s), f"{path}.{key}[{i}]") for i, s in enumerate(raw.get(key) or [])]
    if isinstance(raw.get("items"), dict):
        out.append((raw["items"], f"{path}.items"))
    return out


def _openapi_errors(
    raw: dict[str, Any],
    path: str,
    *,
    root: bool = False,
    in_meta: bool = False,
    no_defaults: str = "",
) -> list[FieldError]:
    """OpenAPI restrictions. ``in_meta``: inside a resource's type or object meta;
    ``no_defaults``: why defaults are forbidden here, if they are."""
    errs = _standard_errors(raw, path, in_meta=in_meta, no_defaults=no_defaults)
    if raw.get("properties") and raw.get("additionalProperties") not in (None, True):
        errs.append(
            status.forbidden(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    is_resource = root or bool(raw.get("x-kubernetes-embedded-resource"))
    for sub, sub_path in _children(raw, path):
        sub_meta, sub_no_defaults = in_meta, no_defaults
        meta_field = next((m for m in _META if sub_path == f"{path}.properties[{m}]"), "")
        if meta_field and is_resource:
            sub_meta, sub_no_defaults = True, f"in top-level {meta_field}" if root else no_defaults
        elif in_meta and sub_path == f"{path}.additionalProperties":
            sub_no_defaults = "inside additionalProperties applying to object metadata"
        errs += _openapi_errors(sub, sub_path, in_meta=sub_meta, no_defaults=sub_no_defaults)
    if raw.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            status.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
            )
        )
    return (
        errs + _extension_errors(raw, path) + _rule_errors(raw, path) + _map_set_errors(raw, path)
    )


def _standard_errors(
    raw: dict[str, Any], path: str, *, in_meta: bool, no_defaults: str
) -> list[FieldError]:
    errs = []
    if raw.get("type") and raw["type"] not in _TYPES:
        errs.append(status.not_supported(f"{path}.type", raw["type"], _TYPES))
    if "default" in raw and no_defaults:
        errs.append(status.forbidden(f"{path}.default", f"must not be set {no_defaults}"))
    errs += [
        status.forbidden(f"{path}.{k}", f"{k} is not supported") for k in _UNSUPPORTED if raw.get(k)
    ]
    if raw.get("type") == "null":
        errs.append(
            status.forbidden(
                f"{path}.type", "type cannot be set to null, use nullable as an alternative"
            )
        )
    if isinstance(raw.get("items"), list):
        errs.append(
            status.forbidden(f"{path}.items", "items must be a schema object and not an array")
        )
    if in_meta and raw.get("x-kubernetes-embedded-resource"):
        errs.append(
            status.forbidden(
                f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"
            )
        )
    if raw.get("uniqueItems") is True:
        detail = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        errs.append(status.forbidden(f"{path}.uniqueItems", detail))
    return errs


def _rule_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    """The shape of CEL rules (their compilation is not checked)."""
    errs = []
    for i, rule in enumerate(map(_d, raw.get("x-kubernetes-validations") or [])):
        where = f"{path}.x-kubernetes-validations[{i}]"
        text, message = str(rule.get("rule") or "").strip(), str(rule.get("message") or "")
        if not text:
            errs.append(status.required(f"{where}.rule", "rule is not specified"))
        elif message and not message.strip():
            errs.append(
                status.invalid(
                    f"{where}.message", message, "message must be non-empty if specified"
                )
            )
        elif "\n" in message.strip() or "\r" in message.strip():
            errs.append(
                status.invalid(f"{where}.message", message, "message must not contain line breaks")
            )
        elif ("\n" in text or "\r" in text) and not message.strip():
            errs.append(
                status.required(
                    f"{where}.message", "message must be specified if rule contains line breaks"
                )
            )
    return errs


def _extension_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    kind, map_type, list_type = (
        raw.get("type"),
        raw.get("x-kubernetes-map-type"),
        raw.get("x-kubernetes-list-type"),
    )
    keys = list(raw.get("x-kubernetes-list-map-keys") or [])
    for ext, value, wanted in (("map", map_type, "object"), ("list", list_type, "array")):
        if value is not None and kind != wanted:
            detail = f"must be {wanted} if x-kubernetes-{ext}-type is specified"
            errs.append(
                status.invalid(f"{path}.type", kind, detail)
                if kind
                else status.required(f"{path}.type", detail)
            )
        if ext == "map" and map_type is not None and map_type not in ("atomic", "granular"):
            errs.append(
                status.not_supported(
                    f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]
                )
            )
    if list_type == "set" and kind == "array":
        errs += _atomic_set_item_errors(_d(raw.get("items")), path)
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            status.not_supported(
                f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]
            )
        )
    if keys and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        lt_path = f"{path}.x-kubernetes-list-type"
        errs.append(
            status.required(lt_path, detail)
            if list_type is None
            else status.invalid(lt_path, list_type, detail)
        )
    if list_type == "map":
        errs += _list_map_errors(raw, keys, path)
    return errs


def _atomic_set_item_errors(items: dict[str, Any], path: str) -> list[FieldError]:
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
        return [
            status.invalid(
                f"{path}.items.x-kubernetes-list-type", items["x-kubernetes-list-type"], detail
            )
        ]
    if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
        return [
            status.invalid(
                f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"), detail
            )
        ]
    return []


def _list_map_errors(raw: dict[str, Any], keys: list[str], path: str) -> list[FieldError]:
    errs = []
    if not keys:
        errs.append(
            status.required(
                f"{path}.x-kubernetes-list-map-keys",
                "must not be empty if x-kubernetes-list-type is map",
            )
        )
    items = raw.get("items")
    if items is None:
        return [
            *errs,
            status.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"),
        ]
    if not isinstance(items, dict):
        return [
            *errs,
            status.invalid(
                f"{path}.items",
                items,
                "must only have a single schema if x-kubernetes-list-type is map",
            ),
        ]
    if items.get("type") != "object":
        detail = "must be object if parent array's x-kubernetes-list-type is map"
        return [*errs, status.invalid(f"{path}.items.type", items.get("type", ""), detail)]
    props, where = _d(items.get("properties")), f"{path}.x-kubernetes-list-map-keys"
    for i, key in enumerate(keys):
        if key not in props:
            errs.append(status.invalid(where, keys, "entries must all be names of item properties"))
        elif _d(props[key]).get("type") in ("array", "object"):
            detail = "must be a scalar type if parent array's x-kubernetes-list-type is map"
            errs.append(status.invalid(f"{path}.items.properties[{key}].type", "object", detail))
        if key in keys[:i]:
            errs.append(status.invalid(where, keys, "must not contain duplicate entries"))
    return errs


def _map_set_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    """Items of set/map lists are never null; map keys are required or defaulted, never null."""
    list_type, items = raw.get("x-kubernetes-list-type"), raw.get("items")
    if list_type not in ("set", "map") or not isinstance(items, dict):
        return []
    errs = []
    if items.get("nullable") is True:
        errs.append(
            status.forbidden(
                f"{path}.items.nullable",
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    props, required = _d(items.get("properties")), items.get("required") or []
    for key in raw.get("x-kubernetes-list-map-keys") or [] if list_type == "map" else []:
        prop, where = props.get(key), f"{path}.items.properties[{key}]"
        if not isinstance(prop, dict):
            continue
        if key not in required and "default" not in prop:
            detail = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            errs.append(status.required(f"{where}.default", detail))
        if prop.get("nullable") is True:
            errs.append(
                status.forbidden(
                    f"{where}.nullable",
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return errs


def _is_int_or_string(branches: Any) -> bool:
    return bool(branches == [{"type": "integer"}, {"type": "string"}])


def _structural_errors(raw: dict[str, Any], path: str, level: str) -> list[FieldError]:
    errs = []
    kind, embedded = raw.get("type") or "", bool(raw.get("x-kubernetes-embedded-resource"))
    preserve, int_or_string = (
        bool(raw.get("x-kubernetes-preserve-unknown-fields")),
        bool(raw.get("x-kubernetes-int-or-string")),
    )
    if kind == "array" and raw.get("items") is None:
        errs.append(status.required(f"{path}.items", "must be specified"))
    if isinstance(raw.get("items"), dict):
        errs += _structural_errors(raw["items"], f"{path}.items", _ITEM)
    for key, sub in _d(raw.get("properties")).items():
        errs += _structural_errors(_d(sub), f"{path}.properties[{key}]", _FIELD)
    if "additionalProperties" in raw:
        if level == _ROOT:
            errs.append(
                status.forbidden(f"{path}.additionalProperties", "must not be used at the root")
            )
        if isinstance(raw["additionalProperties"], dict):
            errs += _structural_errors(
                raw["additionalProperties"], f"{path}.additionalProperties", _FIELD
            )
    for ext in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
        if int_or_string and raw.get(ext):
            errs.append(
                status.invalid(
                    f"{path}.{ext}", True, "must be false if x-kubernetes-int-or-string is true"
                )
            )
    errs += _value_validation_errors(raw, path)
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(
            status.invalid(f"{path}.type", kind, detail)
            if kind
            else status.required(f"{path}.type", detail)
        )
    elif not kind and not int_or_string and not preserve:
        where = {
            _ROOT: "at the root",
            _ITEM: "for specified array items",
            _FIELD: "for specified object fields",
        }[level]
        errs.append(status.required(f"{path}.type", f"must not be empty {where}"))
    if embedded and "additionalProperties" in raw:
        errs.append(
            status.forbidden(
                f"{path}.additionalProperties",
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if level == _ROOT and kind and kind != "object":
        errs.append(status.invalid(f"{path}.type", kind, "must be object at the root"))
    if level == _ROOT or embedded:
        errs += _meta_schema_errors(raw, path, root=level == _ROOT)
    if embedded and not preserve and not raw.get("properties"):
        detail = "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
        errs.append(status.required(f"{path}.properties", detail))
    return errs


def _meta_schema_errors(raw: dict[str, Any], path: str, *, root: bool) -> list[FieldError]:
    props, errs = _d(raw.get("properties")), []
    for key in ("kind", "apiVersion"):
        if key in props and _d(props[key]).get("type") != "string":
            errs.append(
                status.invalid(
                    f"{path}.properties[{key}].type",
                    _d(props[key]).get("type", ""),
                    "must be string",
                )
            )
    if "metadata" not in props:
        return errs
    meta, where = _d(props["metadata"]), f"{path}.properties[metadata]"
    if meta.get("type") != "object":
        errs.append(status.invalid(f"{where}.type", meta.get("type", ""), "must be object"))
    extra = set(meta) - {"type", "default", "properties"} or set(_d(meta.get("properties"))) - {
        "name",
        "generateName",
    }
    if root and extra:
        detail = "must not specify anything other than name and generateName, but metadata is implicitly specified"
        errs.append(status.forbidden(where, detail))
    return errs


def _value_validation_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    """anyOf/allOf/oneOf/not may only restrict values; the int-or-string patterns are allowed."""
    errs = []
    if raw.get("pattern"):
        try:
            schema.go_regexp(str(raw["pattern"]))
        except ValueError as e:
            errs.append(
                status.invalid(
                    f"{path}.pattern",
                    raw["pattern"],
                    f"must be a valid regular expression, but isn't: {e}",
                )
            )
    skip_any = _is_int_or_string(raw.get("anyOf"))
    all_of = raw.get("allOf") or []
    skip_first_all = bool(all_of) and _is_int_or_string(_d(all_of[0]).get("anyOf"))
    for key in ("anyOf", "allOf", "oneOf"):
        for i, sub in enumerate(raw.get(key) or []):
            skip = key == "allOf" and i == 0 and skip_first_all
            if not (key == "anyOf" and skip_any):
                errs += _nested_errors(_d(sub), f"{path}.{key}[{i}]", skip_any=skip)
    if isinstance(raw.get("not"), dict):
        errs += _nested_errors(raw["not"], f"{path}.not", skip_any=False)
    return errs


def _nested_errors(raw: dict[str, Any], path: str, *, skip_any: bool) -> list[FieldError]:
    errs = _value_validation_errors({**raw, "anyOf": None} if skip_any else raw, path)
    if isinstance(raw.get("items"), dict):
        errs += _nested_errors(raw["items"], f"{path}.items", skip_any=False)
    for key, sub in _d(raw.get("properties")).items():
        errs += _nested_errors(_d(sub), f"{path}.properties[{key}]", skip_any=False)
    for key, detail in _NESTED_FORBIDDEN:
        if raw.get(key) not in (None, False, "", [], {}) or (key == "default" and key in raw):
            errs.append(status.forbidden(f"{path}.{key}", detail))
    if "metadata" in _d(raw.get("properties")):
        errs.append(
            status.forbidden(
                f"{path}.properties[metadata]", "must not be specified in a nested context"
            )
        )
    return errs


def _default_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    """Defaults must be pruned already and valid against their own node (additionalProperties aside)."""
    errs = []
    if "default" in raw:
        node = schema.compile_node(raw)
        where = f"{path}.default"
        pruned = defaulting.copy_json(raw["default"])
        pruning.prune_value(pruned, node, is_resource_root=node.embedded)
        if pruned != raw["default"]:
            errs.append(status.invalid(where, raw["default"], "must not have unknown fields"))
        errs += validation.validate_value(raw["default"], node, prefix=where)
    if isinstance(raw.get("items"), dict):
        errs += _default_errors(raw["items"], f"{path}.items")
    for key, sub in _d(raw.get("properties")).items():
        errs += _default_errors(_d(sub), f"{path}.properties[{key}]")
    return errs
