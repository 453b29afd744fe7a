"""RBAC as Kubernetes' authorizer reads it, for comparing what two sets of roles allow: every
rule a ServiceAccount holds through the bindings in a list of objects, expanded into single
grants (one group, resource, verb, name and namespace each), and whether one grant covers
another (``*`` and an absent resourceNames match anything, a ClusterRoleBinding every
namespace)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from pyocm.kube.selectors import from_label_selector

Obj = dict[str, Any]
ANY = "*"
NON_RESOURCE = "<nonResourceURL>"


class Grant(NamedTuple):
    group: str
    resource: str
    verb: str
    name: str = ANY
    #: a namespace, or ANY for every namespace and the cluster-scoped resources
    scope: str = ANY

    def __str__(self) -> str:
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        named = "" if self.name == ANY else f" named {self.name}"
        where = "cluster-wide" if self.scope == ANY else f"in namespace {self.scope}"
        return f"{self.verb} {what}{named} {where}"


class BoundRole(NamedTuple):
    """A role a binding refers to that the objects do not define (Kubernetes' own, e.g. admin)."""

    kind: str
    name: str
    scope: str = ANY


class Holdings(NamedTuple):
    grants: frozenset[Grant]
    elsewhere: frozenset[BoundRole]


def expand(rules: Iterable[Mapping[str, Any]], *, scope: str) -> Iterator[Grant]:
    for rule in rules:
        verbs = rule.get("verbs") or []
        for url in rule.get("nonResourceURLs") or []:
            yield from (Grant(NON_RESOURCE, url, verb, ANY, scope) for verb in verbs)
        names = rule.get("resourceNames") or [ANY]
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for verb in verbs:
                    yield from (Grant(group, resource, verb, name, scope) for name in names)


def _resource_matches(wide: str, narrow: str) -> bool:
    """``rbac.ResourceMatches``: ``*``, the same name, or ``*/sub`` for any resource's ``sub``."""
    if wide in (ANY, narrow):
        return True
    return wide.startswith("*/") and "/" in narrow and narrow.endswith(wide[1:])


def covers(wide: Grant, narrow: Grant) -> bool:
    """Whether everything ``narrow`` allows, ``wide`` allows too."""
    return _resource_matches(wide.resource, narrow.resource) and all(
        w in (ANY, n)
        for w, n in zip(
            (wide.group, wide.verb, wide.name, wide.scope),
            (narrow.group, narrow.verb, narrow.name, narrow.scope),
            strict=True,
        )
    )


def uncovered(grants: Iterable[Grant], by: Iterable[Grant]) -> list[Grant]:
    wide = list(by)
    return sorted(g for g in grants if not any(covers(w, g) for w in wide))


def held_by(objects: list[Obj], *, account: str, namespace: str) -> Holdings:
    """What ServiceAccount ``namespace/account`` may do through the bindings in ``objects``."""
    grants: set[Grant] = set()
    elsewhere: set[BoundRole] = set()
    for binding in objects:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not _names_account(binding, account=account, namespace=namespace):
            continue
        bound_in = binding["metadata"].get("namespace")
        scope = bound_in if binding["kind"] == "RoleBinding" else ANY
        ref = binding["roleRef"]
        rules = _rules_of(objects, kind=ref["kind"], name=ref["name"], namespace=bound_in)
        if rules is None:
            elsewhere.add(BoundRole(ref["kind"], ref["name"], scope))
        else:
            grants.update(expand(rules, scope=scope))
    return Holdings(frozenset(grants), frozenset(elsewhere))


def _names_account(binding: Obj, *, account: str, namespace: str) -> bool:
    """Whether a subject is the ServiceAccount itself, its user name, or a group it is in."""
    default_ns = binding["metadata"].get("namespace")
    known = {
        ("ServiceAccount", namespace, account),
        ("User", None, f"system:serviceaccount:{namespace}:{account}"),
        ("Group", None, "system:serviceaccounts"),
        ("Group", None, f"system:serviceaccounts:{namespace}"),
        ("Group", None, "system:authenticated"),
    }
    return any(
        (kind, subject.get("namespace", default_ns) if kind == "ServiceAccount" else None, name)
        in known
        for subject in binding.get("subjects") or []
        for kind, name in [(subject.get("kind"), subject.get("name"))]
    )


def _rules_of(
    objects: list[Obj], *, kind: str, name: str, namespace: str | None
) -> list[Obj] | None:
    """The rules of the role a binding refers to; an aggregated ClusterRole's are those of the
    ClusterRoles its selectors match, as the aggregation controller fills them in."""
    for role in objects:
        meta = role["metadata"]
        if role["kind"] != kind or meta["name"] != name:
            continue
        if kind == "Role" and meta.get("namespace") != namespace:
            continue
        rules = list(role.get("rules") or [])
        if aggregation := role.get("aggregationRule"):
            rules += _aggregated(objects, aggregation)
        return rules
    return None


def _aggregated(objects: list[Obj], aggregation: Obj) -> list[Obj]:
    selectors = [from_label_selector(s) for s in aggregation.get("clusterRoleSelectors") or []]
    return [
        rule
        for role in objects
        if role["kind"] == "ClusterRole"
        and any(s.matches(role["metadata"].get("labels")) for s in selectors)
        for rule in role.get("rules") or []
    ]
