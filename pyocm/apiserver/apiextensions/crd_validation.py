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

Each version's schema is checked by :mod:`.crd_schema`. Not checked here: the API approval
annotation of ``*.k8s.io`` groups, and whether stored objects still validate when a schema
changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.apiserver.apiextensions import crd_schema, schema
from pyocm.kube import status
from pyocm.kube.status import FieldError

Obj = Mapping[str, Any]
_SCOPES = ["Cluster", "Namespaced"]
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"


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
        errs.append(
            status.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
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
    pairs = [
        ("spec.group", spec.get("group"), old_spec.get("group")),
        ("spec.names.plural", names.get("plural"), old_names.get("plural")),
    ]
    if _established(old):
        pairs = [
            ("spec.scope", spec.get("scope"), old_spec.get("scope")),
            ("spec.names.kind", names.get("kind"), old_names.get("kind")),
            *pairs,
        ]
    errs += [
        status.invalid(path, now, "field is immutable") for path, now, was in pairs if now != was
    ]
    stored = _d(new.get("status")).get("storedVersions")
    if isinstance(stored, list):
        errs += _stored_version_errors(stored, spec.get("versions") or [])
    return errs


def _established(crd: Obj) -> bool:
    conditions = _d(crd.get("status")).get("conditions") or []
    return any(
        _d(c).get("type") == "Established" and _d(c).get("status") == "True" for c in conditions
    )


def _stored_version_errors(stored: list[Any], versions: list[Any]) -> list[FieldError]:
    path = "status.storedVersions"
    if not stored:
        return [status.invalid(path, stored, "must have at least one stored version")]
    names = [_d(v).get("name") for v in versions]
    errs = [
        status.invalid(path, v, f"must have the storage version {v.get('name')}")
        for v in map(_d, versions)
        if v.get("storage") and v.get("name") not in stored
    ]
    return errs + [
        status.invalid(f"{path}[{i}]", v, "must appear in spec.versions")
        for i, v in enumerate(stored)
        if v not in names
    ]


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
        errs += [
            status.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required")
            for i, v in enumerate(versions)
            if _schema_of(v) is None
        ]
    if spec.get("preserveUnknownFields") is True and any(
        crd_schema.has_default(_schema_of(v)) for v in versions
    ):
        errs.append(
            status.invalid(
                "spec.preserveUnknownFields",
                True,
                "must be false in order to use defaults in the schema",
            )
        )
    for i, version in enumerate(versions):
        errs += _version_errors(version, f"spec.versions[{i}]", hoisted)
    names = [v.get("name") for v in versions]
    if len(set(names)) != len(names):
        errs.append(status.invalid("spec.versions", versions, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        errs.append(
            status.invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    names_spec = _d(spec.get("names"))
    errs += [
        status.required(f"spec.names.{k}")
        for k in ("plural", "singular", "kind", "listKind")
        if not names_spec.get(k)
    ]
    errs += _name_format_errors(names_spec, "spec.names")
    if hoisted["schema"] is not None:
        errs += crd_schema.schema_errors(
            hoisted["schema"], "spec.validation", status_enabled=any(map(_status_on, versions))
        )
    errs += _subresource_errors(_d(hoisted["subresources"]), "spec.subresources")
    errs += _column_errors(
        hoisted["additionalPrinterColumns"] or [], "spec.additionalPrinterColumns"
    )
    return errs + _conversion_errors(
        _d(spec.get("conversion")), spec.get("preserveUnknownFields") is True
    )


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


def _version_errors(
    version: dict[str, Any], path: str, hoisted: dict[str, Any]
) -> list[FieldError]:
    errs = []
    name = str(version.get("name") or "")
    if problems := schema.dns1035_label_errors(name):
        errs.append(status.invalid(f"{path}.name", name, ",".join(problems)))
    errs += _deprecation_errors(version, f"{path}.deprecationWarning")
    if hoisted["schema"] is None and _schema_of(version) is not None:
        errs += crd_schema.schema_errors(
            _schema_of(version), f"{path}.schema", status_enabled=_status_on(version)
        )
    if hoisted["subresources"] is None:
        errs += _subresource_errors(_d(version.get("subresources")), f"{path}.subresources")
    if hoisted["additionalPrinterColumns"] is None:
        errs += _column_errors(
            version.get("additionalPrinterColumns") or [], f"{path}.additionalPrinterColumns"
        )
    return errs


def _deprecation_errors(version: dict[str, Any], path: str) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    if warning is None:
        return []
    if not version.get("deprecated"):
        return [status.invalid(path, warning, "can only be set for deprecated versions")]
    problems = (["must be <= 256 characters long"] if len(warning) > 256 else []) + (
        [] if warning else ["must not be an empty string"]
    )
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
    for key, mixed_case in (
        ("plural", False),
        ("singular", False),
        ("kind", True),
        ("listKind", True),
    ):
        value = str(names.get(key) or "")
        problems = (
            schema.dns1035_label_errors(value.lower() if mixed_case else value) if value else []
        )
        if problems:
            lead = "may have mixed case, but should otherwise match: " if mixed_case else ""
            errs.append(status.invalid(f"{path}.{key}", value, lead + ",".join(problems)))
    for i, value in enumerate(names.get("shortNames") or []):
        if problems := schema.dns1035_label_errors(str(value)):
            errs.append(status.invalid(f"{path}.shortNames[{i}]", value, ",".join(problems)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(
            status.invalid(
                f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"
            )
        )
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
    for key, under in (
        ("specReplicasPath", (".spec.",)),
        ("statusReplicasPath", (".status.",)),
        ("labelSelectorPath", (".spec.", ".status.")),
    ):
        value = str(scale.get(key) or "")
        where = f"{path}.scale.{key}"
        if not value:
            errs += [] if key == "labelSelectorPath" else [status.required(where)]
        elif simple := _simple_json_path_errors(value, where):
            errs += simple
        elif not value.startswith(under):
            detail = (
                "should be a json path under either .spec or .status"
                if len(under) == 2
                else f"should be a json path under {under[0][:-1]}"
            )
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
        errs += (
            _simple_json_path_errors(json_path, f"{where}.JSONPath")
            if json_path
            else [status.required(f"{where}.JSONPath")]
        )
    return errs


def _conversion_errors(conversion: dict[str, Any], preserve_unknown: bool) -> list[FieldError]:
    if not conversion:
        return []
    path = "spec.conversion"
    strategy = conversion.get("strategy")
    errs = []
    if strategy != "None" and preserve_unknown:
        errs.append(
            status.invalid(
                f"{path}.strategy", strategy, "must be None if spec.preserveUnknownFields is true"
            )
        )
    if not strategy:
        errs.append(status.required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(status.not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    webhook = _d(conversion.get("webhook"))
    client, reviews = webhook.get("clientConfig"), webhook.get("conversionReviewVersions") or []
    if strategy != "Webhook":
        detail = "should not be set when strategy is not set to Webhook"
        errs += (
            [status.forbidden(f"{path}.webhookClientConfig", detail)] if client is not None else []
        )
        return errs + (
            [status.forbidden(f"{path}.conversionReviewVersions", detail)] if reviews else []
        )
    if client is None:
        errs.append(
            status.required(
                f"{path}.webhookClientConfig", "required when strategy is set to Webhook"
            )
        )
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
            errs += [
                status.invalid(f"{path}[{i}]", version, m)
                for m in schema.dns1035_label_errors(str(version))
            ]
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
        return (
            []
            if rest.split("/")[0]
            else [status.invalid(f"{path}.url", "", "host must be specified")]
        )
    service = _d(service)
    errs = [
        status.required(f"{path}.service.{k}", f"service {k} is required")
        for k in ("name", "namespace")
        if not service.get(k)
    ]
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(
            status.invalid(
                f"{path}.service.port",
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    return errs
