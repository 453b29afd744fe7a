"""Defaulting and validation of apiextensions.k8s.io/v1 CustomResourceDefinitions.

:func:`default_crd` fills what the v1 API defaults; :func:`validate_crd` and
:func:`validate_crd_update` return the field errors kube-apiserver would answer with.

kube-apiserver validates the *internal* form of a CRD, and its error paths show it: when
every version carries the same schema (always so with one version), the schema is
reported as ``spec.validation.openAPIV3Schema``; likewise ``spec.subresources`` and
``spec.additionalPrinterColumns[i]``, and ``spec.conversion.webhookClientConfig`` /
``spec.conversion.conversionReviewVersions`` for the webhook settings. Versions that
differ are reported under ``spec.versions[i].schema`` and so on. This module reproduces
those paths.

The schema checks are kube-apiserver's: the OpenAPI restrictions (no ``$ref``,
``patternProperties``, ``uniqueItems``...), the ``x-kubernetes-*`` extension rules, the
structural-schema rules (a ``type`` everywhere unless int-or-string or preserve-unknown, no
types or defaults inside ``anyOf``/``allOf``/``oneOf``/``not``, a root ``metadata`` that
restricts only ``name``/``generateName``), then defaults, which must validate against their
own schema and contain no unknown fields. Not checked: CEL rule compilation, that every
field used in a value validation also appears in the structural part, which fields besides
``type`` the root may carry when the status subresource is on, and whether stored objects
still validate when a schema changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.apiserver.apiextensions import defaulting, pruning, schema, validation
from pyocm.kube import status
from pyocm.kube.status import FieldError

Obj = Mapping[str, Any]
_SCOPES = ["Cluster", "Namespaced"]
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"
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


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def default_crd(crd: dict[str, Any]) -> None:
    """The v1 API defaults: singular and listKind names, conversion strategy and port."""
    spec = crd.setdefault("spec", {})
    names = _d(spec.get("names"))
    kind = str(names.get("kind") or "")
    if kind and not names.get("singular"):
        names["singular"] = kind.lower()
    if kind and not names.get("listKind"):
        names["listKind"] = f"{kind}List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = _d(_d(_d(spec["conversion"]).get("webhook")).get("clientConfig")).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def validate_crd(crd: Obj) -> list[FieldError]:
    """Errors of a CRD being created (after :func:`default_crd`)."""
    spec = _d(crd.get("spec"))
    names = _d(spec.get("names"))
    errs = []
    name = str(_d(crd.get("metadata")).get("name") or "")
    wanted = f"{names.get('plural') or ''}.{spec.get('group') or ''}"
    if name and name != wanted:
        errs.append(status.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    errs += _spec_errors(spec)
    accepted = _d(crd.get("status")).get("acceptedNames")
    if isinstance(accepted, dict):
        errs += _name_format_errors(accepted, "status.acceptedNames")
    if spec.get("preserveUnknownFields") is True:
        detail = "cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead"
        errs.append(status.invalid("spec.preserveUnknownFields", True, detail))
    return errs


def validate_crd_update(new: Obj, old: Obj) -> list[FieldError]:
    """Errors of a CRD update: :func:`validate_crd` plus immutability and storedVersions.

    ``status.storedVersions`` is checked when present: each entry must still be a version,
    and it must hold the storage version (apiextensions adds a new storage version to it
    before validating, and so must the caller).
    """
    errs = validate_crd(new)
    spec, old_spec = _d(new.get("spec")), _d(old.get("spec"))
    names, old_names = _d(spec.get("names")), _d(old_spec.get("names"))
    pairs = [("spec.group", spec.get("group"), old_spec.get("group")),
             ("spec.names.plural", names.get("plural"), old_names.get("plural"))]
    if _established(old):
        pairs = [("spec.scope", spec.get("scope"), old_spec.get("scope")),
                 ("spec.names.kind", names.get("kind"), old_names.get("kind")), *pairs]
    errs += [status.invalid(path, now, "field is immutable") for path, now, was in pairs if now != was]
    stored = _d(new.get("status")).get("storedVersions")
    if isinstance(stored, list):
        errs += _stored_version_errors(stored, spec.get("versions") or [])
    return errs


def _established(crd: Obj) -> bool:
    conditions = _d(crd.get("status")).get("conditions") or []
    return any(_d(c).get("type") == "Established" and _d(c).get("status") == "True" for c in conditions)


def _stored_version_errors(stored: list[Any], versions: list[Any]) -> list[FieldError]:
    path = "status.storedVersions"
    if not stored:
        return [status.invalid(path, stored, "must have at least one stored version")]
    names = [_d(v).get("name") for v in versions]
    errs = [status.invalid(path, v, f"must have the storage version {v.get('name')}")
            for v in map(_d, versions) if v.get("storage") and v.get("name") not in stored]
    return errs + [status.invalid(f"{path}[{i}]", v, "must appear in spec.versions")
                   for i, v in enumerate(stored) if v not in names]


def _spec_errors(spec: dict[str, Any]) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec``, in its order."""
    errs = _group_errors(spec.get("group"))
    scope = spec.get("scope")
    if not scope:
        errs.append(status.required("spec.scope"))
    elif scope not in _SCOPES:
        errs.append(status.not_supported("spec.scope", scope, _SCOPES))
    versions = [_d(v) for v in spec.get("versions") or []]
    hoisted = _hoisted(versions)
    if hoisted["schema"] is None:
        errs += [status.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required")
                 for i, v in enumerate(versions) if _schema_of(v) is None]
    if spec.get("preserveUnknownFields") is True and any(_has_default(_schema_of(v)) for v in versions):
        errs.append(status.invalid("spec.preserveUnknownFields", True, "must be false in order to use defaults in the schema"))
    for i, version in enumerate(versions):
        errs += _version_errors(version, f"spec.versions[{i}]", hoisted)
    names = [v.get("name") for v in versions]
    if len(set(names)) != len(names):
        errs.append(status.invalid("spec.versions", versions, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        errs.append(status.invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    names_spec = _d(spec.get("names"))
    errs += [status.required(f"spec.names.{k}") for k in ("plural", "singular", "kind", "listKind") if not names_spec.get(k)]
    errs += _name_format_errors(names_spec, "spec.names")
    if hoisted["schema"] is not None:
        errs += _schema_errors(hoisted["schema"], "spec.validation", any(map(_status_on, versions)))
    errs += _subresource_errors(_d(hoisted["subresources"]), "spec.subresources")
    errs += _column_errors(hoisted["additionalPrinterColumns"] or [], "spec.additionalPrinterColumns")
    return errs + _conversion_errors(_d(spec.get("conversion")), spec.get("preserveUnknownFields") is True)


def _schema_of(version: dict[str, Any]) -> Any:
    return _d(version.get("schema")).get("openAPIV3Schema")


def _hoisted(versions: list[dict[str, Any]]) -> dict[str, Any]:
    """What the v1 to internal conversion moves to the top level: values all versions share."""
    out: dict[str, Any] = {}
    for key in ("schema", "subresources", "additionalPrinterColumns"):
        values = [_schema_of(v) if key == "schema" else v.get(key) for v in versions]
        same = bool(values) and all(x == values[0] for x in values) and values[0] not in (None, [])
        out[key] = values[0] if same else None
    return out


def _version_errors(version: dict[str, Any], path: str, hoisted: dict[str, Any]) -> list[FieldError]:
    errs = []
    name = str(version.get("name") or "")
    if problems := schema.dns1035_label_errors(name):
        errs.append(status.invalid(f"{path}.name", name, ",".join(problems)))
    errs += _deprecation_errors(version, f"{path}.deprecationWarning")
    if hoisted["schema"] is None and _schema_of(version) is not None:
        errs += _schema_errors(_schema_of(version), f"{path}.schema", _status_on(version))
    if hoisted["subresources"] is None:
        errs += _subresource_errors(_d(version.get("subresources")), f"{path}.subresources")
    if hoisted["additionalPrinterColumns"] is None:
        errs += _column_errors(version.get("additionalPrinterColumns") or [], f"{path}.additionalPrinterColumns")
    return errs


def _deprecation_errors(version: dict[str, Any], path: str) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    if warning is None:
        return []
    if not version.get("deprecated"):
        return [status.invalid(path, warning, "can only be set for deprecated versions")]
    problems = (["must be <= 256 characters long"] if len(warning) > 256 else []) + ([] if warning else ["must not be an empty string"])
    return [status.invalid(path, warning, p) for p in problems]


def _group_errors(group: Any) -> list[FieldError]:
    if not group:
        return [status.required("spec.group")]
    if problems := schema.dns1123_subdomain_errors(str(group)):
        return [status.invalid("spec.group", group, ",".join(problems))]
    if "." not in str(group):
        return [status.invalid("spec.group", group, "should be a domain with at least one dot")]
    return []


def _name_format_errors(names: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    for key, mixed_case in (("plural", False), ("singular", False), ("kind", True), ("listKind", True)):
        value = str(names.get(key) or "")
        problems = schema.dns1035_label_errors(value.lower() if mixed_case else value) if value else []
        if problems:
            lead = "may have mixed case, but should otherwise match: " if mixed_case else ""
            errs.append(status.invalid(f"{path}.{key}", value, lead + ",".join(problems)))
    for i, value in enumerate(names.get("shortNames") or []):
        if problems := schema.dns1035_label_errors(str(value)):
            errs.append(status.invalid(f"{path}.shortNames[{i}]", value, ",".join(problems)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(status.invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, value in enumerate(names.get("categories") or []):
        if problems := schema.dns1035_label_errors(str(value)):
            errs.append(status.invalid(f"{path}.categories[{i}]", value, ",".join(problems)))
    return errs


def _status_on(version: dict[str, Any]) -> bool:
    return "status" in _d(version.get("subresources"))


def _subresource_errors(subresources: dict[str, Any], path: str) -> list[FieldError]:
    scale = subresources.get("scale")
    if not isinstance(scale, dict):
        return []
    errs = []
    for key, under in (("specReplicasPath", (".spec.",)), ("statusReplicasPath", (".status.",)),
                       ("labelSelectorPath", (".spec.", ".status."))):
        value = str(scale.get(key) or "")
        where = f"{path}.scale.{key}"
        if not value:
            errs += [] if key == "labelSelectorPath" else [status.required(where)]
        elif simple := _simple_json_path_errors(value, where):
            errs += simple
        elif not value.startswith(under):
            detail = "should be a json path under either .spec or .status" if len(under) == 2 else f"should be a json path under {under[0][:-1]}"
            errs.append(status.invalid(where, value, detail))
    return errs


def _simple_json_path_errors(value: str, path: str) -> list[FieldError]:
    if not value.startswith("."):
        return [status.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column_errors(columns: list[Any], path: str) -> list[FieldError]:
    # The internal type's field is JSONPath, and so is the error path.
    errs = []
    for i, column in enumerate(map(_d, columns)):
        where = f"{path}[{i}]"
        if not column.get("name"):
            errs.append(status.required(f"{where}.name"))
        kind = column.get("type")
        if not kind:
            errs.append(status.required(f"{where}.type", f"must be one of {_COLUMN_TYPES}"))
        elif kind not in _COLUMN_TYPES.split(","):
            errs.append(status.invalid(f"{where}.type", kind, f"must be one of {_COLUMN_TYPES}"))
        fmt = column.get("format")
        if fmt and fmt not in _COLUMN_FORMATS.split(","):
            errs.append(status.invalid(f"{where}.format", fmt, f"must be one of {_COLUMN_FORMATS}"))
        json_path = str(column.get("jsonPath") or "")
        errs += _simple_json_path_errors(json_path, f"{where}.JSONPath") if json_path else [status.required(f"{where}.JSONPath")]
    return errs


def _conversion_errors(conversion: dict[str, Any], preserve_unknown: bool) -> list[FieldError]:
    if not conversion:
        return []
    path = "spec.conversion"
    strategy = conversion.get("strategy")
    errs = []
    if strategy != "None" and preserve_unknown:
        errs.append(status.invalid(f"{path}.strategy", strategy, "must be None if spec.preserveUnknownFields is true"))
    if not strategy:
        errs.append(status.required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(status.not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    webhook = _d(conversion.get("webhook"))
    client, reviews = webhook.get("clientConfig"), webhook.get("conversionReviewVersions") or []
    if strategy != "Webhook":
        detail = "should not be set when strategy is not set to Webhook"
        errs += [status.forbidden(f"{path}.webhookClientConfig", detail)] if client is not None else []
        return errs + ([status.forbidden(f"{path}.conversionReviewVersions", detail)] if reviews else [])
    if client is None:
        errs.append(status.required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook"))
    else:
        errs += _client_config_errors(_d(client), f"{path}.webhookClientConfig")
    return errs + _review_version_errors(reviews, f"{path}.conversionReviewVersions")


def _review_version_errors(reviews: list[Any], path: str) -> list[FieldError]:
    if not reviews:
        return [status.required(path)]
    errs = []
    for i, version in enumerate(reviews):
        if version in reviews[:i]:
            errs.append(status.invalid(f"{path}[{i}]", version, "duplicate version"))
        else:
            errs += [status.invalid(f"{path}[{i}]", version, m) for m in schema.dns1035_label_errors(str(version))]
    if not {"v1", "v1beta1"} & set(reviews):
        errs.append(status.invalid(path, reviews, "must include at least one of v1, v1beta1"))
    return errs


def _client_config_errors(client: dict[str, Any], path: str) -> list[FieldError]:
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        return [status.required(path, "exactly one of url or service is required")]
    if url is not None:
        scheme, _, rest = str(url).partition("://")
        if scheme != "https":
            return [status.invalid(f"{path}.url", scheme, "'https' is the only allowed URL scheme")]
        return [] if rest.split("/")[0] else [status.invalid(f"{path}.url", "", "host must be specified")]
    service = _d(service)
    errs = [status.required(f"{path}.service.{k}", f"service {k} is required") for k in ("name", "namespace") if not service.get(k)]
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(status.invalid(f"{path}.service.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    return errs


# --- schemas ----------------------------------------------------------------------------

# JSONSchemaProps fields in declaration order (kube-apiserver reports the first offender
# at the root of a schema with the status subresource), and those it allows there.
_ROOT_FIELD_ORDER = (
    "id", "$schema", "$ref", "description", "type", "nullable", "format", "title", "default", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
    "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties", "required", "items",
    "allOf", "oneOf", "anyOf", "not", "properties", "additionalProperties", "patternProperties",
    "dependencies", "additionalItems", "definitions", "externalDocs", "example",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations",
)
_ROOT_ALLOWED = frozenset((
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required",
    "items", "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations",
))
_ROOT_ALLOWED_GO = ("[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
                    "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
                    "ExternalDocs Example XPreserveUnknownFields XValidations]")
_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META = ("metadata", "kind", "apiVersion")


def _has_default(raw: Any) -> bool:
    return isinstance(raw, dict) and ("default" in raw or any(_has_default(s) for s, _ in _children(raw, "")))


def _schema_errors(raw: Any, path: str, status_enabled: bool) -> list[FieldError]:
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


def _openapi_errors(raw: dict[str, Any], path: str, *, root: bool = False, in_meta: bool = False,
                    no_defaults: str = "") -> list[FieldError]:
    """OpenAPI restrictions. ``in_meta``: inside a resource's type or object meta;
    ``no_defaults``: why defaults are forbidden here, if they are."""
    errs = _standard_errors(raw, path, in_meta=in_meta, no_defaults=no_defaults)
    if raw.get("properties") and raw.get("additionalProperties") not in (None, True):
        errs.append(status.forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
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
        errs.append(status.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    return errs + _extension_errors(raw, path) + _rule_errors(raw, path) + _map_set_errors(raw, path)


def _standard_errors(raw: dict[str, Any], path: str, *, in_meta: bool, no_defaults: str) -> list[FieldError]:
    errs = []
    if raw.get("type") and raw["type"] not in _TYPES:
        errs.append(status.not_supported(f"{path}.type", raw["type"], _TYPES))
    if "default" in raw and no_defaults:
        errs.append(status.forbidden(f"{path}.default", f"must not be set {no_defaults}"))
    errs += [status.forbidden(f"{path}.{k}", f"{k} is not supported") for k in _UNSUPPORTED if raw.get(k)]
    if raw.get("type") == "null":
        errs.append(status.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(raw.get("items"), list):
        errs.append(status.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if in_meta and raw.get("x-kubernetes-embedded-resource"):
        errs.append(status.forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
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
            errs.append(status.invalid(f"{where}.message", message, "message must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            errs.append(status.invalid(f"{where}.message", message, "message must not contain line breaks"))
        elif ("\n" in text or "\r" in text) and not message.strip():
            errs.append(status.required(f"{where}.message", "message must be specified if rule contains line breaks"))
    return errs


def _extension_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    kind, map_type, list_type = raw.get("type"), raw.get("x-kubernetes-map-type"), raw.get("x-kubernetes-list-type")
    keys = list(raw.get("x-kubernetes-list-map-keys") or [])
    for ext, value, wanted in (("map", map_type, "object"), ("list", list_type, "array")):
        if value is not None and kind != wanted:
            detail = f"must be {wanted} if x-kubernetes-{ext}-type is specified"
            errs.append(status.invalid(f"{path}.type", kind, detail) if kind else status.required(f"{path}.type", detail))
        if ext == "map" and map_type is not None and map_type not in ("atomic", "granular"):
            errs.append(status.not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    if list_type == "set" and kind == "array":
        errs += _atomic_set_item_errors(_d(raw.get("items")), path)
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(status.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    if keys and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        lt_path = f"{path}.x-kubernetes-list-type"
        errs.append(status.required(lt_path, detail) if list_type is None else status.invalid(lt_path, list_type, detail))
    if list_type == "map":
        errs += _list_map_errors(raw, keys, path)
    return errs


def _atomic_set_item_errors(items: dict[str, Any], path: str) -> list[FieldError]:
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
        return [status.invalid(f"{path}.items.x-kubernetes-list-type", items["x-kubernetes-list-type"], detail)]
    if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
        return [status.invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"), detail)]
    return []


def _list_map_errors(raw: dict[str, Any], keys: list[str], path: str) -> list[FieldError]:
    errs = []
    if not keys:
        errs.append(status.required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
    items = raw.get("items")
    if items is None:
        return [*errs, status.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map")]
    if not isinstance(items, dict):
        return [*errs, status.invalid(f"{path}.items", items, "must only have a single schema if x-kubernetes-list-type is map")]
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
        errs.append(status.forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    props, required = _d(items.get("properties")), items.get("required") or []
    for key in raw.get("x-kubernetes-list-map-keys") or [] if list_type == "map" else []:
        prop, where = props.get(key), f"{path}.items.properties[{key}]"
        if not isinstance(prop, dict):
            continue
        if key not in required and "default" not in prop:
            detail = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            errs.append(status.required(f"{where}.default", detail))
        if prop.get("nullable") is True:
            errs.append(status.forbidden(f"{where}.nullable", "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
    return errs


def _is_int_or_string(branches: Any) -> bool:
    return bool(branches == [{"type": "integer"}, {"type": "string"}])


def _structural_errors(raw: dict[str, Any], path: str, level: str) -> list[FieldError]:
    errs = []
    kind, embedded = raw.get("type") or "", bool(raw.get("x-kubernetes-embedded-resource"))
    preserve, int_or_string = bool(raw.get("x-kubernetes-preserve-unknown-fields")), bool(raw.get("x-kubernetes-int-or-string"))
    if kind == "array" and raw.get("items") is None:
        errs.append(status.required(f"{path}.items", "must be specified"))
    if isinstance(raw.get("items"), dict):
        errs += _structural_errors(raw["items"], f"{path}.items", _ITEM)
    for key, sub in _d(raw.get("properties")).items():
        errs += _structural_errors(_d(sub), f"{path}.properties[{key}]", _FIELD)
    if "additionalProperties" in raw:
        if level == _ROOT:
            errs.append(status.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(raw["additionalProperties"], dict):
            errs += _structural_errors(raw["additionalProperties"], f"{path}.additionalProperties", _FIELD)
    for ext in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
        if int_or_string and raw.get(ext):
            errs.append(status.invalid(f"{path}.{ext}", True, "must be false if x-kubernetes-int-or-string is true"))
    errs += _value_validation_errors(raw, path)
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(status.invalid(f"{path}.type", kind, detail) if kind else status.required(f"{path}.type", detail))
    elif not kind and not int_or_string and not preserve:
        where = {_ROOT: "at the root", _ITEM: "for specified array items", _FIELD: "for specified object fields"}[level]
        errs.append(status.required(f"{path}.type", f"must not be empty {where}"))
    if embedded and "additionalProperties" in raw:
        errs.append(status.forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
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
            errs.append(status.invalid(f"{path}.properties[{key}].type", _d(props[key]).get("type", ""), "must be string"))
    if "metadata" not in props:
        return errs
    meta, where = _d(props["metadata"]), f"{path}.properties[metadata]"
    if meta.get("type") != "object":
        errs.append(status.invalid(f"{where}.type", meta.get("type", ""), "must be object"))
    extra = set(meta) - {"type", "default", "properties"} or set(_d(meta.get("properties"))) - {"name", "generateName"}
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
            errs.append(status.invalid(f"{path}.pattern", raw["pattern"], f"must be a valid regular expression, but isn't: {e}"))
    skip_any = _is_int_or_string(raw.get("anyOf"))
    all_of = raw.get("allOf") or []
    skip_first_all = bool(all_of) and _is_int_or_string(_d(all_of[0]).get("anyOf"))
    for key in ("anyOf", "allOf", "oneOf"):
        for i, sub in enumerate(raw.get(key) or []):
            skip = (key == "allOf" and i == 0 and skip_first_all)
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
        errs.append(status.forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
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
