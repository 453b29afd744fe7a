"""Validation of ``policy/v1`` PodDisruptionBudgets and ``networking.k8s.io/v1``
NetworkPolicies and Ingresses: the first checks of ``pkg/apis/policy/validation`` and
``pkg/apis/networking/validation`` (Kubernetes 1.30), with their paths and messages."""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.builtin.fieldrules import (
    not_over_100_percent,
    positive_int_or_percent,
)
from pyocm.apiserver.registry.builtin.poddefaults import items, mapping
from pyocm.kube import selectors
from pyocm.kube.status import FieldError, invalid, not_supported, required

Obj = dict[str, Any]
_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
_POLICY_TYPES = ["Ingress", "Egress"]
_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def pod_disruption_budget(obj: Obj) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``."""
    spec = _spec(obj)
    errs: list[FieldError] = []
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        message = "minAvailable and maxUnavailable cannot be both set"
        errs.append(invalid("spec", spec, message))
    for key, value in (("minAvailable", low), ("maxUnavailable", high)):
        if value is not None:
            errs += positive_int_or_percent(f"spec.{key}", value)
            errs += not_over_100_percent(f"spec.{key}", value)
    errs += selectors.validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        path = "spec.unhealthyPodEvictionPolicy"
        errs.append(not_supported(path, policy, _EVICTION_POLICIES))
    return errs


def network_policy(obj: Obj) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``: the pod selector and the policy types."""
    spec = _spec(obj)
    errs = selectors.validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector")
    kinds = spec.get("policyTypes") or []
    for i, kind in enumerate(kinds):
        if kind not in _POLICY_TYPES:
            errs.append(not_supported(f"spec.policyTypes[{i}]", kind, _POLICY_TYPES))
    if len(kinds) > 2:
        errs.append(invalid("spec.policyTypes", kinds, "may not specify more than two policyTypes"))
    return errs


def ingress(obj: Obj) -> list[FieldError]:
    """``ValidateIngressSpec``: a default backend or rules, and each path's type."""
    spec = _spec(obj)
    rules = items(spec, "rules")
    errs: list[FieldError] = []
    if not rules and spec.get("defaultBackend") is None:
        message = "either `defaultBackend` or `rules` must be specified"
        errs.append(invalid("spec", spec, message))
    for i, rule in enumerate(rules):
        http = mapping(rule, "http")
        for j, path in enumerate(items(http, "paths")):
            at = f"spec.rules[{i}].http.paths[{j}].pathType"
            kind = path.get("pathType")
            if kind is None:
                errs.append(required(at, "pathType must be specified"))
            elif kind not in _PATH_TYPES:
                errs.append(not_supported(at, kind, _PATH_TYPES))
    return errs
