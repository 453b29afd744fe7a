"""Validation of ``apps/v1`` Deployments, ReplicaSets, StatefulSets and DaemonSets.

``pkg/apis/apps/validation`` (Kubernetes 1.30) with its paths and messages, plus the
``apps/v1`` rule of the registry strategies that a selector never changes after create.
A StatefulSet's pod template is checked for its labels and annotations only, as kube
does (its pod spec is not validated at the API).
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.builtin import podvalidation
from pyocm.apiserver.registry.builtin.fieldrules import (
    immutable,
    int_or_percent_value,
    nonnegative,
    not_over_100_percent,
    positive_int_or_percent,
    selector_errors,
    template_match_errors,
)
from pyocm.kube import objectmeta, selectors
from pyocm.kube.status import FieldError, forbidden, invalid, not_supported, required

Obj = dict[str, Any]


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _template_for_replicas(spec: Obj, kind: str) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` (Deployments and ReplicaSets)."""
    parsed, errs = template_match_errors(spec, "spec")
    if not parsed:
        return errs
    errs += podvalidation.validate_template(spec.get("template"), "spec.template")
    return errs + _always_restart(spec, "spec.template.spec", kind)


def _always_restart(spec: Obj, path: str, kind: str) -> list[FieldError]:
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    errs = []
    restart = pod_spec.get("restartPolicy") or ""
    if restart != "Always":
        errs.append(not_supported(f"{path}.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        message = f"activeDeadlineSeconds in {kind} is not Supported"
        errs.append(forbidden(f"{path}.activeDeadlineSeconds", message))
    return errs


def replica_set(obj: Obj) -> list[FieldError]:
    """``ValidateReplicaSetSpec`` (its empty-selector message says deployment, as kube's)."""
    spec = _spec(obj)
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errs += selector_errors(spec, "spec", "deployment")
    return errs + _template_for_replicas(spec, "ReplicaSet")


def deployment(obj: Obj) -> list[FieldError]:
    """``ValidateDeploymentSpec``."""
    spec = _spec(obj)
    errs = nonnegative("spec.replicas", spec.get("replicas"))
    errs += selector_errors(spec, "spec", "deployment")
    errs += _template_for_replicas(spec, "ReplicaSet")
    errs += _deployment_strategy(spec.get("strategy") or {})
    min_ready = spec.get("minReadySeconds") or 0
    errs += nonnegative("spec.minReadySeconds", min_ready)
    errs += nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errs += nonnegative("spec.progressDeadlineSeconds", deadline)
        if deadline <= min_ready:
            message = "must be greater than minReadySeconds"
            errs.append(invalid("spec.progressDeadlineSeconds", deadline, message))
    return errs


def _deployment_strategy(strategy: Obj) -> list[FieldError]:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    path = "spec.strategy"
    if kind == "Recreate":
        if rolling is not None:
            message = "may not be specified when strategy `type` is 'Recreate'"
            return [forbidden(f"{path}.rollingUpdate", message)]
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, strategy, ["Recreate", "RollingUpdate"])]
    if not isinstance(rolling, dict):
        return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
    at = f"{path}.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = positive_int_or_percent(f"{at}.maxUnavailable", unavailable)
    errs += positive_int_or_percent(f"{at}.maxSurge", surge)
    if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
        message = "may not be 0 when `maxSurge` is 0"
        errs.append(invalid(f"{at}.maxUnavailable", unavailable, message))
    return errs + not_over_100_percent(f"{at}.maxUnavailable", unavailable)


def stateful_set(obj: Obj) -> list[FieldError]:
    """``ValidateStatefulSetSpec``."""
    spec = _spec(obj)
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        message = "must be 'OrderedReady' or 'Parallel'"
        errs.append(invalid("spec.podManagementPolicy", policy, message))
    errs += _stateful_strategy(spec.get("updateStrategy") or {})
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            value = retention.get(key) or ""
            if value not in ("Retain", "Delete"):
                path = f"spec.persistentVolumeClaimRetentionPolicy.{key}"
                errs.append(not_supported(path, value, ["Retain", "Delete"]))
    errs += nonnegative("spec.replicas", spec.get("replicas"))
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs += nonnegative("spec.ordinals.start", ordinals.get("start"))
    errs += selector_errors(spec, "spec", "statefulset")
    parsed, found = template_match_errors(spec, "spec", invalid_message="")
    errs += found
    if parsed:
        errs += _template_metadata(spec.get("template"), "spec.template")
    return errs + _always_restart(spec, "spec.template.spec", "StatefulSet")


def _template_metadata(template: Any, path: str) -> list[FieldError]:
    metadata = (template or {}).get("metadata") if isinstance(template, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    errs = selectors.validate_labels(metadata.get("labels") or {}, f"{path}.labels")
    return errs + objectmeta.validate_annotations(
        metadata.get("annotations") or {}, f"{path}.annotations"
    )


def _stateful_strategy(strategy: Obj) -> list[FieldError]:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    path = "spec.updateStrategy"
    if not kind:
        return [required(path)]
    if kind == "OnDelete":
        if rolling is not None:
            message = "only allowed for updateStrategy 'RollingUpdate'"
            return [invalid(f"{path}.rollingUpdate", rolling, message)]
        return []
    if kind != "RollingUpdate":
        return [invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")]
    if not isinstance(rolling, dict):
        return []
    errs = nonnegative(f"{path}.rollingUpdate.partition", rolling.get("partition"))
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        at = f"{path}.rollingUpdate.maxUnavailable"
        errs += positive_int_or_percent(at, unavailable)
        if int_or_percent_value(unavailable) == 0:
            errs.append(invalid(at, unavailable, "cannot be 0"))
        errs += not_over_100_percent(at, unavailable)
    return errs


def stateful_set_update(obj: Obj, old: Obj) -> list[FieldError]:
    """Only replicas, ordinals, template, update strategy, PVC retention policy and
    minReadySeconds may change."""
    mutable = (
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    )
    new_rest = {k: v for k, v in _spec(obj).items() if k not in mutable}
    old_rest = {k: v for k, v in _spec(old).items() if k not in mutable}
    if new_rest == old_rest:
        return []
    message = (
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
        "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
        "'minReadySeconds' are forbidden"
    )
    return [forbidden("spec", message)]


def daemon_set(obj: Obj) -> list[FieldError]:
    """``ValidateDaemonSetSpec`` (a missing selector shows as a template mismatch only)."""
    spec = _spec(obj)
    selector = spec.get("selector")
    errs = selectors.validate_label_selector(selector, "spec.selector")
    errs += template_match_errors(spec, "spec")[1]
    if isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(invalid("spec.selector", selector, "empty selector is invalid for daemonset"))
    errs += podvalidation.validate_template(spec.get("template"), "spec.template")
    errs += _always_restart(spec, "spec.template.spec", "DaemonSet")
    errs += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errs += nonnegative("spec.templateGeneration", spec.get("templateGeneration"))
    errs += _daemon_strategy(spec.get("updateStrategy") or {})
    return errs + nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))


def _daemon_strategy(strategy: Obj) -> list[FieldError]:
    path = "spec.updateStrategy"
    kind = strategy.get("type") or ""
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, strategy, ["RollingUpdate", "OnDelete"])]
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return [required(f"{path}.rollingUpdate")]
    at = f"{path}.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = positive_int_or_percent(f"{at}.maxUnavailable", unavailable)
    errs += positive_int_or_percent(f"{at}.maxSurge", surge)
    errs += not_over_100_percent(f"{at}.maxUnavailable", unavailable)
    errs += not_over_100_percent(f"{at}.maxSurge", surge)
    has_unavailable = int_or_percent_value(unavailable) != 0
    has_surge = int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        message = "may not be set when maxUnavailable is non-zero"
        errs.append(invalid(f"{at}.maxSurge", surge, message))
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{at}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def selector_unchanged(obj: Obj, old: Obj) -> list[FieldError]:
    """apps/v1 workloads keep the selector they were created with."""
    return immutable("spec.selector", _spec(obj).get("selector"), _spec(old).get("selector"))


def controller_revision(obj: Obj) -> list[FieldError]:
    """``ValidateControllerRevision``: data is mandatory, the revision not negative."""
    errs = [] if obj.get("data") is not None else [required("data", "data is mandatory")]
    return errs + nonnegative("revision", obj.get("revision"))


def controller_revision_update(obj: Obj, old: Obj) -> list[FieldError]:
    return immutable("data", obj.get("data"), old.get("data"))
