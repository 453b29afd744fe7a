"""The registered webhooks, parsed once per configuration change.

kube-apiserver keeps the configurations in an informer-fed cache and sorts them by
name (``configuration/*_webhook_manager.go``); each webhook gets the uid
``<configuration>/<webhook>/<n>`` used to remember which were called, for
reinvocation. Here storage commit hooks feed the cache, so a configuration is in force
for the very next write once its own write is acknowledged, and a write never reads the
configurations from storage.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.registry import codec
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.storage.interface import Event, EventType
from pyocm.kube.selectors import LabelSelector, SelectorError, from_label_selector

Obj = dict[str, Any]
GROUP = "admissionregistration.k8s.io"
MUTATING_PLURAL = "mutatingwebhookconfigurations"
VALIDATING_PLURAL = "validatingwebhookconfigurations"


@dataclass(frozen=True, slots=True)
class Rule:
    operations: frozenset[str]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    #: ``resource/subresource`` entries split once: ("pods", ""), ("*", "status").
    resources: tuple[tuple[str, str], ...]
    scope: str


@dataclass(frozen=True, slots=True)
class Service:
    namespace: str
    name: str
    port: int
    path: str


@dataclass(frozen=True, slots=True)
class Webhook:
    uid: str
    name: str
    mutating: bool
    rules: tuple[Rule, ...]
    match_policy: str
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    failure_policy: str
    side_effects: str
    timeout_seconds: int
    review_versions: tuple[str, ...]
    reinvoke_if_needed: bool
    url: str
    service: Service | None
    ca_bundle: bytes

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"


def parse_configuration(obj: Obj, *, mutating: bool) -> list[Webhook]:
    """The webhooks of one stored configuration (stored objects are defaulted)."""
    config = str((obj.get("metadata") or {}).get("name") or "")
    seen: dict[str, int] = {}
    hooks = []
    for hook in obj.get("webhooks") or []:
        name = str(hook.get("name") or "")
        n = seen.get(name, 0)
        seen[name] = n + 1
        hooks.append(_webhook(hook, uid=f"{config}/{name}/{n}", mutating=mutating))
    return hooks


def _webhook(hook: Obj, *, uid: str, mutating: bool) -> Webhook:
    client = hook.get("clientConfig") or {}
    service = client.get("service")
    return Webhook(
        uid=uid,
        name=str(hook.get("name") or ""),
        mutating=mutating,
        rules=tuple(_rule(r) for r in hook.get("rules") or []),
        match_policy=str(hook.get("matchPolicy") or "Equivalent"),
        namespace_selector=_selector(hook.get("namespaceSelector")),
        object_selector=_selector(hook.get("objectSelector")),
        failure_policy=str(hook.get("failurePolicy") or "Fail"),
        side_effects=str(hook.get("sideEffects") or "Unknown"),
        timeout_seconds=int(hook.get("timeoutSeconds") or 10),
        review_versions=tuple(str(v) for v in hook.get("admissionReviewVersions") or ()),
        reinvoke_if_needed=hook.get("reinvocationPolicy") == "IfNeeded",
        url=str(client.get("url") or ""),
        service=Service(
            namespace=str(service.get("namespace") or ""),
            name=str(service.get("name") or ""),
            port=int(service.get("port") or 443),
            path=str(service.get("path") or ""),
        )
        if isinstance(service, dict)
        else None,
        ca_bundle=ca_bytes(client.get("caBundle")),
    )


def ca_bytes(value: Any) -> bytes:
    """``caBundle`` is a []byte: base64 text in JSON."""
    if not value:
        return b""
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _rule(rule: Obj) -> Rule:
    return Rule(
        operations=frozenset(str(o) for o in rule.get("operations") or ()),
        groups=tuple(str(g) for g in rule.get("apiGroups") or ()),
        versions=tuple(str(v) for v in rule.get("apiVersions") or ()),
        resources=tuple(_split(str(r)) for r in rule.get("resources") or ()),
        scope=str(rule.get("scope") or "*"),
    )


def _split(entry: str) -> tuple[str, str]:
    res, _, sub = entry.partition("/")
    return res, sub


def _selector(value: Any) -> LabelSelector:
    """Validation refused bad selectors; a nil one is defaulted to ``{}`` (everything)."""
    try:
        return from_label_selector(value if isinstance(value, dict) else {})
    except SelectorError:
        return LabelSelector(nothing=True)


class WebhookSource:
    """Both kinds of configuration, followed from storage commits.

    ``mutating`` and ``validating`` are the webhooks of every configuration of the kind,
    configurations sorted by name, each one's webhooks in their listed order; both are
    empty tuples when nothing is registered, which is all a write checks then."""

    def __init__(self) -> None:
        self.mutating: tuple[Webhook, ...] = ()
        self.validating: tuple[Webhook, ...] = ()
        self._configs: dict[bool, dict[str, list[Webhook]]] = {True: {}, False: {}}
        self._prefixes = {
            f"/registry/{GROUP}/{MUTATING_PLURAL}/": True,
            f"/registry/{GROUP}/{VALIDATING_PLURAL}/": False,
        }
        self.on_change: list[Callable[[], None]] = []

    async def start(self, store: Store) -> None:
        for prefix, mutating in self._prefixes.items():
            _, kvs = await store.backend.list(prefix)
            for kv in kvs:
                self._put(mutating, kv.key[len(prefix) :], codec.decode(kv))
        self._rebuild()
        store.backend.add_commit_hook(self._on_commit)

    def _on_commit(self, events: list[Event]) -> None:
        changed = False
        for event in events:
            key = event.kv.key
            if not key.startswith("/registry/admissionregistration.k8s.io/"):
                continue
            for prefix, mutating in self._prefixes.items():
                if key.startswith(prefix):
                    name = key[len(prefix) :]
                    if event.type is EventType.DELETE:
                        self._configs[mutating].pop(name, None)
                    else:
                        self._put(mutating, name, codec.decode(event.kv))
                    changed = True
        if changed:
            self._rebuild()

    def _put(self, mutating: bool, name: str, obj: Obj) -> None:
        self._configs[mutating][name] = parse_configuration(obj, mutating=mutating)

    def _rebuild(self) -> None:
        self.mutating = _flatten(self._configs[True])
        self.validating = _flatten(self._configs[False])
        for callback in self.on_change:
            callback()


def _flatten(configs: dict[str, list[Webhook]]) -> tuple[Webhook, ...]:
    return tuple(hook for name in sorted(configs) for hook in configs[name])
