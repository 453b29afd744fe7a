"""Validation of ``batch/v1`` Jobs and CronJobs, after ``pkg/apis/batch/validation``
(Kubernetes 1.30): the generated selector, the spec's counts and modes, the pod
template (which must not restart Always), what a Job may not change, and a CronJob's
schedule, time zone and job template."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyocm.apiserver.registry.builtin import cronschedule, podvalidation
from pyocm.apiserver.registry.builtin.fieldrules import (
    immutable,
    nonnegative,
    template_match_errors,
)
from pyocm.apiserver.registry.builtin.poddefaults import mapping
from pyocm.kube import selectors
from pyocm.kube.status import FieldError, invalid, not_supported, required

Obj = dict[str, Any]
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
_COMPLETION_MODES = ["NonIndexed", "Indexed"]
_REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
_CONCURRENCY = ["Allow", "Forbid", "Replace"]
#: The cron job controller appends an 11-character suffix to a job's name.
CRON_JOB_NAME_MAX = 63 - 11


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def generate_selector(job: Obj) -> None:
    """``generateSelector``: label the template with the job's name and uid (the
    ``batch.kubernetes.io/`` labels and the legacy ones) where the user did not, and
    select the uid. Skipped when ``spec.manualSelector`` is true."""
    spec = _spec(job)
    if spec.get("manualSelector") is True:
        return
    template = spec.setdefault("template", {})
    metadata = template.get("metadata")
    if not isinstance(metadata, dict):
        metadata = template["metadata"] = {}
    labels = metadata.get("labels")
    if not isinstance(labels, dict):
        labels = metadata["labels"] = {}
    name, uid = str(_meta(job).get("name") or ""), str(_meta(job).get("uid") or "")
    for key in (LEGACY_JOB_NAME, JOB_NAME):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID, CONTROLLER_UID):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID, uid)


def _generated_selector(job: Obj) -> list[FieldError]:
    """``validateGeneratedSelector``: the generated labels are on the template and the
    selector selects exactly what they say."""
    spec = _spec(job)
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return []
    name, uid = str(_meta(job).get("name") or ""), str(_meta(job).get("uid") or "")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    expected = {LEGACY_CONTROLLER_UID: uid, LEGACY_JOB_NAME: name, CONTROLLER_UID: uid,
                JOB_NAME: name}  # fmt: skip
    errs = []
    for key in (LEGACY_CONTROLLER_UID, LEGACY_JOB_NAME, CONTROLLER_UID, JOB_NAME):
        path = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            errs.append(required(path, f"must be '{expected[key]}'"))
        elif labels[key] != expected[key]:
            errs.append(invalid(path, labels[key], f"must be '{expected[key]}'"))
    try:
        matches = selectors.from_label_selector(spec["selector"]).matches(expected)
    except selectors.SelectorError:
        return errs
    if not matches:
        errs.append(invalid("spec.selector", spec["selector"], "`selector` not auto-generated"))
    return errs


def job_spec(spec: Obj, path: str) -> list[FieldError]:
    """``validateJobSpec``: counts, completion mode, pod template and restart policy."""
    errs: list[FieldError] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                "ttlSecondsAfterFinished", "backoffLimitPerIndex"):  # fmt: skip
        errs += nonnegative(f"{path}.{key}", spec.get(key))
    mode = spec.get("completionMode")
    if mode is not None and mode not in _COMPLETION_MODES:
        errs.append(not_supported(f"{path}.completionMode", mode, _COMPLETION_MODES))
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in _REPLACEMENT_POLICIES:
        path_ = f"{path}.podReplacementPolicy"
        errs.append(not_supported(path_, replacement, _REPLACEMENT_POLICIES))
    errs += podvalidation.validate_template(spec.get("template"), f"{path}.template")
    restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") or ""
    at = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        errs.append(required(at, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(at, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        message = 'only "Never" is supported when podFailurePolicy is specified'
        errs.append(invalid(at, restart, message))
    return errs


def job(obj: Obj) -> list[FieldError]:
    """``ValidateJob``: generated selector, then the spec and its selector."""
    spec = _spec(obj)
    errs = _generated_selector(obj) + job_spec(spec, "spec")
    if spec.get("selector") is None:
        errs.append(required("spec.selector"))
    else:
        errs += selectors.validate_label_selector(spec["selector"], "spec.selector")
    parsed, mismatch = template_match_errors(spec, "spec")
    return errs + (mismatch if parsed else [])


def job_update(obj: Obj, old: Obj) -> list[FieldError]:
    """What a Job may not change: completions, selector, pod template, completion mode,
    pod failure policy, per-index backoff limit, managedBy and success policy."""
    new, previous = _spec(obj), _spec(old)
    errs: list[FieldError] = []
    for key in ("completions", "selector", "template", "completionMode", "podFailurePolicy",
                "backoffLimitPerIndex", "managedBy", "successPolicy"):  # fmt: skip
        errs += immutable(f"spec.{key}", new.get(key), previous.get(key))
    return errs


def cron_job_name(obj: Obj) -> list[FieldError]:
    """On create only: room in the name for the suffix of the jobs it will create."""
    name = str(_meta(obj).get("name") or "")
    if len(name) <= CRON_JOB_NAME_MAX:
        return []
    return [invalid("metadata.name", name, f"must be no more than {CRON_JOB_NAME_MAX} characters")]


def cron_job(obj: Obj) -> list[FieldError]:
    """``validateCronJobSpec``."""
    spec = _spec(obj)
    errs = _schedule(spec)
    errs += nonnegative("spec.startingDeadlineSeconds", spec.get("startingDeadlineSeconds"))
    errs += _time_zone(spec.get("timeZone"))
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(required("spec.concurrencyPolicy"))
    elif policy not in _CONCURRENCY:
        errs.append(not_supported("spec.concurrencyPolicy", policy, _CONCURRENCY))
    errs += _job_template(spec.get("jobTemplate") or {})
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs += nonnegative(f"spec.{key}", spec.get(key))
    return errs


def _schedule(spec: Obj) -> list[FieldError]:
    schedule = str(spec.get("schedule") or "")
    if not schedule:
        return [required("spec.schedule")]
    errs = []
    try:
        cronschedule.check(schedule)
    except cronschedule.ScheduleError as err:
        errs.append(invalid("spec.schedule", schedule, str(err)))
    if "TZ" in schedule:
        message = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        errs.append(invalid("spec.schedule", schedule, message))
    return errs


def _time_zone(zone: Any) -> list[FieldError]:
    if zone is None:
        return []
    path = "spec.timeZone"
    if zone == "":
        return [invalid(path, zone, "timeZone must be nil or non-empty string")]
    if str(zone).lower() == "local":
        message = (
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        )
        return [invalid(path, zone, message)]
    try:
        ZoneInfo(str(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return [invalid(path, zone, f"unknown time zone {zone}")]
    return []


def _job_template(template: Obj) -> list[FieldError]:
    """``ValidateJobTemplateSpec``: the job spec, whose selector is generated later."""
    spec = mapping(template, "spec")
    path = "spec.jobTemplate.spec"
    errs = job_spec(spec, path)
    if spec.get("selector") is not None:
        message = "`selector` will be auto-generated"
        errs.append(invalid(f"{path}.selector", spec["selector"], message))
    if spec.get("manualSelector") is True:
        errs.append(not_supported(f"{path}.manualSelector", True, ["nil", "false"]))
    return errs
