"""RBAC's own escalation guard: nobody grants, through RBAC, more than they already hold.

Kubernetes enforces this in the Role/ClusterRole/RoleBinding/ClusterRoleBinding storage,
not in the authorizer: writing a role requires holding every permission in it (or the
``escalate`` verb on it), and writing a binding requires holding the bound role's
permissions (or the ``bind`` verb on that role). :func:`check_role_write` and
:func:`check_binding_write` are that guard in one call each, raising the 403 Kubernetes
would answer; the smaller functions are exposed for SubjectAccessReview-style questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes, go_quote, go_quote_list
from pyocm.apiserver.authorization.index import CLUSTER_ROLE, ROLE, RbacIndex
from pyocm.apiserver.authorization.rules import PolicyRule, parse_rules, uncovered
from pyocm.kube import status

RBAC_GROUP = "rbac.authorization.k8s.io"
_ROLE_RESOURCES = {ROLE: "roles", CLUSTER_ROLE: "clusterroles"}
_BINDING_RESOURCES = {"RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}

#: What setting an aggregationRule requires: it can gather any rule, so only ``*`` on ``*``.
FULL_AUTHORITY = (
    PolicyRule(verbs=("*",), api_groups=("*",), resources=("*",)),
    PolicyRule(verbs=("*",), non_resource_urls=("*",)),
)
AGGREGATION_DENIED = "must have cluster-admin privileges to use the aggregationRule"

#: Metadata a garbage collector or finalizer may change without an escalation check; the
#: server-written bookkeeping fields are ignored too, since no client can grant with them.
_GC_FIELDS = (
    "ownerReferences",
    "finalizers",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_SERVER_FIELDS = ("resourceVersion", "managedFields")


def confirm_no_escalation(
    index: RbacIndex,
    *,
    user: UserInfo,
    rules: Iterable[PolicyRule | Mapping[str, Any]],
    namespace: str,
) -> list[PolicyRule]:
    """The pieces of ``rules`` that ``user`` does not hold in ``namespace`` ("" = cluster-wide).

    Empty means no escalation. Pieces are single (group, resource, verb[, name]) or
    (URL, verb) rules, as ``validation.Covers`` breaks them down.
    """
    wanted = [r if isinstance(r, PolicyRule) else PolicyRule.from_dict(r) for r in rules]
    held = [rule for rule, _ in index.rules_for(user, namespace)]
    return uncovered(held, wanted)


def can_escalate(index: RbacIndex, *, user: UserInfo, kind: str, namespace: str, name: str) -> bool:
    """May ``user`` write a ``kind`` (Role or ClusterRole) beyond their own permissions?

    ``name`` is the request's name: empty for a create, which is a POST to the collection,
    so an ``escalate`` rule limited by resourceNames never allows creating.
    """
    attrs = Attributes(
        user=user,
        verb="escalate",
        api_group=RBAC_GROUP,
        api_version="*",
        resource=_ROLE_RESOURCES[kind],
        namespace=namespace,
        name=name,
    )
    return authorizer.authorize(index, attrs).allowed


def can_bind(
    index: RbacIndex, *, user: UserInfo, role_ref: Mapping[str, Any], namespace: str
) -> bool:
    """May ``user`` bind ``role_ref`` in ``namespace`` ("" for a ClusterRoleBinding)?

    Checked as verb ``bind`` on the role itself (resourceName = the role's name) in the
    binding's namespace, so ``bind`` can be delegated per role and per namespace.
    """
    resource = _ROLE_RESOURCES.get(str(role_ref.get("kind") or ""))
    if resource is None:
        return False
    attrs = Attributes(
        user=user,
        verb="bind",
        api_group=str(role_ref.get("apiGroup") or ""),
        resource=resource,
        namespace=namespace,
        name=str(role_ref.get("name") or ""),
    )
    return authorizer.authorize(index, attrs).allowed


def check_role_write(
    index: RbacIndex,
    *,
    user: UserInfo,
    kind: str,
    namespace: str,
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
) -> None:
    """Refuse (403) a create (``old`` None) or update of a Role/ClusterRole that escalates."""
    if user.is_superuser():
        return
    name = _name(new)
    if can_escalate(
        index, user=user, kind=kind, namespace=namespace, name="" if old is None else name
    ):
        return
    if old is not None and only_gc_fields_changed(new, old):
        return
    resource = _ROLE_RESOURCES[kind]
    wanted = parse_rules(new.get("rules"))
    missing = confirm_no_escalation(index, user=user, rules=wanted, namespace=namespace)
    if missing:
        message = escalation_message(index, user=user, missing=missing, namespace=namespace)
        raise _forbidden(resource, name, message)
    aggregating = _has_aggregation_rule(new) or (old is not None and _has_aggregation_rule(old))
    if kind != CLUSTER_ROLE or not aggregating:
        return
    if confirm_no_escalation(index, user=user, rules=FULL_AUTHORITY, namespace=namespace):
        raise _forbidden(resource, name, AGGREGATION_DENIED)


def check_binding_write(
    index: RbacIndex,
    *,
    user: UserInfo,
    kind: str,
    namespace: str,
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
) -> None:
    """Refuse (403) a create or update of a RoleBinding/ClusterRoleBinding that escalates."""
    if user.is_superuser():
        return
    if old is not None and only_gc_fields_changed(new, old):
        return
    role_ref = new.get("roleRef") or {}
    if can_bind(index, user=user, role_ref=role_ref, namespace=namespace):
        return
    resource, name = _BINDING_RESOURCES[kind], _name(new)
    role_kind, role_name = str(role_ref.get("kind") or ""), str(role_ref.get("name") or "")
    held = index.role_rules(role_kind, namespace=namespace, name=role_name)
    if held is None:
        raise _forbidden(resource, name, _role_not_found(role_kind, role_name))
    missing = confirm_no_escalation(index, user=user, rules=held, namespace=namespace)
    if missing:
        message = escalation_message(index, user=user, missing=missing, namespace=namespace)
        raise _forbidden(resource, name, message)


def escalation_message(
    index: RbacIndex, *, user: UserInfo, missing: list[PolicyRule], namespace: str
) -> str:
    """``ConfirmNoEscalation``'s error: compacted missing rules, one per line, sorted."""
    lines = sorted({compact_string(rule) for rule in compact_rules(missing)})
    message = (
        f"user {go_quote(user.name)} (groups={go_quote_list(user.groups)}) is attempting to grant"
        " RBAC permissions not currently held:\n" + "\n".join(lines)
    )
    errors = [m.error for m in index.bindings_for(user, namespace) if m.rules is None]
    if errors:
        message += f"; resolution errors: [{authorizer.aggregate_errors(errors)}]"
    return message


def compact_rules(pieces: list[PolicyRule]) -> list[PolicyRule]:
    """``CompactRules``: merge rules on one group/resource (and at most one name) by verb."""
    merged: dict[tuple[str, str, str | None], list[str]] = {}
    compacted: list[PolicyRule] = []
    for rule in pieces:
        simple = (
            len(rule.resource_names) <= 1
            and not rule.non_resource_urls
            and len(rule.api_groups) == 1
            and len(rule.resources) == 1
        )
        if not simple:
            compacted.append(rule)
            continue
        key = (
            rule.api_groups[0],
            rule.resources[0],
            rule.resource_names[0] if rule.resource_names else None,
        )
        verbs = merged.setdefault(key, [])
        verbs.extend(v for v in rule.verbs if v not in verbs)
    for (group, resource, name), verbs in merged.items():
        names = (name,) if name is not None else ()
        compacted.append(
            PolicyRule(
                verbs=tuple(verbs), api_groups=(group,), resources=(resource,), resource_names=names
            )
        )
    return compacted


def compact_string(rule: PolicyRule) -> str:
    """``rbacv1helpers.CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    fields = (
        ("APIGroups", rule.api_groups),
        ("Resources", rule.resources),
        ("NonResourceURLs", rule.non_resource_urls),
        ("ResourceNames", rule.resource_names),
        ("Verbs", rule.verbs),
    )
    return (
        "{"
        + ", ".join(f"{label}:{go_quote_list(values)}" for label, values in fields if values)
        + "}"
    )


def only_gc_fields_changed(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """``IsOnlyMutatingGCFields``: an update that only touches owner references and finalizers.

    Those updates come from the garbage collector and finalizing controllers, which must be
    able to let an object go without holding the permissions it grants.
    """
    candidate = dict(new)
    meta = dict(candidate.get("metadata") or {})
    old_meta = old.get("metadata") or {}
    for key in _GC_FIELDS + _SERVER_FIELDS:
        meta.pop(key, None)
        if key in old_meta and key not in _SERVER_FIELDS:
            meta[key] = old_meta[key]
    candidate["metadata"] = meta
    reference = dict(old)
    reference["metadata"] = {k: v for k, v in old_meta.items() if k not in _SERVER_FIELDS}
    return bool(_semantic(candidate) == _semantic(reference))


def _semantic(value: Any) -> Any:
    """Drop null and empty members: to Go structs and semantic equality they are absent."""
    if isinstance(value, Mapping):
        pruned = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_semantic(item) for item in value]
    return value


def _has_aggregation_rule(role: Mapping[str, Any]) -> bool:
    """Only a rule with selectors counts; an empty one selects nothing."""
    rule = role.get("aggregationRule") or {}
    return bool(rule.get("clusterRoleSelectors"))


def _role_not_found(role_kind: str, role_name: str) -> str:
    """The storage-backed resolver's wording (plural resource), unlike the authorizer's lister."""
    resource = _ROLE_RESOURCES.get(role_kind)
    if resource is None:
        return f"unsupported role reference kind: {go_quote(role_kind)}"
    return f"{resource}.{RBAC_GROUP} {go_quote(role_name)} not found"


def _forbidden(resource: str, name: str, message: str) -> status.ApiError:
    qualified = f"{resource}.{RBAC_GROUP}"
    subject = f"{qualified} {go_quote(name)}" if name else qualified
    return status.forbidden_error(
        message=f"{subject} is forbidden: {message}", resource=resource, group=RBAC_GROUP, name=name
    )


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
