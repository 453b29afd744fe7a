"""``admissionregistration.k8s.io/v1`` ValidatingWebhookConfiguration and
MutatingWebhookConfiguration: the webhooks the API server calls on writes
(:mod:`pyocm.apiserver.admission.webhooks` calls them).

Defaults are kube's ``SetDefaults_*`` for v1 (failurePolicy Fail, matchPolicy
Equivalent, empty namespace and object selectors, timeoutSeconds 10, reinvocationPolicy
Never, rule scope ``*``, service port 443), applied on every write as decoding does;
``metadata.generation`` moves when the webhooks change. Validation is in
:mod:`webhookvalidation`.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.builtin import webhookvalidation
from pyocm.apiserver.registry.printing import AGE, NAME, Column
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context, Obj, Strategy
from pyocm.kube.status import FieldError

GROUP = "admissionregistration.k8s.io"
VALIDATING = "ValidatingWebhookConfiguration"
MUTATING = "MutatingWebhookConfiguration"

COLUMNS = (
    NAME,
    Column(
        "Webhooks",
        "integer",
        lambda o, _: len(o.get("webhooks") or []),
        description="Webhooks indicates the number of webhooks in the configuration",
    ),
    AGE,
)


def default_webhook(hook: dict[str, Any], *, mutating: bool) -> None:
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    for selector in ("namespaceSelector", "objectSelector"):
        if hook.get(selector) is None:
            hook[selector] = {}
    if hook.get("timeoutSeconds") is None:
        hook["timeoutSeconds"] = 10
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in hook.get("rules") or []:
        if isinstance(rule, dict) and rule.get("scope") is None:
            rule["scope"] = "*"
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


class WebhookConfigurationStrategy(Strategy):
    def __init__(self, *, mutating: bool) -> None:
        self.mutating = mutating
        super().__init__()

    def _default(self, obj: Obj) -> None:
        for hook in obj.get("webhooks") or []:
            if isinstance(hook, dict):
                default_webhook(hook, mutating=self.mutating)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        self._default(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        self._default(obj)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return webhookvalidation.validate_configuration(
            obj, mutating=self.mutating, relaxed=webhookvalidation.Relaxed()
        )

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return webhookvalidation.validate_configuration(
            obj, mutating=self.mutating, relaxed=webhookvalidation.relaxed_by(old)
        )


def admission_registration_resources() -> list[ResourceInfo]:
    return [
        ResourceInfo(
            group=GROUP,
            version="v1",
            kind=kind,
            plural=f"{kind.lower()}s",
            singular=kind.lower(),
            namespaced=False,
            strategy=WebhookConfigurationStrategy(mutating=kind == MUTATING),
            columns=COLUMNS,
            categories=("api-extensions",),
        )
        for kind in (MUTATING, VALIDATING)
    ]
