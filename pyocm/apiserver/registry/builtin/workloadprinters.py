"""``kubectl get`` columns of the workload and service kinds, as kube-apiserver 1.30's
printers (``pkg/printers/internalversion``) fill them. The server always sends the wide
columns too (priority 1); kubectl shows them with ``-o wide``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyocm.apiserver.registry.builtin.printcells import (
    Obj,
    column,
    dicts,
    format_labels,
    format_selector,
    get,
    int_at,
)
from pyocm.apiserver.registry.printing import AGE, NAME, Column, age, human_duration
from pyocm.kube import selectors, timefmt

_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."


def _containers(spec_path: tuple[str, ...]) -> tuple[Column, Column]:
    def names(obj: Obj, _: datetime) -> str:
        return ",".join(str(c.get("name", "")) for c in dicts(obj, *spec_path, "containers"))

    def images(obj: Obj, _: datetime) -> str:
        return ",".join(str(c.get("image", "")) for c in dicts(obj, *spec_path, "containers"))

    return (
        column("Containers", "string", names, priority=1, description=_CONTAINERS),
        column("Images", "string", images, priority=1, description=_IMAGES),
    )


def _selector_column(*path: str) -> Column:
    return column("Selector", "string", lambda o, _: format_selector(get(o, *path)), priority=1)


def _selector_text(obj: Obj) -> str:
    """A Deployment's wide column: the selector as text, empty when there is none."""
    selector = get(obj, "spec", "selector")
    try:
        return str(selectors.from_label_selector(selector)) if isinstance(selector, dict) else ""
    except selectors.SelectorError:
        return "<invalid>"


_TEMPLATE = ("spec", "template", "spec")

DEPLOYMENT = (
    NAME,
    column(
        "Ready",
        "string",
        lambda o, _: f"{int_at(o, 'status', 'readyReplicas')}/{int_at(o, 'spec', 'replicas')}",
        description="Number of the pod with ready state",
    ),
    column("Up-to-date", "string", lambda o, _: int_at(o, "status", "updatedReplicas")),
    column("Available", "string", lambda o, _: int_at(o, "status", "availableReplicas")),
    AGE,
    *_containers(_TEMPLATE),
    column("Selector", "string", lambda o, _: _selector_text(o), priority=1),
)
REPLICA_SET = (
    NAME,
    column("Desired", "integer", lambda o, _: int_at(o, "spec", "replicas")),
    column("Current", "integer", lambda o, _: int_at(o, "status", "replicas")),
    column("Ready", "integer", lambda o, _: int_at(o, "status", "readyReplicas")),
    AGE,
    *_containers(_TEMPLATE),
    _selector_column("spec", "selector"),
)
STATEFUL_SET = (
    NAME,
    column(
        "Ready",
        "string",
        lambda o, _: f"{int_at(o, 'status', 'readyReplicas')}/{int_at(o, 'spec', 'replicas')}",
        description="Number of the pod with ready state",
    ),
    AGE,
    *_containers(_TEMPLATE),
)
DAEMON_SET = (
    NAME,
    column("Desired", "integer", lambda o, _: int_at(o, "status", "desiredNumberScheduled")),
    column("Current", "integer", lambda o, _: int_at(o, "status", "currentNumberScheduled")),
    column("Ready", "integer", lambda o, _: int_at(o, "status", "numberReady")),
    column("Up-to-date", "integer", lambda o, _: int_at(o, "status", "updatedNumberScheduled")),
    column("Available", "integer", lambda o, _: int_at(o, "status", "numberAvailable")),
    column(
        "Node Selector",
        "string",
        lambda o, _: format_labels(get(o, *_TEMPLATE, "nodeSelector")),
    ),
    AGE,
    *_containers(_TEMPLATE),
    _selector_column("spec", "selector"),
)


def _condition_true(obj: Obj, kind: str) -> bool:
    for condition in dicts(obj, "status", "conditions"):
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def _job_status(obj: Obj, _: datetime) -> str:
    if _condition_true(obj, "Complete"):
        return "Complete"
    if _condition_true(obj, "Failed"):
        return "Failed"
    if get(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    if _condition_true(obj, "Suspended"):
        return "Suspended"
    if _condition_true(obj, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _completions(obj: Obj, _: datetime) -> str:
    succeeded = int_at(obj, "status", "succeeded")
    completions = get(obj, "spec", "completions")
    if isinstance(completions, int):
        return f"{succeeded}/{completions}"
    parallelism = int_at(obj, "spec", "parallelism")
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _seconds(value: Any) -> float | None:
    try:
        return timefmt.parse_time(value).timestamp() if isinstance(value, str) else None
    except ValueError:
        return None


def _duration(obj: Obj, now: datetime) -> str:
    start = _seconds(get(obj, "status", "startTime"))
    if start is None:
        return ""
    end = _seconds(get(obj, "status", "completionTime"))
    return human_duration((end if end is not None else now.timestamp()) - start)


JOB = (
    NAME,
    column("Status", "string", _job_status, description="Status of the job."),
    column("Completions", "string", _completions),
    column("Duration", "string", _duration, description="Time required to complete the job."),
    AGE,
    *_containers(_TEMPLATE),
    _selector_column("spec", "selector"),
)


def _last_schedule(obj: Obj, now: datetime) -> str:
    when = get(obj, "status", "lastScheduleTime")
    return age(when, now) or "<none>" if when else "<none>"


CRON_JOB = (
    NAME,
    column("Schedule", "string", lambda o, _: str(get(o, "spec", "schedule") or "")),
    column("Timezone", "string", lambda o, _: str(get(o, "spec", "timeZone") or "<none>")),
    column("Suspend", "boolean", lambda o, _: bool(get(o, "spec", "suspend"))),
    column("Active", "integer", lambda o, _: len(dicts(o, "status", "active"))),
    column("Last Schedule", "string", _last_schedule),
    AGE,
    *_containers(("spec", "jobTemplate", "spec", "template", "spec")),
    _selector_column("spec", "jobTemplate", "spec", "selector"),
)
