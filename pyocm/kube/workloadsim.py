"""The status a healthy cluster would give workload objects: a simulation, in the spirit
of kwok.

An embedded managed cluster (:mod:`pyocm.local.embedded`) is pyocm's API server alone:
no kubelet runs containers and no kube-controller-manager rolls anything out, so nothing
would ever make a Deployment ready. :func:`simulated_status` answers, for one object's
current spec, the status kube's controllers and kubelet write once all went well: every
replica ready and available, Jobs complete, Pods Running and Ready, claims Bound.
:class:`pyocm.local.workloads.SimulatedWorkloads` writes it; this module is pure.

It is a simulation and says so. Field names, condition types and reasons are exactly
kube's, so tools keep working (``kubectl rollout status``, ``kubectl wait``, the work
agent's status feedback); every condition's message ends with :data:`MARK`, so nobody
takes it for a real rollout. Nothing runs: no container starts, no image is pulled (a
container's ``imageID`` is empty), no Pod is created for a Deployment, StatefulSet,
DaemonSet or Job, no volume is provisioned (a Bound claim names no volume), no Pod is
bound to a node.

Simplified on purpose: a rollout is instant (no surge, no partition, no ``OnDelete``
wait: every replica counts as updated), a DaemonSet runs on every node (node selectors,
affinity and taints are not read), a Job's Pods all succeed at once.

Not simulated at all (None): Services (a LoadBalancer gets no address: none exists),
Endpoints, CronJobs (no Job is ever created, so no schedule time would be true),
PodDisruptionBudgets (their figures count the Pods they select, and the Pods a
Deployment would own do not exist), NetworkPolicies, Ingresses.

Recomputing is stable: a condition whose status, reason and message are unchanged keeps
its times, one whose status alone is unchanged keeps ``lastTransitionTime`` (as kube's
controllers set conditions), and a Job's start and completion times, a Pod's start time
and a container's ``startedAt`` are kept from the status given; so a controller writing
the answer only when it differs from the stored status writes once per change.

A ReplicaSet's or revision's name is ``<name>-<hash>`` of the Pod template in kube's
form (an FNV-1a 32-bit hash, printed in decimal and encoded in kube's safe alphabet);
kube hashes Go's printed struct, so the letters differ from a real cluster's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

import orjson

from pyocm.kube import kinds, quantity, timefmt
from pyocm.kube.kinds import Kind

Obj = dict[str, Any]

#: What every simulated condition's message says, after kube's own words.
NOTE = "simulated by pyocm: this cluster has no kubelet"
MARK = f" ({NOTE})"
#: The address every simulated Pod and its node report: loopback, where nothing listens
#: for it.
HOST_IP = "127.0.0.1"
#: apimachinery's ``rand.SafeEncodeString`` alphabet (no vowels, no confusable digits).
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: The compute resources a Pod's QoS class looks at.
QOS_RESOURCES = ("cpu", "memory")


class SimulationError(ValueError):
    """The object does not read as its kind (the API server should have refused it)."""


def simulated_status(
    kind: Kind, obj: Mapping[str, Any], *, nodes: int, now: datetime
) -> Obj | None:
    """The status a healthy cluster would report for ``obj``'s spec and generation, or
    None when ``kind`` gets no simulated status.

    ``obj`` is the object as stored: its ``status`` is the previous answer, whose times
    are carried over (see the module's docstring). ``nodes`` is how many nodes the
    cluster has (a DaemonSet's Pod count); ``now`` stamps whatever changes. Raises
    :class:`SimulationError` naming the field when ``obj`` does not read as ``kind``.
    """
    if nodes < 0:
        raise ValueError(f"a cluster has no negative node count ({nodes})")
    compute = _SIMULATIONS.get(kind)
    if compute is None:
        return None
    return compute(_Object.read(kind, obj), nodes, now)


def simulates(kind: Kind) -> bool:
    """Whether :func:`simulated_status` gives ``kind`` a status."""
    return kind in _SIMULATIONS


@dataclass(frozen=True)
class _Object:
    """The parts of an object a simulation reads, checked once."""

    kind: str
    name: str
    generation: int | None
    spec: Mapping[str, Any]
    previous: Mapping[str, Any]

    @classmethod
    def read(cls, kind: Kind, obj: Mapping[str, Any]) -> _Object:
        if not isinstance(obj, Mapping):
            raise SimulationError(f"a {kind.kind} must be an object, not {type(obj).__name__}")
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(name, str) or not name:
            raise SimulationError(f"a {kind.kind} needs metadata.name")
        generation = meta.get("generation") if isinstance(meta, Mapping) else None
        if generation is not None and not _is_int(generation):
            raise SimulationError(f"{kind.kind} {name}: metadata.generation must be an integer")
        spec = obj.get("spec", {})
        if not isinstance(spec, Mapping):
            raise SimulationError(f"{kind.kind} {name}: spec must be an object")
        # The previous status only lends its times: anything unreadable counts as none.
        previous = obj.get("status")
        return cls(
            kind.kind, name, generation, spec, previous if isinstance(previous, Mapping) else {}
        )

    def count(self, field: str, default: int) -> int:
        """``spec.<field>``, a non-negative integer (``default`` when absent or null)."""
        value = self.spec.get(field)
        if value is None:
            return default
        if not _is_int(value) or value < 0:
            raise SimulationError(
                f"{self.kind} {self.name}: spec.{field} must be a non-negative integer"
            )
        return int(value)

    def field(self, field: str) -> Mapping[str, Any]:
        """``spec.<field>``, an object (empty when absent)."""
        value = self.spec.get(field, {})
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise SimulationError(f"{self.kind} {self.name}: spec.{field} must be an object")
        return value

    def observed(self) -> Obj:
        return {} if self.generation is None else {"observedGeneration": self.generation}

    def kept_time(self, field: str) -> str | None:
        """The previous status's ``field`` when it is a time (a string)."""
        value = self.previous.get(field)
        return value if isinstance(value, str) and value else None


class _Conditions:
    """Conditions as kube's controllers set them, carrying times over from ``previous``."""

    def __init__(self, previous: Mapping[str, Any], now: datetime, *, times: tuple[str, ...]):
        found = previous.get("conditions")
        self._before = {
            c["type"]: c
            for c in (found if isinstance(found, list) else [])
            if isinstance(c, Mapping) and isinstance(c.get("type"), str)
        }
        self._stamp = timefmt.format_time(now)
        self._times = times
        self.items: list[Obj] = []

    def set(self, type: str, status: str, reason: str | None, message: str) -> None:
        new: Obj = {"type": type, "status": status}
        if reason is not None:
            new["reason"] = reason
        new["message"] = f"{message}{MARK}" if message else NOTE
        old = self._before.get(type)
        same = old is not None and all(
            old.get(key) == new.get(key) for key in ("status", "reason", "message")
        )
        for field in self._times:
            kept = old.get(field) if old is not None else None
            keep = same or (
                field == "lastTransitionTime" and old is not None and old.get("status") == status
            )
            new[field] = kept if keep and isinstance(kept, str) and kept else self._stamp
        self.items.append(new)

    def carried(self, type: str) -> Mapping[str, Any] | None:
        return self._before.get(type)


# Deployments, ReplicaSets, StatefulSets, DaemonSets.


def _deployment(o: _Object, nodes: int, now: datetime) -> Obj:
    replicas = o.count("replicas", 1)
    replica_set = f"{o.name}-{template_hash(o.field('template'))}"
    conditions = _Conditions(o.previous, now, times=("lastUpdateTime", "lastTransitionTime"))
    conditions.set(
        "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."
    )
    if o.spec.get("paused") is True:
        conditions.set("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
    else:
        conditions.set(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{replica_set}" has successfully progressed.',
        )
    counts = dict.fromkeys(
        ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), replicas
    )
    return {**o.observed(), **_nonzero(counts), "conditions": conditions.items}


def _replica_set(o: _Object, nodes: int, now: datetime) -> Obj:
    replicas = o.count("replicas", 1)
    counts = dict.fromkeys(("fullyLabeledReplicas", "readyReplicas", "availableReplicas"), replicas)
    return {**o.observed(), "replicas": replicas, **_nonzero(counts)}


def _stateful_set(o: _Object, nodes: int, now: datetime) -> Obj:
    replicas = o.count("replicas", 1)
    revision = f"{o.name}-{template_hash(o.field('template'))}"
    counts = dict.fromkeys(("readyReplicas", "currentReplicas", "updatedReplicas"), replicas)
    return {
        **o.observed(),
        "replicas": replicas,
        **_nonzero(counts),
        "availableReplicas": replicas,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
    }


def _daemon_set(o: _Object, nodes: int, now: datetime) -> Obj:
    o.field("template")
    return {
        **o.observed(),
        "currentNumberScheduled": nodes,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": nodes,
        "numberReady": nodes,
        **_nonzero({"updatedNumberScheduled": nodes, "numberAvailable": nodes}),
    }


# Jobs.


def _job(o: _Object, nodes: int, now: datetime) -> Obj:
    conditions = _Conditions(o.previous, now, times=("lastProbeTime", "lastTransitionTime"))
    pods: Obj = {"ready": 0, "terminating": 0, "uncountedTerminatedPods": {}}
    complete = _is_true(conditions.carried("Complete"))
    if o.spec.get("suspend") is True and not complete:
        # An unfinished Job stops and waits (a finished one ignores suspend).
        conditions.set("Suspended", "True", "JobSuspended", "Job suspended")
        return {"conditions": conditions.items, **pods}
    if conditions.carried("Suspended") is not None:
        # A resumed Job keeps the condition, False.
        conditions.set("Suspended", "False", "JobResumed", "Job resumed")
    started = o.kept_time("startTime") or timefmt.format_time(now)
    parallelism = o.count("parallelism", 1)
    explicit = o.spec.get("completions") is not None
    # Without completions (a work queue) every one of the parallel Pods succeeds.
    succeeded = o.count("completions", parallelism)
    if parallelism == 0 and not (explicit and succeeded == 0) and not complete:
        # No Pod may run: the Job has started and waits, as kube leaves it.
        return _without_empty({"conditions": conditions.items, "startTime": started, **pods})
    message = "Reached expected number of succeeded pods"
    # kube 1.31+ writes SuccessCriteriaMet first, then Complete with its reason and message.
    conditions.set("SuccessCriteriaMet", "True", "CompletionsReached", message)
    conditions.set("Complete", "True", "CompletionsReached", message)
    finished = (o.kept_time("completionTime") if complete else None) or timefmt.format_time(now)
    status: Obj = {
        "conditions": conditions.items,
        "startTime": started,
        "completionTime": finished,
        **_nonzero({"succeeded": succeeded}),
        **pods,
    }
    if o.spec.get("completionMode") == "Indexed" and succeeded:
        status["completedIndexes"] = _index_ranges(succeeded)
    return status


def _index_ranges(count: int) -> str:
    """Indexes ``0`` to ``count - 1`` as kube writes ``completedIndexes``: ``0``,
    ``0,1``, ``0-4``."""
    if count == 1:
        return "0"
    return "0,1" if count == 2 else f"0-{count - 1}"


# Pods.


def _pod(o: _Object, nodes: int, now: datetime) -> Obj:
    stamp = timefmt.format_time(now)
    started = o.kept_time("startTime") or stamp
    containers = _containers(o, "containers")
    if not containers:
        raise SimulationError(f"Pod {o.name}: spec.containers must list at least one container")
    init = _containers(o, "initContainers")
    conditions = _Conditions(o.previous, now, times=("lastTransitionTime",))
    for type in (
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ):
        conditions.set(type, "True", None, "")
    before = _previous_containers(o.previous, "containerStatuses")
    before_init = _previous_containers(o.previous, "initContainerStatuses")
    status: Obj = {
        "phase": "Running",
        "conditions": conditions.items,
        "hostIP": HOST_IP,
        "hostIPs": [{"ip": HOST_IP}],
        "podIP": HOST_IP,
        "podIPs": [{"ip": HOST_IP}],
        "startTime": started,
        "qosClass": qos_class(o.spec),
    }
    if init:
        status["initContainerStatuses"] = [
            _init_status(c, before_init.get(c["name"]), started, stamp) for c in init
        ]
    status["containerStatuses"] = [
        _running(c, before.get(c["name"]), stamp)
        for c in sorted(containers, key=lambda c: str(c["name"]))  # the kubelet sorts by name
    ]
    return status


def _containers(o: _Object, field: str) -> list[Mapping[str, Any]]:
    found = o.spec.get(field) or []
    if not isinstance(found, list):
        raise SimulationError(f"Pod {o.name}: spec.{field} must be a list")
    for index, container in enumerate(found):
        if not isinstance(container, Mapping) or not isinstance(container.get("name"), str):
            raise SimulationError(f"Pod {o.name}: spec.{field}[{index}] needs a name")
        if not isinstance(container.get("image", ""), str):
            raise SimulationError(f"Pod {o.name}: spec.{field}[{index}].image must be a string")
    return found


def _previous_containers(previous: Mapping[str, Any], field: str) -> dict[str, Mapping[str, Any]]:
    found = previous.get(field)
    return {
        s["name"]: s
        for s in (found if isinstance(found, list) else [])
        if isinstance(s, Mapping) and isinstance(s.get("name"), str)
    }


def _running(container: Mapping[str, Any], before: Mapping[str, Any] | None, stamp: str) -> Obj:
    """A running, ready container; an image changed since ``before`` restarted it."""
    image = str(container.get("image", ""))
    restarts = _int_or(before.get("restartCount") if before else None, 0)
    started = _running_since(before)
    if before is not None and before.get("image") != image:
        restarts, started = restarts + 1, None
    return {
        "name": container["name"],
        "image": image,
        "imageID": "",  # nothing was pulled: no digest would be true
        "ready": True,
        "started": True,
        "restartCount": restarts,
        "lastState": {},
        "state": {"running": {"startedAt": started or stamp}},
    }


def _init_status(
    container: Mapping[str, Any], before: Mapping[str, Any] | None, started: str, stamp: str
) -> Obj:
    """A sidecar (``restartPolicy: Always``) runs; any other init container has completed."""
    if container.get("restartPolicy") == "Always":
        return _running(container, before, stamp)
    state = before.get("state") if before is not None else None
    done = state.get("terminated") if isinstance(state, Mapping) else None
    same_image = before is not None and before.get("image") == container.get("image", "")
    if not (same_image and isinstance(done, Mapping) and done.get("reason") == "Completed"):
        done = {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": started}
    return {
        "name": container["name"],
        "image": str(container.get("image", "")),
        "imageID": "",
        "ready": True,
        "started": False,
        "restartCount": 0,
        "lastState": {},
        "state": {"terminated": dict(done)},
    }


def _running_since(before: Mapping[str, Any] | None) -> str | None:
    state = before.get("state") if before is not None else None
    running = state.get("running") if isinstance(state, Mapping) else None
    since = running.get("startedAt") if isinstance(running, Mapping) else None
    return since if isinstance(since, str) and since else None


def qos_class(spec: Mapping[str, Any]) -> str:
    """The Pod's QoS class as kube computes it (``GetPodQOS``): BestEffort without cpu or
    memory requests and limits, Guaranteed when every container limits both and every
    request equals its limit, Burstable otherwise. Requests default to limits, as the API
    server's defaulting fills them."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = container.get("resources") if isinstance(container, Mapping) else None
        resources = resources if isinstance(resources, Mapping) else {}
        limited = _amounts(resources.get("limits"))
        requested = {**limited, **_amounts(resources.get("requests"))}
        for name, amount in requested.items():
            requests[name] = requests.get(name, Fraction(0)) + amount
        for name, amount in limited.items():
            limits[name] = limits.get(name, Fraction(0)) + amount
        if not all(name in limited for name in QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if (
        guaranteed
        and requests.keys() == limits.keys()
        and all(limits[name] == amount for name, amount in requests.items())
    ):
        return "Guaranteed"
    return "Burstable"


def _amounts(found: Any) -> dict[str, Fraction]:
    """The positive cpu and memory amounts of a requests or limits map."""
    if not isinstance(found, Mapping):
        return {}
    amounts: dict[str, Fraction] = {}
    for name in QOS_RESOURCES:
        value = found.get(name)
        if value is None:
            continue
        amount = _quantity(value, name).value
        if amount > 0:
            amounts[name] = amount
    return amounts


def _quantity(value: Any, what: str) -> quantity.Quantity:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SimulationError(f"{what}: a quantity must be a string or a number")
    try:
        return quantity.parse_quantity(str(value))
    except ValueError as err:
        raise SimulationError(f"{what}: {err}") from None


# PersistentVolumeClaims.


def _claim(o: _Object, nodes: int, now: datetime) -> Obj:
    status: Obj = {"phase": "Bound"}
    modes = o.spec.get("accessModes")
    if modes is not None:
        if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
            raise SimulationError(
                f"PersistentVolumeClaim {o.name}: spec.accessModes must list strings"
            )
        status["accessModes"] = list(modes)
    requests = o.field("resources").get("requests")
    storage = requests.get("storage") if isinstance(requests, Mapping) else None
    if storage is not None:
        amount = _quantity(
            storage, f"PersistentVolumeClaim {o.name}: spec.resources.requests.storage"
        )
        status["capacity"] = {"storage": str(amount)}
    return status


# Shared helpers.


def template_hash(template: Mapping[str, Any]) -> str:
    """A Pod template's hash in kube's form: FNV-1a 32-bit, in decimal, safe-encoded."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in str(value))


def _nonzero(counts: Mapping[str, int]) -> Obj:
    """Only the non-zero counts: kube leaves ``omitempty`` zeros out of the wire."""
    return {key: value for key, value in counts.items() if value}


def _without_empty(status: Obj) -> Obj:
    return {key: value for key, value in status.items() if value != []}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_or(value: Any, default: int) -> int:
    return int(value) if _is_int(value) and value >= 0 else default


def _is_true(condition: Mapping[str, Any] | None) -> bool:
    return condition is not None and condition.get("status") == "True"


_SIMULATIONS: dict[Kind, Callable[[_Object, int, datetime], Obj]] = {
    kinds.DEPLOYMENT: _deployment,
    kinds.REPLICA_SET: _replica_set,
    kinds.STATEFUL_SET: _stateful_set,
    kinds.DAEMON_SET: _daemon_set,
    kinds.JOB: _job,
    kinds.POD: _pod,
    kinds.PERSISTENT_VOLUME_CLAIM: _claim,
}
