"""Validation of ``admissionregistration.k8s.io/v1`` webhook configurations, with
kube-apiserver's messages and field paths (``pkg/apis/admissionregistration/validation``
and ``staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go``).

Two checks relax on update, as kube's do, so an object stored under older rules can
still be changed: ``sideEffects`` may stay Unknown or Some, and ``admissionReviewVersions``
need not name a version this server speaks, when the stored object already did so.

pyocm does not evaluate ``matchConditions`` (CEL): a configuration that uses them is
refused, rather than stored and silently called for requests its conditions exclude.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pyocm.apiserver.registry.builtin.labelselector import validate_selector
from pyocm.kube import names
from pyocm.kube.status import (
    ErrorType,
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)

Obj = dict[str, Any]

ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
ALL_SIDE_EFFECTS = ("None", "NoneOnDryRun", "Some", "Unknown")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
REINVOCATION_POLICIES = ("IfNeeded", "Never")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
_URL_FORM = "; desired format: https://host[/path]"


def invalid_strings(path: str, values: list[str], detail: str) -> FieldError:
    """An Invalid error whose value is a Go ``[]string``, shown as ``%#v`` shows it."""
    rendered = "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"
    return FieldError(ErrorType.INVALID, path, f"{rendered}: {detail}")


@dataclass(frozen=True)
class Relaxed:
    """What an update may keep because the stored object had it already."""

    side_effects: bool = False
    review_versions: bool = False


def relaxed_by(old: Obj | None) -> Relaxed:
    hooks = _webhooks(old or {})
    return Relaxed(
        side_effects=any(h.get("sideEffects") not in NO_SIDE_EFFECTS for h in hooks),
        review_versions=any(
            not set(h.get("admissionReviewVersions") or ()) & set(ACCEPTED_REVIEW_VERSIONS)
            for h in hooks
        ),
    )


def validate_configuration(obj: Obj, *, mutating: bool, relaxed: Relaxed) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, hook in enumerate(_webhooks(obj)):
        path = f"webhooks[{i}]"
        name = str(hook.get("name") or "")
        if name and name in seen:
            errs.append(duplicate(f"{path}.name", name))
        seen.add(name)
        errs += _validate_webhook(hook, path, mutating=mutating, relaxed=relaxed)
    return errs


def _webhooks(obj: Obj) -> list[Obj]:
    hooks = obj.get("webhooks")
    return [h for h in hooks if isinstance(h, dict)] if isinstance(hooks, list) else []


def _validate_webhook(
    hook: Obj, path: str, *, mutating: bool, relaxed: Relaxed
) -> list[FieldError]:
    errs = fully_qualified_name(str(hook.get("name") or ""), f"{path}.name")
    for i, rule in enumerate(hook.get("rules") or []):
        errs += validate_rule(rule if isinstance(rule, dict) else {}, f"{path}.rules[{i}]")
    errs += _policies(hook, path, mutating=mutating, relaxed=relaxed)
    errs += review_versions(
        [str(v) for v in hook.get("admissionReviewVersions") or []],
        f"{path}.admissionReviewVersions",
        require_recognized=not relaxed.review_versions,
    )
    for selector in ("namespaceSelector", "objectSelector"):
        errs += validate_selector(hook.get(selector), f"{path}.{selector}")
    errs += client_config(hook.get("clientConfig") or {}, f"{path}.clientConfig")
    if hook.get("matchConditions"):
        errs.append(
            forbidden(
                f"{path}.matchConditions",
                "matchConditions are not supported by this server (pyocm does not evaluate CEL)",
            )
        )
    return errs


def _policies(hook: Obj, path: str, *, mutating: bool, relaxed: Relaxed) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, allowed in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        if hook.get(key) is not None and hook[key] not in allowed:
            errs.append(not_supported(f"{path}.{key}", hook[key], list(allowed)))
    effects = hook.get("sideEffects")
    supported = ALL_SIDE_EFFECTS if relaxed.side_effects else NO_SIDE_EFFECTS
    if effects is None:
        errs.append(
            required(f"{path}.sideEffects", f"must specify one of {', '.join(NO_SIDE_EFFECTS)}")
        )
    elif effects not in supported:
        errs.append(not_supported(f"{path}.sideEffects", effects, list(supported)))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errs.append(
            invalid(
                f"{path}.timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    policy = hook.get("reinvocationPolicy")
    if mutating and policy is not None and policy not in REINVOCATION_POLICIES:
        errs.append(
            not_supported(f"{path}.reinvocationPolicy", policy, list(REINVOCATION_POLICIES))
        )
    return errs


def fully_qualified_name(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain with at least three segments."""
    if not name:
        return [required(path)]
    problems = names.is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def review_versions(
    versions: list[str], path: str, *, require_recognized: bool
) -> list[FieldError]:
    accepted = ", ".join(ACCEPTED_REVIEW_VERSIONS)
    if not versions:
        return [required(path, f"must specify one of {accepted}")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(f"{path}[{i}]", version, m) for m in _dns1035_label(version)]
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        errs.append(invalid_strings(path, versions, f"must include at least one of {accepted}"))
    return errs


def _dns1035_label(value: str) -> list[str]:
    problems = names.is_dns1123_label(value)
    if not problems and value[:1].isdigit():
        return [
            names.regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                "[a-z]([-a-z0-9]*[a-z0-9])?",
                "my-name",
                "abc-123",
            )
        ]
    return problems


def validate_rule(rule: Obj, path: str) -> list[FieldError]:
    """``validateRuleWithOperations``."""
    errs: list[FieldError] = []
    operations = [str(o) for o in rule.get("operations") or []]
    if not operations:
        errs.append(required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        errs.append(
            invalid_strings(
                f"{path}.operations",
                operations,
                "if '*' is present, must not specify other operations",
            )
        )
    for i, op in enumerate(operations):
        if op not in OPERATIONS:
            errs.append(not_supported(f"{path}.operations[{i}]", op, list(OPERATIONS)))
    for key, noun in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = [str(v) for v in rule.get(key) or []]
        if not values:
            errs.append(required(f"{path}.{key}"))
        if len(values) > 1 and "*" in values:
            errs.append(
                invalid_strings(
                    f"{path}.{key}", values, f"if '*' is present, must not specify other {noun}"
                )
            )
    for i, version in enumerate(rule.get("apiVersions") or []):
        if not version:
            errs.append(required(f"{path}.apiVersions[{i}]"))
    errs += _resources([str(r) for r in rule.get("resources") or []], f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(f"{path}.scope", scope, list(SCOPES)))
    return errs


def _resources(resources: list[str], path: str) -> list[FieldError]:
    """``validateResources``: wildcards may not overlap other entries."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(required(path))
    any_sub: set[str] = set()  # x/*
    any_res: set[str] = set()  # */x
    plain = False
    for i, entry in enumerate(resources):
        if not entry:
            errs.append(required(f"{path}[{i}]"))
            continue
        res, slash, sub = entry.partition("/")
        if not slash:
            plain = entry != "*"
            continue
        if res in any_sub:
            errs.append(
                invalid(f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}")
            )
        if sub in any_res:
            errs.append(
                invalid(f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}")
            )
        if sub == "*":
            any_sub.add(res)
        if res == "*":
            any_res.add(sub)
    if len(resources) > 1 and "*/*" in resources:
        errs.append(
            invalid_strings(
                path, resources, "if '*/*' is present, must not specify other resources"
            )
        )
    if "*" in resources and plain:
        errs.append(
            invalid_strings(
                path,
                resources,
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return errs


def client_config(config: Obj, path: str) -> list[FieldError]:
    """``ValidateWebhookClientConfig``: exactly one of url and service."""
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return webhook_url(str(url), f"{path}.url")
    assert isinstance(service, dict)
    return webhook_service(service, f"{path}.service")


def webhook_url(url: str, path: str) -> list[FieldError]:
    try:
        parts = urlsplit(url)
    except ValueError as err:
        return [required(path, f"url must be a valid URL: {err}{_URL_FORM}")]
    errs: list[FieldError] = []
    if parts.scheme != "https":
        errs.append(
            invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM)
        )
    host = parts.netloc.rpartition("@")[2]
    if not host:
        errs.append(invalid(path, host, "host must be specified" + _URL_FORM))
    if "@" in parts.netloc:
        user = parts.netloc.rpartition("@")[0]
        errs.append(invalid(path, user, "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def webhook_service(service: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(
            invalid(
                f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"
            )
        )
    return errs + _service_path(service.get("path"), f"{path}.path")


def _service_path(url_path: Any, path: str) -> list[FieldError]:
    if url_path is None or url_path in ("", "/"):
        return []
    text = str(url_path)
    if text == "//":
        return [invalid(path, text, "segment[0] may not be empty")]
    errs: list[FieldError] = []
    if not text.startswith("/"):
        errs.append(invalid(path, text, "must start with a '/'"))
    rest = text[1:]
    if rest.endswith("/"):
        rest = rest[:-1]
    for i, step in enumerate(rest.split("/")):
        if not step:
            errs.append(invalid(path, text, f"segment[{i}] may not be empty"))
            continue
        errs += [
            invalid(path, text, f"segment[{i}]: {m}") for m in names.is_dns1123_subdomain(step)
        ]
    return errs
