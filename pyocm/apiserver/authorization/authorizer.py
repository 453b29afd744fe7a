"""Allow or deny one request, and list what a user may do (SelfSubjectRulesReview).

Decisions follow kube-apiserver's authorizer chain as pyocm configures it: members of
``system:masters`` are allowed before RBAC is consulted, then the RBAC authorizer allows
the request if any rule reachable from a binding naming the user matches. There are no
deny rules, so a denial only ever says which role references could not be resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.index import RbacIndex


@dataclass(frozen=True, slots=True)
class Decision:
    """``allowed`` plus the authorizer's reason (SubjectAccessReview ``status.reason``).

    An allowed reason names the binding, role and subject that granted the request. A denied
    reason is empty unless some binding naming the user points at a role that does not exist,
    in which case it lists those errors, as Kubernetes does.
    """

    allowed: bool
    reason: str = ""


_SUPERUSER = Decision(allowed=True)


def aggregate_errors(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` of the distinct ones."""
    if len(errors) == 1:
        return errors[0]
    distinct = list(dict.fromkeys(errors))
    if len(distinct) == 1:
        return distinct[0]
    return "[" + ", ".join(distinct) + "]" if distinct else ""


def authorize(index: RbacIndex, attrs: Attributes) -> Decision:
    """Decide ``attrs``; the first rule that matches wins and names itself in the reason."""
    if attrs.user.is_superuser():
        return _SUPERUSER
    errors: list[str] = []
    for match in index.bindings_for(attrs.user, attrs.namespace):
        if match.rules is None:
            errors.append(match.error)
            continue
        for rule in match.rules:
            if rule.allows(attrs):
                return Decision(allowed=True, reason=f"RBAC: allowed by {match.describe()}")
    return Decision(allowed=False, reason=f"RBAC: {aggregate_errors(errors)}" if errors else "")


def rules_review(
    index: RbacIndex, user: UserInfo, *, namespace: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rules that apply to ``user`` in ``namespace``: ``(resourceRules, nonResourceRules)``.

    Like the RBAC authorizer's ``RulesFor`` the lists are not de-duplicated or merged, and a
    rule carrying both resources and URLs contributes to both lists. Resource rules have the
    shape ``{verbs, apiGroups, resources, resourceNames}``, the others ``{verbs, nonResourceURLs}``,
    empty lists left out as in Kubernetes' JSON.
    """
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for rule, _ in index.rules_for(user, namespace):
        if rule.resources:
            shape = {
                "verbs": rule.verbs,
                "apiGroups": rule.api_groups,
                "resources": rule.resources,
                "resourceNames": rule.resource_names,
            }
            resource_rules.append({k: list(v) for k, v in shape.items() if v or k == "verbs"})
        if rule.non_resource_urls:
            non_resource_rules.append(
                {"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)}
            )
    return resource_rules, non_resource_rules


def rules_review_status(index: RbacIndex, user: UserInfo, *, namespace: str) -> dict[str, Any]:
    """The whole ``SubjectRulesReviewStatus``; unresolvable role references fill ``evaluationError``."""
    resource_rules, non_resource_rules = rules_review(index, user, namespace=namespace)
    status: dict[str, Any] = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }
    errors = [m.error for m in index.bindings_for(user, namespace) if m.rules is None]
    if errors:
        status["evaluationError"] = aggregate_errors(errors)
    return status
