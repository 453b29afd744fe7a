"""What one RBAC ``PolicyRule`` grants: matching a request, and covering another rule.

Matching follows the RBAC authorizer's ``RuleAllows``; covering follows the escalation
check's ``validation.Covers``. Both must agree with Kubernetes to the letter, because a
difference is either a privilege escalation or a client that works on a real cluster and
fails here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.kube.sharing import SharedValues

ALL = "*"

#: JSON field names of a PolicyRule, in the order Kubernetes serialises them.
_JSON_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


#: Verbs, groups and resources lists, each with its set, shared by every rule that holds
#: the same list: a fleet's per-cluster ClusterRoles repeat a handful of them ten thousand
#: times, differing only in ``resourceNames``.
_SHARED: SharedValues[tuple[str, ...], tuple[tuple[str, ...], frozenset[str]]] = SharedValues(
    lambda values: (values, frozenset(values)), limit=4096
)


def _strings(obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not value:
        return ()
    return tuple(str(item) for item in value)


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """An immutable rule with its lists pre-hashed, so matching is set membership.

    Missing and empty lists are the same rule, as Kubernetes' semantic equality has it.
    """

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    _verbs: frozenset[str] = field(init=False, repr=False, compare=False)
    _groups: frozenset[str] = field(init=False, repr=False, compare=False)
    _resources: frozenset[str] = field(init=False, repr=False, compare=False)
    _names: frozenset[str] = field(init=False, repr=False, compare=False)
    _url_prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for listed, members in (
            ("verbs", "_verbs"),
            ("api_groups", "_groups"),
            ("resources", "_resources"),
        ):
            values, found = _SHARED.get(getattr(self, listed))
            object.__setattr__(self, listed, values)
            object.__setattr__(self, members, found)
        object.__setattr__(self, "_names", frozenset(self.resource_names))
        # A trailing "*" makes the entry a prefix; "*" alone becomes the empty prefix.
        prefixes = tuple(url.rstrip(ALL) for url in self.non_resource_urls if url.endswith(ALL))
        object.__setattr__(self, "_url_prefixes", prefixes)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> PolicyRule:
        return cls(*(_strings(obj, key) for key in _JSON_FIELDS))

    def to_dict(self) -> dict[str, list[str]]:
        """The JSON shape: ``verbs`` always, the other lists only when non-empty."""
        values = (
            self.verbs,
            self.api_groups,
            self.resources,
            self.resource_names,
            self.non_resource_urls,
        )
        out: dict[str, list[str]] = {}
        for key, value in zip(_JSON_FIELDS, values, strict=True):
            if value or key == "verbs":
                out[key] = list(value)
        return out

    def allows(self, attrs: Attributes) -> bool:
        """``RuleAllows``: every dimension of the request is granted by this rule."""
        if not (ALL in self._verbs or attrs.verb in self._verbs):
            return False
        if not attrs.resource_request:
            return self.allows_path(attrs.path)
        if not (ALL in self._groups or attrs.api_group in self._groups):
            return False
        if not self.allows_resource(attrs.resource, attrs.subresource):
            return False
        return not self._names or attrs.name in self._names

    def allows_resource(self, resource: str, subresource: str) -> bool:
        """``resource`` alone never grants its subresources; ``*/sub`` grants ``sub`` of any."""
        held = self._resources
        if ALL in held:
            return True
        if not subresource:
            return resource in held
        return f"{resource}/{subresource}" in held or f"*/{subresource}" in held

    def allows_path(self, path: str) -> bool:
        if path in self.non_resource_urls:
            return True
        return any(path.startswith(prefix) for prefix in self._url_prefixes)


def parse_rules(raw: Iterable[Mapping[str, Any]] | None) -> tuple[PolicyRule, ...]:
    """The ``rules`` list of a Role or ClusterRole (absent or null is no rules)."""
    return tuple(PolicyRule.from_dict(rule) for rule in raw or ())


def breakdown(rule: PolicyRule) -> Iterator[PolicyRule]:
    """``BreakdownRule``: one rule per (group, resource, verb[, name]) and per (url, verb).

    Each piece is then either wholly covered by one owner rule or not at all, which is what
    makes :func:`covers` a simple search.
    """
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if not rule.resource_names:
                    yield PolicyRule(verbs=(verb,), api_groups=(group,), resources=(resource,))
                for name in rule.resource_names:
                    yield PolicyRule(
                        verbs=(verb,),
                        api_groups=(group,),
                        resources=(resource,),
                        resource_names=(name,),
                    )
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            yield PolicyRule(verbs=(verb,), non_resource_urls=(url,))


def _resources_cover(owner: PolicyRule, wanted: tuple[str, ...]) -> bool:
    held = owner._resources
    if ALL in held:
        return True
    for resource in wanted:
        if resource in held:
            continue
        _, slash, sub = resource.partition("/")
        if not slash or f"*/{sub}" not in held:
            return False
    return True


def _urls_cover(owner: PolicyRule, wanted: tuple[str, ...]) -> bool:
    return all(owner.allows_path(url) for url in wanted)


def rule_covers(owner: PolicyRule, piece: PolicyRule) -> bool:
    """``ruleCovers``: does ``owner`` grant everything ``piece`` (one broken-down rule) grants?

    Unlike matching, an owner rule limited by ``resourceNames`` never covers a piece that is
    not limited, since the piece would grant names the owner does not hold.
    """
    verbs = ALL in owner._verbs or owner._verbs.issuperset(piece.verbs)
    groups = ALL in owner._groups or owner._groups.issuperset(piece.api_groups)
    if piece.resource_names:
        names = not owner._names or owner._names.issuperset(piece.resource_names)
    else:
        names = not owner._names
    return (
        verbs
        and groups
        and names
        and _resources_cover(owner, piece.resources)
        and _urls_cover(owner, piece.non_resource_urls)
    )


def uncovered(owner_rules: list[PolicyRule], wanted: list[PolicyRule]) -> list[PolicyRule]:
    """``validation.Covers``: the broken-down pieces of ``wanted`` no owner rule covers."""
    missing: list[PolicyRule] = []
    for rule in wanted:
        for piece in breakdown(rule):
            if not any(rule_covers(owner, piece) for owner in owner_rules):
                missing.append(piece)
    return missing
