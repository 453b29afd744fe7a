"""ClusterRole aggregation: the rules an ``aggregationRule`` gathers from labelled ClusterRoles.

This is the computation of kube-controller-manager's ``clusterrole-aggregation``
controller, as a pure function; a controller in the server writes the results back. For
each selector in turn, the ClusterRoles it matches are taken in name order (never the
aggregating role itself) and their rules appended unless an equal rule is already there.

Aggregated roles may select other aggregated roles (``admin`` gathers ``edit``, which gathers
``view``). Upstream converges over several controller passes; here a role's sources are
aggregated first, giving the converged result in one call. In a cycle the role closing it
contributes the rules it currently stores, which is where the upstream passes start from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyocm.apiserver.authorization.rules import PolicyRule, parse_rules

Obj = Mapping[str, Any]


class SelectorError(ValueError):
    """A clusterRoleSelector Kubernetes would refuse to convert (the controller skips the role)."""


def _requirement_matches(expr: Obj, labels: Mapping[str, str]) -> bool:
    key, operator = str(expr.get("key") or ""), str(expr.get("operator") or "")
    values = [str(v) for v in expr.get("values") or ()]
    if operator in ("In", "NotIn"):
        if not values:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        present = key in labels and labels[key] in values
        return present if operator == "In" else not present
    if operator in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorError("values set must be empty for exists and does not exist")
        return (key in labels) == (operator == "Exists")
    raise SelectorError(f"{operator!r} is not a valid label selector operator")


def selector_matches(selector: Obj | None, labels: Mapping[str, str]) -> bool:
    """``LabelSelectorAsSelector(selector).Matches(labels)``.

    A null selector selects nothing; an empty one (``{}``) selects everything.
    """
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(
        _requirement_matches(expr, labels) for expr in selector.get("matchExpressions") or ()
    )


def _name(role: Obj) -> str:
    return str((role.get("metadata") or {}).get("name") or "")


def _labels(role: Obj) -> Mapping[str, str]:
    labels = (role.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _selectors(role: Obj) -> list[Obj] | None:
    """None for a role without an aggregationRule; a present one with no selectors gathers nothing."""
    rule = role.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return None
    return list(rule.get("clusterRoleSelectors") or ())


class _Aggregator:
    def __init__(self, cluster_roles: Sequence[Obj]) -> None:
        self._by_name = {_name(role): role for role in cluster_roles}
        self._in_name_order = sorted(self._by_name.values(), key=_name)
        self._done: dict[str, tuple[PolicyRule, ...] | None] = {}
        self._visiting: set[str] = set()

    def aggregated(self, name: str) -> tuple[PolicyRule, ...] | None:
        """The rules ``name`` aggregates to; None when it does not aggregate or cannot."""
        if name not in self._done:
            self._visiting.add(name)
            try:
                self._done[name] = self._gather(self._by_name[name])
            except SelectorError:
                self._done[name] = None
            finally:
                self._visiting.discard(name)
        return self._done[name]

    def effective(self, name: str) -> tuple[PolicyRule, ...]:
        """What a role contributes to others: its aggregate, or else its stored rules."""
        if name not in self._visiting:
            gathered = self.aggregated(name)
            if gathered is not None:
                return gathered
        return parse_rules(self._by_name[name].get("rules"))

    def _gather(self, role: Obj) -> tuple[PolicyRule, ...] | None:
        selectors = _selectors(role)
        if selectors is None:
            return None
        own_name = _name(role)
        gathered: dict[PolicyRule, None] = {}
        for selector in selectors:
            for source in self._in_name_order:
                name = _name(source)
                if name != own_name and selector_matches(selector, _labels(source)):
                    gathered.update(dict.fromkeys(self.effective(name)))
        return tuple(gathered)


def aggregate(cluster_roles: Sequence[Obj]) -> dict[str, list[dict[str, Any]]]:
    """Rules (JSON shape) for every ClusterRole in ``cluster_roles`` with an ``aggregationRule``.

    Roles whose selectors Kubernetes could not convert are left out, so the caller leaves
    them untouched, as the upstream controller does when it fails to sync one.
    """
    aggregator = _Aggregator(cluster_roles)
    result: dict[str, list[dict[str, Any]]] = {}
    for role in cluster_roles:
        name = _name(role)
        gathered = aggregator.aggregated(name)
        if gathered is not None:
            result[name] = [rule.to_dict() for rule in gathered]
    return result


def aggregate_changes(cluster_roles: Sequence[Obj]) -> dict[str, list[dict[str, Any]]]:
    """Like :func:`aggregate`, keeping only the roles whose stored rules differ from the result."""
    stored = {_name(role): parse_rules(role.get("rules")) for role in cluster_roles}
    return {
        name: rules
        for name, rules in aggregate(cluster_roles).items()
        if tuple(PolicyRule.from_dict(rule) for rule in rules) != stored[name]
    }


def all_selectors(cluster_roles: Iterable[Obj]) -> list[Obj]:
    """Every clusterRoleSelector of every aggregating role in ``cluster_roles``."""
    return [selector for role in cluster_roles for selector in _selectors(role) or ()]


def may_affect(role: Obj, selectors: Sequence[Obj]) -> bool:
    """Whether a change to ``role`` (as it was, or as it is now) can change any aggregate:
    it aggregates itself, or one of ``selectors`` selects it. A selector that cannot be
    evaluated counts as selecting it."""
    if _selectors(role) is not None:
        return True
    labels = _labels(role)
    for selector in selectors:
        try:
            if selector_matches(selector, labels):
                return True
        except SelectorError:
            return True
    return False
