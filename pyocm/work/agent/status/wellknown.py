"""What upstream's work agent knows about common kinds, without being told.

``WellKnownStatus`` feedback rules read these status fields
(``pkg/work/spoke/statusfeedback/rules/rule.go``); ``WellKnownConditions`` condition
rules evaluate these CEL rules (``pkg/work/spoke/conditions/rules/rule.go``). Kinds are
matched by exact group, version and kind: ``extensions/v1`` Deployments get nothing.
"""

from __future__ import annotations

from typing import NamedTuple


class GVK(NamedTuple):
    group: str
    version: str
    kind: str

    def __str__(self) -> str:
        # schema.GroupVersionKind.String(), as upstream puts it in its messages
        return f"{self.group}/{self.version}, Kind={self.kind}"


class StatusPath(NamedTuple):
    name: str
    path: str


class WellKnownRule(NamedTuple):
    """A CEL condition rule upstream ships for a kind."""

    condition: str
    cel_expressions: tuple[str, ...]
    message_expression: str


DEPLOYMENT = GVK("apps", "v1", "Deployment")
DAEMONSET = GVK("apps", "v1", "DaemonSet")
JOB = GVK("batch", "v1", "Job")
POD = GVK("", "v1", "Pod")

STATUS_PATHS: dict[GVK, tuple[StatusPath, ...]] = {
    DEPLOYMENT: (
        StatusPath("ReadyReplicas", ".status.readyReplicas"),
        StatusPath("Replicas", ".status.replicas"),
        StatusPath("AvailableReplicas", ".status.availableReplicas"),
    ),
    JOB: (
        StatusPath("JobComplete", '.status.conditions[?(@.type=="Complete")].status'),
        StatusPath("JobSucceeded", ".status.succeeded"),
    ),
    POD: (
        StatusPath("PodReady", '.status.conditions[?(@.type=="Ready")].status'),
        StatusPath("PodPhase", ".status.phase"),
    ),
    DAEMONSET: (
        StatusPath("NumberReady", ".status.numberReady"),
        StatusPath("DesiredNumberScheduled", ".status.desiredNumberScheduled"),
        StatusPath("NumberAvailable", ".status.numberAvailable"),
    ),
}

_JOB_COMPLETE = WellKnownRule(
    condition="Complete",
    cel_expressions=(
        """hasConditions(object.status)
			? object.status.conditions.filter(c, c.type == 'Complete' || c.type == 'Failed').exists(c, c.status == 'True')
			: false""",
    ),
    message_expression='result ? "Job is finished" : "Job is not finished"',
)
_POD_COMPLETE = WellKnownRule(
    condition="Complete",
    cel_expressions=("object.status.phase in ['Succeeded', 'Failed']",),
    message_expression='"Pod is in phase " + object.status.phase',
)

CONDITION_RULES: dict[GVK, dict[str, WellKnownRule]] = {
    JOB: {"Complete": _JOB_COMPLETE},
    POD: {"Complete": _POD_COMPLETE},
}


def gvk_of(obj: dict[str, object]) -> GVK:
    """The object's group, version and kind as ``unstructured.GroupVersionKind()`` reads
    them: an ``apiVersion`` with more than one slash reads as an empty GVK."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    text = api_version if isinstance(api_version, str) else ""
    kind_text = kind if isinstance(kind, str) else ""
    if text.count("/") > 1:
        return GVK("", "", "")
    group, _, version = text.rpartition("/")
    return GVK(group, version, kind_text)
