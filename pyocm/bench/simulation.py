"""The simulated fleet of ``bench fleet``, in this process or split over several.

One Python process drives a few thousand agents before its own core is the limit (at
10,000 clusters it was, long before the hub). :class:`Shards` runs the fleet as several
``Fleet`` processes, each with its own share of the clusters and of the join rate and
its own cluster-name prefix, and gathers what they saw as one :class:`Snapshot`;
:class:`InProcess` keeps the single-process path for small runs and tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
from collections import Counter
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Protocol

import uvloop

from pyocm.base import requestmetrics as metrics
from pyocm.runtime.client import Api
from pyocm.sim.fleet import Fleet, FleetOptions


class LeaseLatency:
    """The agents' lease renewals (PUT of managed-cluster-lease), as they saw them."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.failed = 0
        self.recording = False

    def __call__(self, method: str, path: str, status: int, seconds: float) -> None:
        if (
            not self.recording
            or method != "PUT"
            or not path.endswith("/leases/managed-cluster-lease")
        ):
            return
        if status == 200:
            self.seconds.append(seconds)
        else:
            self.failed += 1


@dataclass
class Snapshot:
    """What the simulated agents saw, summed over every process."""

    members: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    join_seconds: list[float] = field(default_factory=list)
    lease_seconds: list[float] = field(default_factory=list)
    lease_failed: int = 0
    #: Agents asked to renew in the last rotation storm, and the seconds each took.
    rotating: int = 0
    rotation_seconds: list[float] = field(default_factory=list)
    #: Simulated add-on agents running, and those that have written their Lease.
    addon_agents: int = 0
    addon_leases: int = 0
    #: Deployments in the clusters' memory by ``"<name> <label>=<value>"``, one count
    #: per label each carries (what the work agents applied, whatever its version).
    deployment_labels: Counter[str] = field(default_factory=Counter)

    def add(self, other: Snapshot) -> None:
        self.members += other.members
        self.counts.update(other.counts)
        self.join_seconds.extend(other.join_seconds)
        self.lease_seconds.extend(other.lease_seconds)
        self.lease_failed += other.lease_failed
        self.rotating += other.rotating
        self.rotation_seconds.extend(other.rotation_seconds)
        self.addon_agents += other.addon_agents
        self.addon_leases += other.addon_leases
        self.deployment_labels.update(other.deployment_labels)

    @property
    def available(self) -> bool:
        return self.counts.get("available", 0) == self.members


class Simulation(Protocol):
    async def start(self) -> None: ...

    async def snapshot(self) -> Snapshot: ...

    async def record(self) -> None:
        """Start counting lease renewals."""

    async def rotate(self) -> None:
        """Make every running agent renew its certificate now."""

    async def stop(self) -> None: ...


def _snapshot(fleet: Fleet, latency: LeaseLatency) -> Snapshot:
    return Snapshot(
        members=len(fleet.members),
        counts=fleet.counts(),
        join_seconds=fleet.join_seconds(),
        lease_seconds=list(latency.seconds),
        lease_failed=latency.failed,
        rotating=fleet.rotating,
        rotation_seconds=fleet.rotation_seconds(),
        addon_agents=fleet.addon_agents(),
        addon_leases=fleet.addon_leases(),
        deployment_labels=fleet.deployment_labels(),
    )


class InProcess:
    """The fleet as tasks of this process."""

    def __init__(self, admin: Api, *, server: str, ca_pem: bytes | None, options: FleetOptions):
        self._fleet = Fleet(admin, server=server, ca_pem=ca_pem, options=options)
        self._latency = LeaseLatency()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        metrics.add_observer(self._latency)
        self._task = asyncio.create_task(self._fleet.run())

    async def snapshot(self) -> Snapshot:
        return _snapshot(self._fleet, self._latency)

    async def record(self) -> None:
        self._latency.recording = True

    async def rotate(self) -> None:
        self._fleet.rotate()

    async def stop(self) -> None:
        if self._task is None:
            return
        metrics.remove_observer(self._latency)
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


#: Seconds a child gets to stop its agents before it is killed.
STOP_TIMEOUT = 30.0


@dataclass(frozen=True)
class _Shard:
    kubeconfig: str
    server: str
    ca_pem: bytes | None
    options: FleetOptions


class Shards:
    """The fleet split over ``processes`` child processes (spawned, not forked: the
    parent's event loop and connections must not be copied into them)."""

    def __init__(
        self,
        *,
        kubeconfig: Path,
        server: str,
        ca_pem: bytes | None,
        options: FleetOptions,
        processes: int,
    ) -> None:
        if not 1 <= processes <= options.clusters:
            raise ValueError("--sim-processes must be between 1 and --clusters")
        sizes = [options.clusters // processes] * processes
        for i in range(options.clusters % processes):
            sizes[i] += 1
        self._shards = [
            _Shard(
                str(kubeconfig),
                server,
                ca_pem,
                replace(
                    options,
                    clusters=size,
                    prefix=f"{options.prefix}{index}-",
                    join_rate=options.join_rate / processes,
                ),
            )
            for index, size in enumerate(sizes)
        ]
        self._context = multiprocessing.get_context("spawn")
        self._pipes: list[Connection] = []
        self._processes: list[multiprocessing.process.BaseProcess] = []

    async def start(self) -> None:
        for shard in self._shards:
            parent, child = self._context.Pipe()
            process = self._context.Process(
                target=_shard_main, args=(child, shard), name="pyocm-sim-shard", daemon=True
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)

    async def snapshot(self) -> Snapshot:
        total = Snapshot()
        for part in await self._ask("snapshot"):
            assert isinstance(part, Snapshot)
            total.add(part)
        return total

    async def record(self) -> None:
        await self._ask("record")

    async def rotate(self) -> None:
        await self._ask("rotate")

    async def stop(self) -> None:
        """Ask every child to stop, however the others fare; kill what does not."""
        for pipe in self._pipes:
            with contextlib.suppress(OSError):
                pipe.send("stop")
        for process in self._processes:
            await asyncio.to_thread(process.join, STOP_TIMEOUT)
            if process.is_alive():
                process.kill()
                await asyncio.to_thread(process.join, STOP_TIMEOUT)
        for pipe in self._pipes:
            pipe.close()

    async def _ask(self, command: str) -> list[object]:
        answers = []
        for pipe, process in zip(self._pipes, self._processes, strict=True):
            try:
                pipe.send(command)
            except OSError:
                raise _ended(process) from None
        for pipe, process in zip(self._pipes, self._processes, strict=True):
            try:
                answers.append(await asyncio.to_thread(pipe.recv))
            except (EOFError, OSError):
                raise _ended(process) from None
        return answers


def _ended(process: multiprocessing.process.BaseProcess) -> RuntimeError:
    process.join(1)
    return RuntimeError(f"a simulator process ended (exit code {process.exitcode})")


def _shard_main(pipe: Connection, shard: _Shard) -> None:
    # On uvloop like `pyocm sim`: a shard shares the machine with the hub it measures,
    # and asyncio's TLS, written in Python, would cost it more CPU.
    uvloop.run(_serve_shard(pipe, shard))


async def _serve_shard(pipe: Connection, shard: _Shard) -> None:
    """Run one shard's fleet and answer the parent's commands until told to stop."""
    async with Api.from_kubeconfig(shard.kubeconfig) as admin:
        fleet = InProcess(admin, server=shard.server, ca_pem=shard.ca_pem, options=shard.options)
        await fleet.start()
        try:
            while True:
                command = await asyncio.to_thread(pipe.recv)
                if command == "snapshot":
                    pipe.send(await fleet.snapshot())
                elif command == "record":
                    await fleet.record()
                    pipe.send(None)
                elif command == "rotate":
                    await fleet.rotate()
                    pipe.send(None)
                else:
                    pipe.send(None)
                    return
        finally:
            await fleet.stop()
