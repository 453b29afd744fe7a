"""``rbac.authorization.k8s.io/v1``: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Names only need to be valid path segments (RBAC names such as ``system:node`` carry
colons). Rules, role references and subjects are checked as Kubernetes'
``pkg/apis/rbac/validation`` does, after the v1 defaults fill in API groups. Roles and
bindings may be created with PUT, which RBAC reconcilers rely on.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.builtin import labelselector
from pyocm.apiserver.registry.strategy import Context, Obj, Strategy
from pyocm.kube import names
from pyocm.kube.status import ErrorType, FieldError, invalid, not_supported, required

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def _go_strings(values: list[Any]) -> str:
    """``%#v`` of a Go ``[]string``, as the error text shows list values."""
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def _invalid_rendered(path: str, rendered: str, detail: str) -> FieldError:
    # The value is already in Go's notation, which must appear unquoted.
    return FieldError(ErrorType.INVALID, path, f"{rendered}: {detail}")


def rule_errors(rule: Any, *, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidatePolicyRule``: verbs always; then either non-resource URLs (cluster roles
    only, never mixed with resources) or at least one API group and one resource."""
    rule = rule if isinstance(rule, dict) else {}
    errs = (
        []
        if rule.get("verbs")
        else [required(f"{path}.verbs", "verbs must contain at least one value")]
    )
    urls = rule.get("nonResourceURLs") or []
    if urls:
        rendered = _go_strings(urls)
        if namespaced:
            errs.append(
                _invalid_rendered(
                    f"{path}.nonResourceURLs",
                    rendered,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(
                _invalid_rendered(
                    f"{path}.nonResourceURLs",
                    rendered,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not rule.get("apiGroups"):
        errs.append(
            required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not rule.get("resources"):
        errs.append(
            required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return errs


def rules_errors(obj: Obj, *, namespaced: bool) -> list[FieldError]:
    rules = obj.get("rules") or []
    return [
        e
        for i, rule in enumerate(rules)
        for e in rule_errors(rule, namespaced=namespaced, path=f"rules[{i}]")
    ]


def aggregation_errors(obj: Obj) -> list[FieldError]:
    """A ClusterRole's ``aggregationRule`` needs selectors, each a valid label selector."""
    rule = obj.get("aggregationRule")
    if not isinstance(rule, dict):
        return []
    path = "aggregationRule.clusterRoleSelectors"
    selectors = rule.get("clusterRoleSelectors") or []
    if not selectors:
        return [
            required(
                path, "at least one clusterRoleSelector required if aggregationRule is non-nil"
            )
        ]
    errs: list[FieldError] = []
    for i, selector in enumerate(selectors):
        found = labelselector.validate_selector(selector, f"{path}[{i}]")
        # Kubernetes also fails to build the selector and says so once more.
        errs += found + (
            [invalid(f"{path}[{i}]", "null", "invalid label selector.")] if found else []
        )
    return errs


def default_binding(obj: Obj) -> None:
    """The v1 defaults: ``roleRef.apiGroup`` is RBAC's; User and Group subjects get
    RBAC's group, ServiceAccounts the core group."""
    ref = obj.get("roleRef")
    if not isinstance(ref, dict):
        ref = obj["roleRef"] = {}
    if not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or []:
        if (
            isinstance(subject, dict)
            and not subject.get("apiGroup")
            and subject.get("kind") in ("User", "Group")
        ):
            subject["apiGroup"] = GROUP


def role_ref_errors(obj: Obj, *, kinds: tuple[str, ...]) -> list[FieldError]:
    ref = obj.get("roleRef") or {}
    group, kind, name = (str(ref.get(k) or "") for k in ("apiGroup", "kind", "name"))
    errs = []
    if group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", group, [GROUP]))
    if kind not in kinds:
        errs.append(not_supported("roleRef.kind", kind, list(kinds)))
    if not name:
        errs.append(required("roleRef.name"))
    errs += (
        [invalid("roleRef.name", name, msg) for msg in names.is_path_segment_name(name)]
        if name
        else []
    )
    return errs


def subject_errors(subject: Any, *, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidateRoleBindingSubject``; a ServiceAccount in a cluster binding needs a namespace."""
    subject = subject if isinstance(subject, dict) else {}
    name, kind, group = (str(subject.get(k) or "") for k in ("name", "kind", "apiGroup"))
    errs = [] if name else [required(f"{path}.name")]
    if kind == "ServiceAccount":
        errs += (
            [invalid(f"{path}.name", name, msg) for msg in names.is_dns1123_subdomain(name)]
            if name
            else []
        )
        if group:
            errs.append(not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, list(SUBJECT_KINDS)))
    return errs


def _role_ref_key(obj: Obj) -> tuple[str, str, str]:
    ref = obj.get("roleRef") or {}
    return (str(ref.get("apiGroup") or ""), str(ref.get("kind") or ""), str(ref.get("name") or ""))


def role_ref_change_errors(obj: Obj, old: Obj) -> list[FieldError]:
    """A binding's ``roleRef`` never changes; the error shows the new one in Go form."""
    new = _role_ref_key(obj)
    if new == _role_ref_key(old):
        return []
    rendered = f'rbac.RoleRef{{APIGroup:"{new[0]}", Kind:"{new[1]}", Name:"{new[2]}"}}'
    return [_invalid_rendered("roleRef", rendered, "cannot change roleRef")]


class _RBACStrategy(Strategy):
    tracks_generation = False
    allow_create_on_update = True

    def name_validator(self, name: str) -> list[str]:
        return names.is_path_segment_name(name)

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return self.validate_create(obj, ctx)


class RoleStrategy(_RBACStrategy):
    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return rules_errors(obj, namespaced=True)


class ClusterRoleStrategy(_RBACStrategy):
    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return rules_errors(obj, namespaced=False) + aggregation_errors(obj)


class _BindingStrategy(_RBACStrategy):
    namespaced = True
    role_kinds: tuple[str, ...] = ("Role", "ClusterRole")

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        default_binding(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        default_binding(obj)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        errs = role_ref_errors(obj, kinds=self.role_kinds)
        for i, subject in enumerate(obj.get("subjects") or []):
            errs += subject_errors(subject, namespaced=self.namespaced, path=f"subjects[{i}]")
        return errs

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return self.validate_create(obj, ctx) + role_ref_change_errors(obj, old)


class RoleBindingStrategy(_BindingStrategy):
    """A RoleBinding may grant a Role of its namespace or a ClusterRole."""


class ClusterRoleBindingStrategy(_BindingStrategy):
    namespaced = False
    role_kinds = ("ClusterRole",)
