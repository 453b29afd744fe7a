"""Which webhooks a request calls, as kube-apiserver decides
(``admission/plugin/webhook/generic/webhook.go`` ``ShouldCallHook``, ``predicates/rules``,
``predicates/namespace``, ``predicates/object``).

A webhook is called when one of its rules matches the request's operation, group,
version, resource/subresource and scope; failing that, with matchPolicy Equivalent,
when a rule matches another served version of the same resource (kube's equivalent
resources share their storage), the object then being sent in that version. Its object
selector must match the new or the old object's labels (a missing one matches nothing), and its namespace selector the
labels of the object's namespace: a Namespace's own labels (the new ones on create and
update), always for other cluster-scoped objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.admission.chain import Request
from pyocm.apiserver.admission.webhooks.config import Rule, Webhook
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.store import Store
from pyocm.kube.selectors import LabelSelector

Obj = dict[str, Any]
NAMESPACES = ("", "v1", "namespaces")


@dataclass(frozen=True, slots=True)
class Attributes:
    """What rules match against: the request, with the namespace as kube-apiserver
    records it (a Namespace's own name for requests that name one)."""

    operation: str
    info: ResourceInfo
    subresource: str
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None

    @classmethod
    def of(cls, request: Request) -> Attributes:
        info = request.resource
        namespace = request.namespace if info.namespaced else ""
        if _is_namespace(info):  # create.go too: namespace = name for a Namespace
            namespace = request.name
        return cls(
            operation=request.operation.value,
            info=info,
            subresource=request.subresource,
            namespace=namespace,
            name=request.name,
            obj=request.obj,
            old=request.old,
        )


@dataclass(frozen=True, slots=True)
class Invocation:
    """A webhook to call, and the resource version its request is expressed in."""

    webhook: Webhook
    info: ResourceInfo


def _is_namespace(info: ResourceInfo) -> bool:
    return (info.group, info.version, info.plural) == NAMESPACES


def rule_matches(rule: Rule, attrs: Attributes, info: ResourceInfo) -> bool:
    return (
        _scope(rule.scope, attrs, info)
        and ("*" in rule.operations or attrs.operation in rule.operations)
        and _any(rule.groups, info.group)
        and _any(rule.versions, info.version)
        and any(
            (res == "*" or res == info.plural) and (sub == "*" or sub == attrs.subresource)
            for res, sub in rule.resources
        )
    )


def _any(items: tuple[str, ...], wanted: str) -> bool:
    return "*" in items or wanted in items


def _scope(scope: str, attrs: Attributes, info: ResourceInfo) -> bool:
    if scope == "*":
        return True
    if scope == "Namespaced":
        return not _is_namespace(info) and attrs.namespace != ""
    if scope == "Cluster":
        return _is_namespace(info) or attrs.namespace == ""
    return False


class Matcher:
    def __init__(self, *, catalog: Catalog, store: Store) -> None:
        self._catalog = catalog
        self._store = store
        self._equivalents: dict[tuple[str, str, str, str], tuple[ResourceInfo, ...]] = {}
        self._generation = -1

    async def invocation(self, hook: Webhook, attrs: Attributes) -> Invocation | None:
        """The call ``hook`` gets for ``attrs``, or None; raises kube's error when the
        namespace a namespace selector needs does not exist."""
        info = self._by_rules(hook, attrs)
        if info is None:
            return None
        selector = hook.object_selector
        if not selector.empty and not (
            _selects(selector, attrs.obj) or _selects(selector, attrs.old)
        ):
            return None
        if not await self._namespace_matches(hook, attrs):
            return None
        return Invocation(hook, info)

    def _by_rules(self, hook: Webhook, attrs: Attributes) -> ResourceInfo | None:
        if any(rule_matches(rule, attrs, attrs.info) for rule in hook.rules):
            return attrs.info
        if hook.match_policy != "Equivalent":
            return None
        equivalents = self.equivalents(attrs.info, attrs.subresource)
        for rule in hook.rules:  # earlier rules first, as kube honours them
            for other in equivalents:
                if rule_matches(rule, attrs, other):
                    return other
        return None

    def equivalents(self, info: ResourceInfo, subresource: str) -> tuple[ResourceInfo, ...]:
        """Other served resources stored with ``info`` (other versions of a kind, and
        events.k8s.io Events beside core Events) that serve ``subresource``."""
        if self._generation != self._catalog.generation:
            self._equivalents.clear()
            self._generation = self._catalog.generation
        key = (info.group, info.version, info.plural, subresource)
        found = self._equivalents.get(key)
        if found is None:
            prefix = info.key_prefix()
            found = tuple(
                other
                for other in self._catalog.all()
                if other.key_prefix() == prefix
                and (other.group, other.version) != (info.group, info.version)
                and (not subresource or other.subresource(subresource) is not None)
            )
            self._equivalents[key] = found
        return found

    async def _namespace_matches(self, hook: Webhook, attrs: Attributes) -> bool:
        selector = hook.namespace_selector
        if not attrs.namespace and not _is_namespace(attrs.info):
            return True  # other cluster-scoped objects are never exempted
        if selector.empty:
            return True
        return selector.matches(await self._namespace_labels(attrs))

    async def _namespace_labels(self, attrs: Attributes) -> dict[str, str]:
        if (
            _is_namespace(attrs.info)
            and not attrs.subresource
            and attrs.operation in ("CREATE", "UPDATE")
        ):
            return _labels(attrs.obj)
        info = self._catalog.get(*NAMESPACES)
        assert info is not None
        # A missing namespace is kube's 404 too.
        return _labels(await self._store.get(info, namespace="", name=attrs.namespace))


def _selects(selector: LabelSelector, obj: Obj | None) -> bool:
    """kube's ``matchObject``: a missing object (the new one on DELETE, the old one on
    CREATE) matches nothing, not even ``DoesNotExist``."""
    return obj is not None and selector.matches(_labels(obj))


def _labels(obj: Obj | None) -> dict[str, str]:
    if not obj:
        return {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()}
