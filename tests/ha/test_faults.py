"""Faults while a simulated fleet runs against an HA hub (issue 24, item 3): an etcd
follower, the etcd leader or the replica leading the controllers is killed (SIGKILL),
and put back. Throughout, every ManagedCluster stays Available (sampled every second),
writes go on, and no acknowledged write is lost; the fleet's watches resume from their
resourceVersion rather than relisting. Figures (the longest gap between acknowledged
writes, LIST requests) are printed, never asserted beyond bounds that catch a hang."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pyocm.api import conditions
from pyocm.testing import HubProcess
from tests.etcd import EtcdMember
from tests.ha.hub import CLUSTERS, HUB_LEASE, SERVER_LEASE, HaHub, wait_for
from tests.ha.probes import Writer

pytestmark = [pytest.mark.ha, pytest.mark.timeout(300)]

#: Longer than any outage a fault should cause: only a hang goes past it.
HANG = 60.0
#: Acknowledged writes (one second's worth) that say writes go on again.
RESUMED = 20


@dataclass
class Observed:
    """What one fault did, seen from the shared address."""

    gap: float  # the longest time between two acknowledged writes, in seconds
    relists: Counter[str]  # LIST requests per resource, from the fault to recovery
    informers: int

    def __str__(self) -> str:
        listed = ", ".join(f"{r} {n}" for r, n in self.relists.most_common()) or "none"
        return (
            f"longest gap between acknowledged writes {self.gap:.2f}s; LIST requests"
            f" {sum(self.relists.values())} ({listed}) against {self.informers} at the start"
        )


def through(ha: HaHub, kill: Callable[[], Callable[[], None]]) -> Observed:
    """Run ``kill`` (it returns how to put back what it killed) while the probes run;
    wait until writes go on, put it back, and wait until every agent has renewed its
    lease since and every cluster reads Available. Then check nothing went wrong."""
    writer, availability = ha.writer, ha.availability
    assert writer is not None and availability is not None
    before = ha.requests("LIST")
    start = time.monotonic()
    restore = kill()
    writes_go_on(writer, start)
    restore()
    wall = time.time()
    wait_for(
        "every agent to renew its lease",
        lambda: len(ha.renewed_since(wall)) == len(ha.clusters),
    )
    settled = time.monotonic()
    wait_for("a round of samples", lambda: ha.fleet_available(settled))
    after = ha.requests("LIST")
    relists: Counter[str] = Counter()
    for pid, counts in after.items():
        relists.update(counts - before.get(pid, Counter()))
    observed = Observed(writer.longest_gap(start, settled), relists, ha.informers)
    print(observed)
    ha.check_fleet_running()
    assert availability.not_available(start) == []
    assert observed.gap < HANG
    return observed


def writes_go_on(writer: Writer, since: float) -> None:
    wait_for("writes to go on", lambda: writer.acked_since(since) >= RESUMED, timeout=HANG)


def storms(relists: Counter[str]) -> dict[str, int]:
    """The resources listed as often as by half the fleet: its watchers relisting (the
    controllers that change hands list each resource they watch a few times at most)."""
    return {resource: n for resource, n in relists.items() if n >= CLUSTERS // 2}


def kill_member(ha: HaHub, member: EtcdMember) -> Callable[[], None]:
    member.kill()
    return lambda: ha.etcd.restart(member)


def kill_replica(ha: HaHub, hub: HubProcess) -> Callable[[], None]:
    hub.kill()
    return lambda: ha.restart(hub)


def test_the_fleet_stays_available_when_an_etcd_follower_is_killed(ha: HaHub) -> None:
    leader = ha.etcd.leader()
    used = [m for m in ha.etcd_members_used() if m is not leader]
    # A follower a replica talks to, so that replica must move to another member.
    follower = (used or [m for m in ha.etcd.members if m is not leader])[0]
    print(f"killing etcd follower {follower.name} (used by a replica: {bool(used)})")
    observed = through(ha, lambda: kill_member(ha, follower))
    assert ha.etcd.leader() is leader  # a follower's loss needs no election
    assert storms(observed.relists) == {}


def test_the_fleet_stays_available_when_the_etcd_leader_is_killed(ha: HaHub) -> None:
    leader = ha.etcd.leader()
    print(f"killing etcd leader {leader.name}")
    observed = through(ha, lambda: kill_member(ha, leader))
    print(f"etcd leader lost: the API was unavailable for {observed.gap:.2f}s")
    assert ha.etcd.leader() is not leader
    assert storms(observed.relists) == {}


def test_the_controllers_move_when_the_replica_leading_them_is_killed(ha: HaHub) -> None:
    leading = ha.leading()
    other = next(hub for hub in ha.alive() if hub is not leading)

    def kill() -> Callable[[], None]:
        restore = kill_replica(ha, leading)
        # The survivor takes both Leases (after they expire: 15 s) and its controllers
        # work: a new cluster is accepted, a deleted namespace finalized.
        for lease in (HUB_LEASE, SERVER_LEASE):
            wait_for(
                f"the other replica to take {lease}",
                lambda lease=lease: ha.holder(lease) is other,
            )
        ha.check_controllers_work("moved-controllers")
        return restore

    observed = through(ha, kill)
    # The new leader's controllers list what they watch, once each: a few relists.
    assert storms(observed.relists) == {}


def test_the_fleets_watches_resume_without_a_relist_storm(ha: HaHub) -> None:
    # A rolling restart: the replica leading, then the other. While the first is away
    # the whole fleet watches through the second; killing that one moves every watch
    # to the first, started a moment before: each must resume there from its
    # resourceVersion (a watch that cannot lists again: a storm of one per agent).
    first = ha.leading()
    second = next(hub for hub in ha.replicas if hub is not first)
    relists: Counter[str] = Counter()
    for hub in (first, second):
        relists.update(through(ha, lambda hub=hub: kill_replica(ha, hub)).relists)
    print(
        f"rolling restart of both replicas: {sum(relists.values())} LIST requests"
        f" ({', '.join(f'{r} {n}' for r, n in relists.most_common())});"
        f" {ha.informers} when the fleet started"
    )
    assert storms(relists) == {}
    # And the watches work: every work agent sees a new ManifestWork and applies it.
    for name in ha.clusters:
        ha.call("POST", f"{WORKS}/{name}/manifestworks", probe_work(name))
    wait_for("every ManifestWork applied", lambda: all(applied(ha, n) for n in ha.clusters))


WORKS = "/apis/work.open-cluster-management.io/v1/namespaces"


def probe_work(namespace: str) -> dict[str, object]:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "after-the-fault", "namespace": "default"},
        "data": {"a": "1"},
    }
    return {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": {"name": "after-the-fault", "namespace": namespace},
        "spec": {"workload": {"manifests": [config]}},
    }


def applied(ha: HaHub, namespace: str) -> bool:
    work = ha.call("GET", f"{WORKS}/{namespace}/manifestworks/after-the-fault")
    assert isinstance(work, dict)
    return conditions.is_true(work.get("status", {}).get("conditions"), "Applied")


def test_no_acknowledged_write_is_lost(ha: HaHub) -> None:
    assert ha.writer is not None
    writers = [Writer(ha.connection(), namespace="ha-probe", prefix=f"burst-{i}") for i in range(3)]
    for writer in writers:
        writer.create()
        writer.start()
    try:
        leader, leading = ha.etcd.leader(), ha.leading()

        def kill() -> Callable[[], None]:
            # Both at once: the etcd leader and the replica leading the controllers.
            leader.kill()
            leading.kill()

            def restore() -> None:
                ha.etcd.restart(leader)
                ha.restart(leading)

            return restore

        through(ha, kill)
    finally:
        for writer in writers:
            writer.stop()
    # Every write acknowledged since the fleet started, through every fault of this
    # module, is there: each key at the resourceVersion acknowledged or later, holding
    # the value written then or a later one.
    for writer in [ha.writer, *writers]:
        latest: dict[str, tuple[int, int]] = {}
        for ack in writer.acks:
            latest[ack.name] = max(latest.get(ack.name, (0, 0)), (ack.resource_version, ack.n))
        for name, (version, n) in latest.items():
            stored = ha.call("GET", f"/api/v1/namespaces/ha-probe/configmaps/{name}")
            assert isinstance(stored, dict)
            assert int(stored["metadata"]["resourceVersion"]) >= version, name
            assert int(stored["data"]["n"]) >= n, name
        print(f"{writer.prefix}: {len(writer.acks)} acknowledged writes, all there")


@pytest.mark.bench
def test_the_unavailability_window_when_the_etcd_leader_is_lost(ha: HaHub) -> None:
    """Five leader kills, one after the other: the longest gap between acknowledged
    writes after each (a figure for BENCHMARKS.md)."""
    writer = ha.writer
    assert writer is not None and ha.availability is not None
    begun = time.monotonic()
    gaps = []
    for _ in range(5):
        leader = ha.etcd.leader()
        start = time.monotonic()
        leader.kill()
        writes_go_on(writer, start)
        ha.etcd.restart(leader)
        ha.etcd.leader()
        writes_go_on(writer, time.monotonic())
        gaps.append(writer.longest_gap(start, time.monotonic()))
    shown = ", ".join(f"{gap:.2f}" for gap in gaps)
    print(
        f"etcd leader lost 5 times: the API was unavailable for {shown} s"
        f" (median {statistics.median(gaps):.2f} s, max {max(gaps):.2f} s)"
    )
    settled = time.monotonic()
    wait_for("a round of samples", lambda: ha.fleet_available(settled))
    assert ha.availability.not_available(begun) == []
    assert max(gaps) < HANG
