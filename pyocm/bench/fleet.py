"""``pyocm bench fleet``: a hub process, a simulated fleet, and what it costs the hub.

The hub runs as its own process (``pyocm hub``, default settings), so its CPU and
memory are its own; the simulator runs here, each cluster a real agent, or split over
``--sim-processes`` processes when one core cannot drive the whole fleet. Scenarios:

* ``steady``: N clusters joined, then a window of normal life (leases every
  ``--lease-duration`` seconds, status every health-check period);
* ``burst``: N clusters asking to join at once (``--join-rate`` very high);
* ``heartbeat-churn``: leases compressed to ``--lease-duration`` seconds (2 by default),
  to check that days of heartbeats do not grow the database;
* ``rotation-storm``: N clusters joined, then every agent renews its certificate at
  the same moment (a new key, a CSR the hub approves and signs, a new connection); the
  report says how long the last renewal took and what it cost the hub;
* ``works``: N clusters joined, a window without works, then ``--works-per-cluster``
  ManifestWorks for every cluster created at once (:mod:`pyocm.bench.works`): when all
  were Applied and Available, the same window with them, and spec-change latency;
* ``addons``: the hub runs helloworld and two test copies of it; N clusters joined, a
  window without add-ons, then helloworld enabled on every cluster by a Placements
  install strategy (time until every ManagedClusterAddOn is Available, each cluster
  with its own add-on certificate and Lease), the two copies likewise, and the same
  window with the three (:mod:`pyocm.bench.addons`). The add-on agents are simulated:
  each renews its add-on's Lease in its cluster's memory and never connects to the hub;
* ``template``: N clusters joined, a window without add-ons, then seed 003's template
  add-on installed on every cluster by a placement (time until every MCA is Available,
  health from the agent Deployment's simulated status), and its upgrade to a v2
  template rolled out ProgressivePerGroup (time and hub CPU per decision group)
  (:mod:`pyocm.bench.template`). No add-on agent runs, not even a simulated one.

``--storage etcd`` runs the hub on a throw-away 3-member etcd cluster started for the run
(:mod:`pyocm.bench.etcdcluster`) and ``--replicas N`` runs N hub processes behind one
port (``pyocm hub --replicas``); the report then adds the CPU of each process (every
replica, every etcd member, the fleet's), and the etcd database for the SQLite file.

Every simulated cluster runs the work agent beside registration, as a klusterlet does,
and its agent's add-on side (a watch of its ManagedClusterAddOns), unless ``--agents
registration`` runs registration alone (steady, burst, heartbeat-churn and
rotation-storm only).

The report: hub CPU (cores, averaged over the window), hub RSS, lease renewal latency
as the agents saw it and lease update latency in the hub's handler (from its
``/metrics``: without the simulator's delays, and without the hub's own TLS, parsing
and event-loop queueing either), join times, Available→Unknown transitions that
should not have happened, database size and growth, and objects stored per cluster.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import os
import shlex
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from cryptography import x509

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.bench import addons, etcdcluster, template, works
from pyocm.bench.simulation import InProcess, Shards, Simulation, Snapshot
from pyocm.bench.stats import bucketed, latencies, request_buckets
from pyocm.kube import kinds, timefmt
from pyocm.pki import signer
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.registration.hub.csrapproval import APPROVE_REASON
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer
from pyocm.sim.fleet import FleetOptions
from pyocm.testing import HubProcess

SCENARIOS = (
    "steady",
    "burst",
    "heartbeat-churn",
    "rotation-storm",
    "works",
    "addons",
    "template",
)
#: What each simulated cluster runs: every agent a klusterlet runs, or registration alone
#: (half the connections to the hub: a rotation storm of 9,500 clusters then fits in a
#: process's 20,000 open files, as the storms of sessions 8 and 9 were measured).
AGENTS = ("all", "registration")
#: The scenarios that use the work agent or the add-on side.
_NEED_ALL_AGENTS = ("works", "addons", "template")
_TICKS = os.sysconf("SC_CLK_TCK")
N = TypeVar("N", int, float)


@dataclass(frozen=True)
class Scenario:
    name: str
    clusters: int
    duration: float
    join_rate: float
    lease_seconds: int
    healthcheck_period: float
    #: Simulator processes (one Python process drives a few thousand agents).
    sim_processes: int = 1
    #: ManifestWorks per cluster in the ``works`` scenario.
    works_per_cluster: int = 5
    #: ``sqlite`` (the hub's default) or ``etcd`` (a 3-member etcd started for the run).
    storage: str = "sqlite"
    #: Hub processes behind one port (``pyocm hub --replicas``); more than one needs etcd.
    replicas: int = 1
    #: One of :data:`AGENTS`.
    agents: str = "all"

    @classmethod
    def named(
        cls,
        name: str,
        *,
        clusters: int,
        duration: float,
        join_rate: float | None,
        lease_seconds: int | None,
        sim_processes: int = 1,
        works_per_cluster: int = 5,
        storage: str = "sqlite",
        replicas: int = 1,
        agents: str = "all",
    ) -> Scenario:
        if agents not in AGENTS:
            raise ValueError(f"--agents is {' or '.join(AGENTS)}")
        if agents != "all" and name in _NEED_ALL_AGENTS:
            raise ValueError(f"the {name} scenario needs --agents all")
        if storage not in ("sqlite", "etcd"):
            raise ValueError("--storage is sqlite or etcd")
        if replicas > 1 and storage != "etcd":
            raise ValueError("--replicas needs --storage etcd")
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario {name!r}; use one of {', '.join(SCENARIOS)}")
        if not 1 <= sim_processes <= clusters:
            raise ValueError("--sim-processes must be between 1 and --clusters")
        defaults = {
            "steady": (50.0, 60, 60.0),
            "burst": (10_000.0, 60, 60.0),
            "heartbeat-churn": (50.0, 2, 10.0),
            "rotation-storm": (50.0, 60, 60.0),
            "works": (50.0, 60, 60.0),
            "addons": (50.0, 60, 60.0),
            "template": (50.0, 60, 60.0),
        }[name]
        return cls(
            name=name,
            clusters=clusters,
            duration=duration,
            join_rate=join_rate or defaults[0],
            lease_seconds=lease_seconds or defaults[1],
            healthcheck_period=defaults[2],
            sim_processes=sim_processes,
            works_per_cluster=works_per_cluster,
            storage=storage,
            replicas=replicas,
            agents=agents,
        )

    @property
    def ha(self) -> bool:
        """Whether the hub is not the default single process on SQLite."""
        return self.storage != "sqlite" or self.replicas > 1


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)

    def add(self, label: str, value: str) -> None:
        self.lines.append(f"{label:<34} {value}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_files(pid: int) -> int:
    """How many files ``pid`` holds open (nearly all of a hub's are its connections)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def open_file_limit(pid: int) -> int:
    """``pid``'s soft limit on open files (0: unlimited)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft = line.split()[3]
            return int(soft) if soft.isdigit() else 0
    return 0


def children(pid: int) -> list[int]:
    """``pid``'s child processes, read again each time (a dead replica is replaced)."""
    with contextlib.suppress(OSError):
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


class ProcessStats:
    """CPU seconds and RSS of one process, from /proc; with ``children``, of it and its
    child processes together (``pyocm hub --replicas``: a supervisor and its replicas)."""

    def __init__(self, pid: int, *, with_children: bool = False) -> None:
        self.pid = pid
        self.with_children = with_children

    def pids(self) -> list[int]:
        return [self.pid, *(children(self.pid) if self.with_children else [])]

    def cpu_seconds(self) -> float:
        return sum(_alive(cpu_seconds, pid) for pid in self.pids())

    def rss_mib(self) -> float:
        return sum(_alive(rss_mib, pid) for pid in self.pids())

    def open_files(self) -> str:
        """Open files of each serving process, against its limit: a hub holds about
        four connections per simulated cluster, and the limit caps the fleet a process
        can carry (the hub closes connections beyond ``--max-connections``)."""
        serving = self.pids()[1:] if self.with_children else self.pids()
        each = " + ".join(f"{_alive(open_files, pid):,}" for pid in serving)
        limit = _alive(open_file_limit, serving[0]) if serving else 0
        return f"{each} (limit {limit:,} per process)" if limit else each


def _alive(read: Callable[[int], N], pid: int) -> N:
    """``read(pid)``, or 0 for a process that ended meanwhile."""
    with contextlib.suppress(OSError):
        return read(pid)
    return 0


class PerProcess:
    """CPU of every process of the run by role, for an HA hub's report: each hub
    replica, each etcd member, and the fleet (this process and its simulators)."""

    def __init__(self, hub_pid: int, etcd: dict[str, int]) -> None:
        self.hub_pid = hub_pid
        self.etcd = etcd

    def roles(self) -> dict[str, list[int]]:
        roles = {f"hub {pid}": [pid] for pid in children(self.hub_pid)}
        roles["hub supervisor"] = [self.hub_pid]
        roles.update({f"etcd {name}": [pid] for name, pid in self.etcd.items()})
        own = {self.hub_pid, *self.etcd.values()}
        me = os.getpid()
        roles["fleet"] = [me, *(pid for pid in children(me) if pid not in own)]
        return roles

    def sample(self) -> dict[str, float]:
        return {
            role: sum(_alive(cpu_seconds, pid) for pid in pids)
            for role, pids in self.roles().items()
        }

    @staticmethod
    def cores(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
        """Cores per role between two samples (roles present in both)."""
        shown = [
            f"{role} {(after[role] - before[role]) / seconds:.2f}"
            for role in after
            if role in before
        ]
        total = sum(after[r] - before[r] for r in after if r in before) / seconds
        return f"{', '.join(shown)} (all {total:.2f} cores)"


class UnknownWatch:
    """Counts clusters whose Available condition turns Unknown."""

    def __init__(self, api: Api) -> None:
        self.informer = Informer(api, ocm.MANAGED_CLUSTER)
        self.informer.add_handler(self._seen)
        self.transitions = 0
        self.counting = False

    def _seen(self, change: Change) -> None:
        def state(obj: object) -> str:
            found = conditions.find(
                ((obj or {}).get("status") or {}).get("conditions"),  # type: ignore[attr-defined]
                wellknown.CLUSTER_AVAILABLE,
            )
            return str((found or {}).get("status") or "")

        if self.counting and state(change.old) != "Unknown" and state(change.new) == "Unknown":
            self.transitions += 1


def database(data_dir: Path) -> tuple[float, Counter[str]]:
    """The database's size in MiB (with its WAL) and its live objects by resource."""
    files = [data_dir / "state.db", data_dir / "state.db-wal"]
    size = sum(f.stat().st_size for f in files if f.exists()) / (1024 * 1024)
    with sqlite3.connect(f"file:{data_dir / 'state.db'}?mode=ro", uri=True) as db:
        keys = [row[0] for row in db.execute("SELECT key FROM kv")]
    return size, Counter(key.split("/")[3] for key in keys if key.count("/") >= 4)


@contextlib.asynccontextmanager
async def measured_hub(
    prefix: str, *, extra_args: list[str] | None = None
) -> AsyncIterator[tuple[HubProcess, ProcessStats]]:
    """A hub process of its own (default settings, plus ``extra_args``) in a temporary
    directory, with the /proc reader of its CPU and memory; stopped on the way out."""
    with tempfile.TemporaryDirectory(prefix=prefix) as root:
        hub = HubProcess(Path(root) / "hub", extra_args=extra_args)
        await asyncio.to_thread(hub.start)
        try:
            assert hub.proc is not None
            yield hub, ProcessStats(hub.proc.pid)
        finally:
            await asyncio.to_thread(hub.stop)


@dataclass
class Store:
    """Where the hub stores, for the database lines of the report."""

    data_dir: Path
    etcd: etcdcluster.EtcdCluster | None = None
    prefix: str = ""

    def database(self) -> tuple[float, Counter[str]]:
        if self.etcd is None:
            return database(self.data_dir)
        return self.etcd.db_mib(), self.etcd.keys(self.prefix)


@contextlib.asynccontextmanager
async def measured_ha_hub(
    scenario: Scenario, *, extra_args: list[str]
) -> AsyncIterator[tuple[HubProcess, ProcessStats, Store, PerProcess]]:
    """The hub of an HA run: on a 3-member etcd started for it (``--storage etcd``), as
    ``--replicas`` processes; its stats sum the supervisor and every replica."""
    with tempfile.TemporaryDirectory(prefix="pyocm-bench-fleet-") as root:
        folder = Path(root)
        with etcdcluster.running(folder) as etcd:
            prefix = f"/pyocm-bench-{uuid.uuid4().hex[:8]}"
            args = ["--storage", etcd.url, "--etcd-prefix", prefix, *extra_args]
            if scenario.replicas > 1:
                args += ["--replicas", str(scenario.replicas)]
            hub = HubProcess(folder / "hub", extra_args=args)
            await asyncio.to_thread(hub.start)
            try:
                assert hub.proc is not None
                pid = hub.proc.pid
                members = {m.name: m.process.pid for m in etcd.members}
                yield (
                    hub,
                    ProcessStats(pid, with_children=True),
                    Store(hub.data_dir, etcd, prefix),
                    PerProcess(pid, members),
                )
            finally:
                await asyncio.to_thread(hub.stop)


async def run(scenario: Scenario, *, command: str) -> Report:
    report = Report()
    report.add("command", command)
    extra_args = addons.HUB_ARGS if scenario.name == "addons" else None
    if extra_args:
        report.add("hub", f"pyocm hub {' '.join(extra_args)}")
    if scenario.ha:
        async with measured_ha_hub(scenario, extra_args=extra_args or []) as found:
            hub, stats, store, per_process = found
            report.add(
                "hub processes",
                f"{scenario.replicas} on a 3-member etcd (the hub figures sum them)",
            )
            await _measure(scenario, hub, stats, report, store=store, per_process=per_process)
        return report
    async with measured_hub("pyocm-bench-fleet-", extra_args=extra_args) as (hub, stats):
        await _measure(scenario, hub, stats, report, store=Store(hub.data_dir))
    return report


async def _measure(
    scenario: Scenario,
    hub: HubProcess,
    stats: ProcessStats,
    report: Report,
    *,
    store: Store,
    per_process: PerProcess | None = None,
) -> None:
    options = fleet_options(scenario)
    async with Api.from_kubeconfig(hub.kubeconfig) as admin:
        fleet: Simulation
        if scenario.sim_processes == 1:
            fleet = InProcess(admin, server=hub.url, ca_pem=hub.ca_pem, options=options)
        else:
            fleet = Shards(
                kubeconfig=hub.kubeconfig,
                server=hub.url,
                ca_pem=hub.ca_pem,
                options=options,
                processes=scenario.sim_processes,
            )
        unknown = UnknownWatch(admin)
        watcher = asyncio.create_task(unknown.informer.run())
        try:
            await fleet.start()
            each0 = per_process.sample() if per_process else {}
            cpu0, t0 = stats.cpu_seconds(), time.monotonic()
            seen = await _until_available(fleet, timeout=max(120.0, scenario.clusters / 5))
            joined_in = time.monotonic() - t0
            alone = ", registration alone" if scenario.agents == "registration" else ""
            report.add("clusters", f"{scenario.clusters} ({scenario.name}{alone})")
            if seen.available:
                report.add("all available after", f"{joined_in:.1f} s")
            else:
                # A goal missed is a figure too: measure the window with those that made it.
                states = ", ".join(f"{n} {s}" for s, n in seen.counts.most_common())
                report.add("NOT all available after", f"{joined_in:.1f} s: {states}")
            report.add("start to available", latencies(sorted(seen.join_seconds)))
            report.add(
                "hub CPU while joining",
                f"{(stats.cpu_seconds() - cpu0) / joined_in:.2f} cores",
            )
            if per_process:
                each = PerProcess.cores(each0, per_process.sample(), joined_in)
                report.add("CPU per process while joining", each)
            report.add("hub RSS after joining", f"{stats.rss_mib():.0f} MiB")
            report.add("hub open files after joining", stats.open_files())
            await asyncio.sleep(min(10.0, scenario.lease_seconds))  # let the joins settle
            size0, _ = store.database()
            await fleet.record()
            unknown.counting = True
            metrics0 = await admin.text("/metrics")
            each1 = per_process.sample() if per_process else {}
            cpu1, t1 = stats.cpu_seconds(), time.monotonic()
            if scenario.name == "rotation-storm":
                await _storm(
                    fleet, stats, report, timeout=scenario.duration, per_process=per_process
                )
            await asyncio.sleep(max(0.0, scenario.duration - (time.monotonic() - t1)))
            window = time.monotonic() - t1
            seen = await fleet.snapshot()
            report.add("window", f"{window:.0f} s, lease every {scenario.lease_seconds} s")
            window_cores = (stats.cpu_seconds() - cpu1) / window
            report.add("hub CPU in the window", f"{window_cores:.2f} cores")
            if per_process:
                each = PerProcess.cores(each1, per_process.sample(), window)
                report.add("CPU per process in the window", each)
            report.add("hub RSS at the end", f"{stats.rss_mib():.0f} MiB")
            report.add("lease renewal (agent's view)", latencies(sorted(seen.lease_seconds)))
            metrics1 = await admin.text("/metrics")
            put = {"resource": "leases", "verb": "PUT"}
            if scenario.replicas == 1:
                handled = bucketed(
                    request_buckets(metrics0, **put), request_buckets(metrics1, **put), within=0.05
                )
            else:  # each /metrics read may land on another replica: no difference to take
                handled = "not measured with replicas"
            report.add("lease update (hub handler time)", handled)
            report.add("lease renewals failed", str(seen.lease_failed))
            report.add("Available -> Unknown transitions", str(unknown.transitions))
            if scenario.name == "rotation-storm":
                report.add("renewal CSRs on the hub", await _renewals(admin))
            size1, objects = store.database()
            label = "database" if store.etcd is None else "etcd database (largest member)"
            report.add(label, f"{size1:.1f} MiB (grew {size1 - size0:+.1f} MiB in the window)")
            total = sum(objects.values())
            report.add("objects per cluster", f"{total / scenario.clusters:.1f} ({total} in all)")
            top = ", ".join(f"{k} {v}" for k, v in objects.most_common(6))
            report.add("largest kinds", top)
            if scenario.name == "works":
                await _works(scenario, admin, stats, report, baseline=window_cores)
            if scenario.name == "addons":
                await addons.measure(
                    admin,
                    fleet,
                    clusters=scenario.clusters,
                    duration=scenario.duration,
                    cpu_seconds=stats.cpu_seconds,
                    rss_mib=stats.rss_mib,
                    baseline=window_cores,
                    add=report.add,
                )
            if scenario.name == "template":
                await template.measure(
                    admin,
                    fleet,
                    clusters=scenario.clusters,
                    cpu_seconds=stats.cpu_seconds,
                    rss_mib=stats.rss_mib,
                    add=report.add,
                )
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await fleet.stop()


async def _works(
    scenario: Scenario,
    admin: Api,
    stats: ProcessStats,
    report: Report,
    *,
    baseline: float,
) -> None:
    """The works phase, after the window without works (whose hub CPU was ``baseline``
    cores)."""
    clusters = [
        item["metadata"]["name"] for item in (await admin.list_all(ocm.MANAGED_CLUSTER))["items"]
    ]
    watch = works.WorkWatch.on(admin)
    watching = asyncio.create_task(watch.informer.run())
    try:
        await watch.informer.wait_synced()
        t0 = time.monotonic()
        total = await works.create_all(admin, clusters, per_cluster=scenario.works_per_cluster)
        created_in = time.monotonic() - t0
        finished = await works.until_done(watch, total, timeout=max(120.0, total / 20))
        took = time.monotonic() - t0
        report.add(
            "works created",
            f"{total} in {created_in:.1f} s ({scenario.works_per_cluster} per cluster)",
        )
        label = "all Applied and Available after" if finished else "NOT all done after"
        report.add(label, f"{took:.1f} s ({len(watch.finished)} of {total})")
        await asyncio.sleep(10.0)  # let the status writes settle
        cpu0, t1 = stats.cpu_seconds(), time.monotonic()
        await asyncio.sleep(scenario.duration)
        window = time.monotonic() - t1
        with_works = (stats.cpu_seconds() - cpu0) / window
        report.add(
            "hub CPU in the window, with works",
            f"{with_works:.2f} cores ({with_works - baseline:+.2f} against the window without)",
        )
        report.add("hub RSS with works", f"{stats.rss_mib():.0f} MiB")
        seconds, asked = await works.change_latencies(admin, watch, clusters)
        report.add(
            "spec change to Applied (hub view)",
            f"{latencies(seconds)} ({len(seconds)} of {asked} seen)",
        )
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)


async def _storm(
    fleet: Simulation,
    stats: ProcessStats,
    report: Report,
    *,
    timeout: float,
    per_process: PerProcess | None = None,
) -> None:
    """Every agent renews at once; wait until each has stored its new credential (or
    ``timeout``) and report how long that took and what the hub spent on it."""
    each0 = per_process.sample() if per_process else {}
    cpu0, t0 = stats.cpu_seconds(), time.monotonic()
    await fleet.rotate()
    while True:
        seen = await fleet.snapshot()
        if len(seen.rotation_seconds) >= seen.rotating or time.monotonic() - t0 > timeout:
            break
        await asyncio.sleep(0.5)
    took = time.monotonic() - t0
    done = sorted(seen.rotation_seconds)
    last = f"the last after {done[-1]:.1f} s" if done else "none"
    report.add("certificates renewed at once", f"{len(done)} of {seen.rotating}, {last}")
    report.add("renewal (asked to stored)", latencies(done))
    report.add("hub CPU during the storm", f"{(stats.cpu_seconds() - cpu0) / took:.2f} cores")
    if per_process:
        report.add(
            "CPU per process in the storm", PerProcess.cores(each0, per_process.sample(), took)
        )


async def _renewals(admin: Api) -> str:
    """The hub's side of the storm: the renewal CSRs it approved and signed, and how long
    it took from the first request to the last certificate. An agent sees its
    certificate at its next read of the CSR, which may come about 40 s later."""
    listed = await admin.list_all(kinds.CSR)
    created, signed = [], []
    for csr in listed.get("items") or []:
        found = (csr.get("status") or {}).get("conditions") or []
        if not any(c.get("reason") == APPROVE_REASON for c in found):
            continue
        created.append(timefmt.parse_time(csr["metadata"]["creationTimestamp"]))
        if certificate := (csr.get("status") or {}).get("certificate"):
            with contextlib.suppress(ValueError):  # unreadable: not counted as signed
                signed.append(issued_at(certificate))
    if not created:
        return "none"
    first, last = min(created), max(created)
    text = f"{len(created)} approved, created over {(last - first).total_seconds():.0f} s"
    if signed:
        took = (max(signed) - first).total_seconds()
        text += f"; {len(signed)} signed, the last {took:.0f} s after the first was created"
    return text


def issued_at(certificate: str) -> datetime:
    """When the hub signed ``certificate`` (base64 PEM), to the second: its signer
    backdates NotBefore by a fixed five minutes."""
    cert = x509.load_pem_x509_certificate(base64.b64decode(certificate))
    return cert.not_valid_before_utc + signer.BACKDATE


def fleet_options(scenario: Scenario) -> FleetOptions:
    """The simulated fleet a scenario runs."""
    options = FleetOptions(
        clusters=scenario.clusters,
        join_rate=scenario.join_rate,
        auto_accept=True,
        lease_seconds=scenario.lease_seconds,
        healthcheck_period=scenario.healthcheck_period,
        # A template add-on's health is its Deployment's: no Lease to renew.
        addon_agents=scenario.name != "template",
    )
    if scenario.agents == "registration":
        return dataclasses.replace(
            options, work=None, addons=AddOnOptions(enabled=False), addon_agents=False
        )
    return options


async def _until_available(fleet: Simulation, *, timeout: float) -> Snapshot:
    """The fleet once every cluster is available, or as it stands after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        seen = await fleet.snapshot()
        if seen.available or time.monotonic() > deadline:
            return seen
        await asyncio.sleep(0.5)


def command_line() -> str:
    return " ".join(shlex.quote(a) for a in ["pyocm", *sys.argv[1:]])
