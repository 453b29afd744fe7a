"""``pyocm bench placement``: what scheduling Placements costs the hub (issue 20's figures).

The hub runs as its own process (``pyocm hub``, default settings), so its CPU is its
own. ``--clusters`` ManagedClusters are created directly as the admin (no agents), with
labels (``env``, ``zone``), two claims in ``status.clusterClaims``, allocatable and
capacity, and one in ten a ``NoSelect`` taint that no placement here tolerates.

Agentless clusters and the hub's lease and taint controllers: a cluster whose
``Available`` condition is missing or Unknown gets the ``unreachable`` taint, and an
*accepted* cluster whose lease is not renewed turns Unknown after five lease durations.
These clusters are created with ``hubAcceptsClient: false`` (no agent will ever ask to
join, so there is nothing to accept: the hub grants no namespace or RBAC and keeps no
lease for them) and their status says ``Available`` True, so the hub taints none of them
and nothing has to be kept fresh during the run. The placements therefore tolerate
nothing: the only taint they meet is the bench's own, on one cluster in ten.

Figures:

* scheduling latency: one placement (``numberOfClusters`` 100, prioritizers Steady and
  ResourceAllocatableCPU) in namespace ``bench-placement-0``; then ``--changes`` spec
  changes, one at a time, alternating the ``env`` its predicate selects and
  ``numberOfClusters`` (100 or 90). Each is timed from the API's answer to the patch until
  the PlacementDecisions (watched with an Informer) hold the clusters the change asks for:
  as many as it wants (or every eligible one when fewer), every one of the new ``env``,
  none tainted. Goal: p99 under 1 s.
* hub CPU to keep ``--placements`` placements current: they are spread over ten
  namespaces (each bound to the set), each selecting one zone, 10 clusters by the same
  two prioritizers (``--policy steady-cpu``) or by upstream's defaults, Balance and
  Steady (``--policy default``). Once all are scheduled and the hub is quiet (the scheduling queue
  empty and no pass for 5 s: each pass's own writes come back to it once), 1 % of the clusters
  change their ``zone`` label each minute, evenly spaced, for ``--duration`` seconds; the
  hub's CPU over that window is reported in cores. Goal: under 0.2 core. The report
  also gives the scheduling controller's reconciles in the window and its queue depth at
  the end (a queue that has not drained means the placements are not current).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.bench.fleet import ProcessStats, Report, measured_hub
from pyocm.bench.stats import latencies
from pyocm.kube import kinds, timefmt
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.informer import Change, Informer
from pyocm.testing import HubProcess

Obj = dict[str, Any]
CREATE_WORKERS = 32
NAMESPACES = 10
ZONES = 10
ENVS = ("prod", "staging", "dev")
SET = "bench-placement"
#: The label every bench cluster carries and the set selects.
SET_LABEL = "bench.open-cluster-management.io/fleet"
TAINT = {"key": "bench.open-cluster-management.io/maintenance", "effect": "NoSelect"}
LATENCY_PLACEMENT = "latency"
#: How long one spec change may take before it counts as not seen.
CHANGE_TIMEOUT = 30.0
CONTROLLER = "SchedulingController"


#: The prioritizers of the placements kept current: the two of the latency figure, or
#: none named (upstream's defaults, Balance and Steady).
POLICIES = ("steady-cpu", "default")


@dataclass(frozen=True)
class Options:
    clusters: int = 10_000
    placements: int = 1_000
    changes: int = 50
    duration: float = 60.0
    policy: str = POLICIES[0]

    def __post_init__(self) -> None:
        if self.clusters < 1 or self.placements < 1 or self.changes < 1:
            raise ValueError("--clusters, --placements and --changes must be at least 1")
        if self.duration <= 0:
            raise ValueError("--duration must be positive")
        if self.policy not in POLICIES:
            raise ValueError(f"--policy must be one of {', '.join(POLICIES)}")


def cluster_name(index: int) -> str:
    return f"bench-{index:05d}"


def labels(index: int, *, zone: int | None = None) -> dict[str, str]:
    return {
        SET_LABEL: "true",
        "env": ENVS[index % len(ENVS)],
        "zone": f"z{index % ZONES if zone is None else zone}",
    }


def tainted(index: int) -> bool:
    return index % 10 == 0


def cluster(index: int) -> Obj:
    spec: Obj = {"hubAcceptsClient": False}
    if tainted(index):
        spec["taints"] = [dict(TAINT)]
    return {"metadata": {"name": cluster_name(index), "labels": labels(index)}, "spec": spec}


def cluster_status(index: int, *, now: str) -> Obj:
    """Available True (so the hub does not taint it), two claims, allocatable and capacity."""
    return {
        "conditions": [
            {
                "type": wellknown.CLUSTER_AVAILABLE,
                "status": "True",
                "reason": "ManagedClusterAvailable",
                "message": "Simulated by pyocm bench placement: no agent runs.",
                "lastTransitionTime": now,
            }
        ],
        "clusterClaims": [
            {"name": "id.k8s.io", "value": f"{cluster_name(index)}-id"},
            {"name": "platform.open-cluster-management.io", "value": ("AWS", "GCP")[index % 2]},
        ],
        "allocatable": {"cpu": str(2 + index % 62), "memory": f"{4 + index % 60}Gi"},
        "capacity": {"cpu": "64", "memory": "64Gi"},
    }


def namespace(index: int) -> str:
    return f"bench-placement-{index}"


def placement(name: str, ns: str, *, number: int, selector: Mapping[str, str]) -> Obj:
    """A placement choosing ``number`` clusters with labels ``selector``, by Steady and
    ResourceAllocatableCPU."""
    return {
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "numberOfClusters": number,
            "predicates": [
                {"requiredClusterSelector": {"labelSelector": {"matchLabels": dict(selector)}}}
            ],
            "prioritizerPolicy": {
                "mode": "Exact",
                "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Steady"}, "weight": 1},
                    {
                        "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                        "weight": 2,
                    },
                ],
            },
        },
    }


async def run_writers(jobs: list[Callable[[], Any]], *, workers: int = CREATE_WORKERS) -> None:
    """Run the awaitable factories ``jobs`` with ``workers`` concurrent writers."""
    queue: asyncio.Queue[Callable[[], Any]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)

    async def writer() -> None:
        while not queue.empty():
            await queue.get_nowait()()

    await asyncio.gather(*(writer() for _ in range(workers)))


async def create_fleet(admin: Api, count: int) -> None:
    """The namespaces, the set, its bindings, and ``count`` clusters with their status."""
    for index in range(NAMESPACES):
        await admin.create(kinds.NAMESPACE, {"metadata": {"name": namespace(index)}})
    await admin.create(
        ocm.MANAGED_CLUSTER_SET,
        {
            "metadata": {"name": SET},
            "spec": {
                "clusterSelector": {
                    "selectorType": "LabelSelector",
                    "labelSelector": {"matchLabels": {SET_LABEL: "true"}},
                }
            },
        },
    )
    for index in range(NAMESPACES):
        await admin.create(
            ocm.MANAGED_CLUSTER_SET_BINDING,
            {"metadata": {"name": SET, "namespace": namespace(index)}, "spec": {"clusterSet": SET}},
        )
    now = timefmt.format_time(timefmt.parse_time(timefmt.now_rfc3339()))

    def job(index: int) -> Callable[[], Any]:
        async def make() -> None:
            await admin.create(ocm.MANAGED_CLUSTER, cluster(index))
            await admin.patch(
                ocm.MANAGED_CLUSTER,
                cluster_name(index),
                {"status": cluster_status(index, now=now)},
                subresource="status",
            )

        return make

    await run_writers([job(i) for i in range(count)])


class Decisions:
    """The hub's PlacementDecisions, and when the ones a test waits for first matched."""

    def __init__(self, admin: Api) -> None:
        self.informer = Informer(admin, ocm.PLACEMENT_DECISION)
        self.informer.add_handler(self._seen)
        self.placement: tuple[str, str] | None = None
        self.wanted: Callable[[list[str]], bool] = lambda _: False
        self.matched = asyncio.Event()
        self.matched_at = 0.0

    def chosen(self, ns: str, name: str) -> list[str]:
        found = []
        for obj in self.informer.store.objects():
            meta = obj["metadata"]
            if meta.get("namespace") != ns:
                continue
            if (meta.get("labels") or {}).get(wellknown.PLACEMENT_LABEL) != name:
                continue
            found += [d["clusterName"] for d in (obj.get("status") or {}).get("decisions") or []]
        return found

    def expect(self, ns: str, name: str, wanted: Callable[[list[str]], bool]) -> None:
        self.placement, self.wanted = (ns, name), wanted
        self.matched.clear()
        self._check()

    def _seen(self, change: Change) -> None:
        self._check()

    def _check(self) -> None:
        if self.placement is None or self.matched.is_set():
            return
        if self.wanted(self.chosen(*self.placement)):
            self.matched_at = time.monotonic()
            self.matched.set()


def wants(
    env: str, number: int, eligible: int, env_of: Mapping[str, str]
) -> Callable[[list[str]], bool]:
    """Whether decided clusters are what a change to ``env`` and ``number`` asks for."""
    count = min(number, eligible)

    def check(chosen: list[str]) -> bool:
        return len(set(chosen)) == len(chosen) == count and all(
            env_of.get(name) == env for name in chosen
        )

    return check


async def scheduling_latency(admin: Api, decisions: Decisions, options: Options) -> tuple[str, str]:
    """The first schedule of one placement, then ``options.changes`` timed spec changes,
    as report values."""
    env_of = {cluster_name(i): labels(i)["env"] for i in range(options.clusters)}
    eligible = {
        env: sum(1 for i in range(options.clusters) if not tainted(i) and labels(i)["env"] == env)
        for env in ENVS
    }
    ns = namespace(0)
    decisions.expect(ns, LATENCY_PLACEMENT, wants("prod", 100, eligible["prod"], env_of))
    t0 = time.monotonic()
    await admin.create(
        ocm.PLACEMENT, placement(LATENCY_PLACEMENT, ns, number=100, selector={"env": "prod"})
    )
    first = await _matched(decisions, since=t0)
    shown = "not seen" if first is None else f"{first * 1000:.0f} ms"
    took: list[float] = []
    for attempt in range(options.changes):
        env = ENVS[(attempt + 1) % len(ENVS)]
        number = 90 if attempt % 2 == 0 else 100
        decisions.expect(ns, LATENCY_PLACEMENT, wants(env, number, eligible[env], env_of))
        spec = placement(LATENCY_PLACEMENT, ns, number=number, selector={"env": env})["spec"]
        await admin.patch(ocm.PLACEMENT, LATENCY_PLACEMENT, {"spec": spec}, namespace=ns)
        answered = time.monotonic()
        seconds = await _matched(decisions, since=answered)
        if seconds is not None:
            took.append(seconds)
    return shown, f"{latencies(took)} ({len(took)} of {options.changes} seen)"


async def _matched(decisions: Decisions, *, since: float) -> float | None:
    """Seconds from ``since`` until the awaited decisions matched (0 if they already
    had), or None after CHANGE_TIMEOUT."""
    try:
        await asyncio.wait_for(decisions.matched.wait(), CHANGE_TIMEOUT)
    except TimeoutError:
        return None
    return max(0.0, decisions.matched_at - since)


async def create_placements(admin: Api, count: int, *, policy: str = POLICIES[0]) -> None:
    """``count`` placements over the namespaces: each 10 clusters of one zone, by
    ``policy`` (:data:`POLICIES`)."""

    def job(index: int) -> Callable[[], Any]:
        async def make() -> None:
            body = placement(
                f"p-{index:04d}",
                namespace(index % NAMESPACES),
                number=10,
                selector={"zone": f"z{index % ZONES}"},
            )
            if policy == "default":
                del body["spec"]["prioritizerPolicy"]
            await admin.create(ocm.PLACEMENT, body)

        return make

    await run_writers([job(i) for i in range(count)])


async def until_scheduled(admin: Api, count: int, *, timeout: float) -> tuple[int, int]:
    """How many bench placements (``p-*``) have PlacementSatisfied, polled until all
    ``count`` do or ``timeout``; and how many polls the hub did not answer in time (a
    hub busy scheduling may be too slow to list)."""
    deadline = time.monotonic() + timeout
    done, unanswered = 0, 0
    while True:
        try:
            listed = await admin.list_all(ocm.PLACEMENT)
        except ApiConnectionError:
            unanswered += 1
        else:
            done = sum(1 for p in listed["items"] if _satisfied(p))
        if done >= count or time.monotonic() > deadline:
            return done, unanswered
        await asyncio.sleep(1.0)


async def until_quiet(admin: Api, *, timeout: float, settle: float = 5.0) -> tuple[bool, float]:
    """Poll the hub's metrics until the scheduling queue is empty and no pass has run for
    ``settle`` seconds, or ``timeout``; whether it got quiet, and the passes so far."""
    deadline = time.monotonic() + timeout
    last, since = -1.0, time.monotonic()
    while True:
        text = await admin.text("/metrics")
        passes = metric(text, "controller_runtime_reconcile_total", controller=CONTROLLER)
        if passes != last or metric(text, "workqueue_depth", name=CONTROLLER):
            last, since = passes, time.monotonic()
        elif time.monotonic() - since >= settle:
            return True, passes
        if time.monotonic() > deadline:
            return False, passes
        await asyncio.sleep(1.0)


def _satisfied(placement: Obj) -> bool:
    return placement["metadata"]["name"].startswith("p-") and any(
        c.get("type") == wellknown.PLACEMENT_SATISFIED
        for c in (placement.get("status") or {}).get("conditions") or []
    )


async def churn(admin: Api, clusters: int, *, duration: float) -> int:
    """Move 1 % of the clusters a minute to another zone, evenly spaced, for ``duration``
    seconds; answer how many changed."""
    interval = 60.0 / max(clusters / 100, 1e-9)
    t0, changed = time.monotonic(), 0
    while True:
        due = t0 + changed * interval
        if due - t0 >= duration:
            await asyncio.sleep(max(0.0, t0 + duration - time.monotonic()))
            return changed
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        index = (changed * 7919) % clusters  # a stride through the fleet
        zone = (index + changed + 1) % ZONES
        body = {"metadata": {"labels": labels(index, zone=zone)}}
        await admin.patch(ocm.MANAGED_CLUSTER, cluster_name(index), body)
        changed += 1


_SERIES = re.compile(r"^(?P<name>\w+)\{(?P<labels>[^}]*)\} (?P<value>\S+)$")


def metric(text: str, series: str, **wanted: str) -> float:
    """The sum of ``series``' series whose labels include ``wanted`` (``/metrics`` text)."""
    total = 0.0
    for line in text.splitlines():
        match = _SERIES.match(line)
        if match is None or match["name"] != series:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match["labels"]))
        if wanted.items() <= found.items():
            total += float(match["value"])
    return total


async def run(options: Options, *, command: str) -> Report:
    report = Report()
    report.add("command", command)
    async with measured_hub("pyocm-bench-placement-") as (hub, stats):
        await _measure(options, hub, stats, report)
    return report


async def _measure(options: Options, hub: HubProcess, stats: ProcessStats, report: Report) -> None:
    async with Api.from_kubeconfig(hub.kubeconfig) as admin:
        t0 = time.monotonic()
        await create_fleet(admin, options.clusters)
        report.add(
            "clusters",
            f"{options.clusters} created in {time.monotonic() - t0:.1f} s"
            f" (1 in 10 tainted, none accepted, status Available)",
        )
        await asyncio.sleep(5.0)  # let the hub's cluster controllers go quiet
        decisions = Decisions(admin)
        watching = asyncio.create_task(decisions.informer.run())
        try:
            await decisions.informer.wait_synced()
            first, changes = await scheduling_latency(admin, decisions, options)
            report.add("one placement, first schedule", first)
            report.add("spec change to decisions", f"{changes} (goal p99 < 1000 ms)")
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        await _keep_current(options, admin, stats, report)


async def _keep_current(options: Options, admin: Api, stats: ProcessStats, report: Report) -> None:
    t0 = time.monotonic()
    await create_placements(admin, options.placements, policy=options.policy)
    done, unanswered = await until_scheduled(
        admin, options.placements, timeout=max(120.0, options.placements)
    )
    label = "placements scheduled" if done >= options.placements else "NOT all scheduled"
    report.add(
        label,
        f"{done} of {options.placements} in {time.monotonic() - t0:.1f} s"
        f" ({NAMESPACES} namespaces, 10 of a zone each, prioritizers {options.policy})",
    )
    if unanswered:
        report.add("lists of placements unanswered", f"{unanswered} (the hub was too busy)")
    # Each placement's decisions come back to it as events: a pass that finds nothing
    # to write. Measure the churn only once those have run out, or it counts them.
    quiet, passes = await until_quiet(admin, timeout=max(120.0, options.placements / 5))
    report.add("scheduling passes until quiet", f"{passes:.0f} in {time.monotonic() - t0:.1f} s")
    if not quiet:
        report.add("NOT quiet", "the scheduling queue still had work when the churn began")
    metrics0 = await admin.text("/metrics")
    cpu0, t1 = stats.cpu_seconds(), time.monotonic()
    changed = await churn(admin, options.clusters, duration=options.duration)
    window = time.monotonic() - t1
    cores = (stats.cpu_seconds() - cpu0) / window
    metrics1 = await admin.text("/metrics")
    report.add(
        "cluster label changes",
        f"{changed} in {window:.0f} s (1 % of {options.clusters} a minute)",
    )
    report.add("hub CPU keeping placements current", f"{cores:.2f} cores (goal < 0.2)")
    reconciles = metric(metrics1, "controller_runtime_reconcile_total", controller=CONTROLLER)
    reconciles -= metric(metrics0, "controller_runtime_reconcile_total", controller=CONTROLLER)
    report.add("scheduling passes in the window", f"{reconciles:.0f}")
    depth = metric(metrics1, "workqueue_depth", name=CONTROLLER)
    report.add("scheduling queue at the end", f"{depth:.0f} waiting")
    report.add("hub RSS at the end", f"{stats.rss_mib():.0f} MiB")
