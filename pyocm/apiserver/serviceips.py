"""Cluster IPs and node ports of Services, allocated as kube-apiserver's service registry
allocates them.

A Service that needs a cluster IP (any type but ExternalName) gets one from the service
CIDR, ``10.96.0.0/12``, unless it asks for a free one itself or is headless
(``clusterIP: None``); NodePort and LoadBalancer services get a node port per port from
30000-32767. It runs where kube's registry does, between the strategy and validation;
here that is the mutating admission step. Picks are random, from the upper part of each
range as kube's dynamic allocation prefers: the lower band (256 addresses, 86 node ports,
30000-30085) is left to services that ask for a value, and given only once the rest is
taken, so a port asked for there does not collide with one handed out before. Nothing
routes to these addresses: no kube-proxy runs.

What is in use is kept in memory, as kube keeps its allocation bitmaps, so a write costs
the same with 10 Services stored or 10,000:

- **Stored**: the values every stored Service holds, loaded once by :meth:`start` and
  then kept equal to storage by a commit hook (as the RBAC index is, see
  :mod:`rbacfeed`). Every path that writes or deletes a Service (an update, a delete,
  the garbage collector, namespace deletion, deletecollection, an update that removes
  the last finalizer) is a storage commit, so what a Service gave up is free for the
  very next request, as kube's allocators free it (no quarantine).
- **Reserved**: values handed to a write that is still in flight, so that two writes
  cannot be given the same one. A reservation ends when the write does (the store calls
  the request's finisher): stored, it is by then a stored value; failed (validation,
  a conflict, a taken name, storage unavailable), it is free again. A dry run reserves
  nothing. A write cancelled while in flight may still land, so its reservation is kept
  for :data:`HOLD_SECONDS` instead.

Shared storage (several API server replicas on one etcd): commit hooks see every
replica's writes, so what is stored is known everywhere, but reservations are per
process. As kube stores its allocation with compare-and-swap, a replica then also
claims each value it gives in storage (:mod:`serviceclaims`) before the write goes
on; a value another replica's write has claimed is picked again (or, asked for,
refused as allocated). Storage holding duplicates (from older data) is still tracked
exactly: a value is free once no stored Service holds it.
"""

from __future__ import annotations

import asyncio
import copy
import ipaddress
import random
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pyocm.apiserver import serviceclaims
from pyocm.apiserver.admission.chain import BasePlugin, Operation, Request
from pyocm.apiserver.registry import codec
from pyocm.apiserver.storage.errors import StorageError
from pyocm.apiserver.storage.interface import Event, EventType, KeyValue
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]
V = TypeVar("V", str, int)
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = range(30000, 32768)
#: ``min(max(16, size/16), 256)``: the static band kube's allocator avoids.
_STATIC_BAND = 256
#: ``min(max(16, size/32), 128)``: the node ports kube's allocator gives last (its
#: portallocator's calculateRangeOffset; 86 for the default range).
_PORT_STATIC_BAND = min(max(16, len(NODE_PORTS) // 32), 128)
#: Random picks tried before scanning the range (only a nearly full range gets there).
_RANDOM_TRIES = 64
#: How long the values of a write cancelled in flight stay reserved: its outcome is
#: unknown to the canceller, and a store write is never called back.
HOLD_SECONDS = 300.0
#: Allocations tried when other replicas' writes claim the values picked first.
CLAIM_ATTEMPTS = 8
#: How long a value another replica claimed is not picked here: its write ends within
#: moments, and then a stored Service holds it or it is free again.
FOREIGN_SECONDS = 5.0


@dataclass(frozen=True)
class Holding:
    """The cluster IPs and node ports one stored Service holds."""

    ips: frozenset[str] = frozenset()
    ports: frozenset[int] = frozenset()

    @classmethod
    def of(cls, obj: Obj) -> Holding:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return cls()
        ips = [ip for ip in spec.get("clusterIPs") or [] if isinstance(ip, str) and ip != "None"]
        ports = [
            p["nodePort"]
            for p in spec.get("ports") or []
            if isinstance(p, dict) and isinstance(p.get("nodePort"), int) and p["nodePort"]
        ]
        return cls(frozenset(ips), frozenset(ports))


class _Owners(Generic[V]):
    """Which stored Services (by storage key) hold each value: one, unless storage holds
    duplicates."""

    def __init__(self) -> None:
        self._by_value: dict[V, set[str]] = {}

    def add(self, value: V, key: str) -> None:
        self._by_value.setdefault(value, set()).add(key)

    def remove(self, value: V, key: str) -> None:
        owners = self._by_value.get(value)
        if owners is not None:
            owners.discard(key)
            if not owners:
                del self._by_value[value]

    def held_by_any(self, value: V) -> bool:
        return value in self._by_value

    def held_by_other(self, value: V, key: str) -> bool:
        owners = self._by_value.get(value)
        return owners is not None and (len(owners) > 1 or key not in owners)

    def __len__(self) -> int:
        return len(self._by_value)


@dataclass(eq=False)
class _Reservation:
    """What one write in flight was given."""

    ips: list[str] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    claimed: serviceclaims.Claimed = field(default_factory=serviceclaims.Claimed)


class ServiceIPs(BasePlugin):
    """Allocates on create, and on updates that turn a service into one needing values
    it lacks (a ClusterIP service made NodePort gets node ports). :meth:`start` must
    have completed before the first Service write."""

    name = "ServiceIPAllocation"

    def __init__(
        self,
        state: ServerState,
        *,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        shared: bool = False,
    ) -> None:
        """``shared``: other API servers write to the same store (etcd)."""
        self._state = state
        self._rng = rng or random.Random()
        self._clock = clock or RealClock()
        self._prefix = ""
        #: Commits seen while :meth:`start` lists the store; None once started.
        self._early: list[Event] | None = []
        self._held: dict[str, Holding] = {}
        self._ips: _Owners[str] = _Owners()
        self._ports: _Owners[int] = _Owners()
        self._reserved_ips: dict[str, _Reservation] = {}
        self._reserved_ports: dict[int, _Reservation] = {}
        self._kept: deque[tuple[float, _Reservation]] = deque()
        #: On shared storage: claims in storage, and the values other replicas' writes
        #: were found to have claimed (until when they are not picked here).
        self._claims = serviceclaims.Claims(state.store.backend) if shared else None
        self._foreign: dict[str | int, float] = {}
        self._releasing: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Learn every stored Service's values, then follow storage commits.

        The hook is added before the list, and commits newer than the listed snapshot
        are applied after it, so no write is missed even if one lands meanwhile."""
        if self._prefix:
            raise RuntimeError("ServiceIPs.start() was called twice")
        info = self._state.catalog.get("", "v1", "services")
        assert info is not None
        self._prefix = info.key_prefix()
        backend = self._state.store.backend
        backend.add_commit_hook(self._on_commit)
        revision, kvs = await backend.list(self._prefix)
        for kv in kvs:
            self._record(kv.key, kv)
        early, self._early = self._early or [], None
        for event in early:
            if event.revision > revision:
                self._apply(event)

    @property
    def allocated(self) -> tuple[int, int]:
        """How many cluster IPs and node ports stored Services hold."""
        return len(self._ips), len(self._ports)

    def handles(self, request: Request) -> bool:
        resource = request.resource
        return (
            resource.group == ""
            and resource.plural == "services"
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and request.subresource == ""
        )

    async def mutate(self, request: Request) -> None:
        assert request.obj is not None
        if self._early is not None:
            raise RuntimeError("ServiceIPs.start() has not completed")
        spec = request.obj.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        if self._claims is None:
            self._allocate(request, spec)
            return
        asked = copy.deepcopy(spec)
        for _ in range(CLAIM_ATTEMPTS):
            taken = self._allocate(request, spec)
            if taken is None or await self._claim(taken):
                return
            spec.clear()  # picked values another replica claimed meanwhile: again
            spec.update(copy.deepcopy(asked))
        raise status.internal("failed to allocate: other API servers claimed every value tried")

    def _allocate(self, request: Request, spec: Obj) -> _Reservation | None:
        """Give the write its values and reserve them here (None: nothing reserved)."""
        self._expire()
        # Nothing below awaits: the checks and the reservation are one step.
        key = request.resource.key(namespace=request.namespace, name=request.name)
        # What the service holds already is its own, however recently it was given.
        own = Holding.of(request.old or {})
        taken = _Reservation()
        errors = self._cluster_ip(spec, key, own, taken)
        errors += self._node_ports(spec, key, own, taken)
        if errors:
            raise status.invalid_object(kind="Service", group="", name=request.name, errors=errors)
        if request.ctx.dry_run or not (taken.ips or taken.ports):
            return None
        for ip in taken.ips:
            self._reserved_ips[ip] = taken
        for port in taken.ports:
            self._reserved_ports[port] = taken
        request.when_finished(lambda error: self._finished(taken, error))
        return taken

    async def _claim(self, taken: _Reservation) -> bool:
        """Claim ``taken``'s values in shared storage. False (claims dropped, values
        released here and kept from picks for a moment) if another replica holds one:
        claimed by a write in flight, or, learnt once the claim made this process
        current up to it, by a Service stored meanwhile."""
        assert self._claims is not None
        values: list[tuple[str | int, str]] = [
            *((ip, serviceclaims.ip_key(ip)) for ip in taken.ips),
            *((port, serviceclaims.port_key(port)) for port in taken.ports),
        ]
        try:
            lost = [
                value
                for value, key in values
                if not await self._claims.claim(key, taken.claimed) or self._stored_elsewhere(value)
            ]
        except StorageError as err:  # the write cannot be made either: as the store says it
            self._release(taken)
            await self._claims.release(taken.claimed)
            raise status.ApiError(
                code=503, reason="ServiceUnavailable", message=f"storage unavailable: {err}"
            ) from None
        if not lost:
            return True
        until = self._clock.monotonic() + FOREIGN_SECONDS
        for value in lost:
            self._foreign[value] = until
        self._release(taken)
        await self._claims.release(taken.claimed)
        return False

    def _stored_elsewhere(self, value: str | int) -> bool:
        if isinstance(value, str):
            return self._ips.held_by_any(value)
        return self._ports.held_by_any(value)

    # --- what is stored ------------------------------------------------------------

    def _on_commit(self, events: list[Event]) -> None:
        for event in events:
            if not event.kv.key.startswith(self._prefix):
                continue
            if self._early is not None:
                self._early.append(event)
            else:
                self._apply(event)

    def _apply(self, event: Event) -> None:
        self._record(event.kv.key, None if event.type is EventType.DELETE else event.kv)

    def _record(self, key: str, kv: KeyValue | None) -> None:
        """``key`` is now stored as ``kv`` (None: deleted)."""
        new = Holding.of(codec.decode(kv)) if kv is not None else Holding()
        old = self._held.pop(key, Holding())
        if new.ips or new.ports:
            self._held[key] = new
        for ip in old.ips - new.ips:
            self._ips.remove(ip, key)
        for port in old.ports - new.ports:
            self._ports.remove(port, key)
        for ip in new.ips - old.ips:
            self._ips.add(ip, key)
        for port in new.ports - old.ports:
            self._ports.add(port, key)

    # --- writes in flight ----------------------------------------------------------

    def _finished(self, taken: _Reservation, error: BaseException | None) -> None:
        if isinstance(error, asyncio.CancelledError):
            # Its claims in storage stay too, and expire as this hold does.
            self._kept.append((self._clock.monotonic() + HOLD_SECONDS, taken))
            return
        self._release(taken)
        if self._claims is not None and taken.claimed.keys:
            task = asyncio.get_running_loop().create_task(self._claims.release(taken.claimed))
            self._releasing.add(task)
            task.add_done_callback(self._releasing.discard)

    def _expire(self) -> None:
        now = self._clock.monotonic()
        while self._kept and self._kept[0][0] <= now:
            self._release(self._kept.popleft()[1])

    def _release(self, taken: _Reservation) -> None:
        for ip in taken.ips:
            if self._reserved_ips.get(ip) is taken:
                del self._reserved_ips[ip]
        for port in taken.ports:
            if self._reserved_ports.get(port) is taken:
                del self._reserved_ports[port]

    def _ip_taken(self, ip: str, key: str) -> bool:
        return ip in self._reserved_ips or self._ips.held_by_other(ip, key) or self._is_foreign(ip)

    def _port_taken(self, port: int, key: str) -> bool:
        return (
            port in self._reserved_ports
            or self._ports.held_by_other(port, key)
            or self._is_foreign(port)
        )

    def _is_foreign(self, value: str | int) -> bool:
        until = self._foreign.get(value)
        if until is None:
            return False
        if until <= self._clock.monotonic():
            del self._foreign[value]
            return False
        return True

    # --- allocation ----------------------------------------------------------------

    def _cluster_ip(
        self, spec: Obj, key: str, own: Holding, taken: _Reservation
    ) -> list[status.FieldError]:
        wanted = str(spec.get("clusterIP") or "")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if wanted == "None":
            spec["clusterIPs"] = ["None"]
            return []
        if wanted:
            problem = _ip_problem(wanted) or (
                "provided IP is already allocated"
                if wanted not in own.ips and self._ip_taken(wanted, key)
                else ""
            )
            if problem:
                message = f"failed to allocate IP {wanted}: {problem}"
                return [status.invalid("spec.clusterIPs", [wanted], message)]
        else:
            wanted = self._pick_ip(key)
        spec["clusterIP"] = wanted
        spec["clusterIPs"] = [wanted]
        if wanted not in own.ips:
            taken.ips.append(wanted)
        return []

    def _pick_ip(self, key: str) -> str:
        size = SERVICE_CIDR.num_addresses
        base = SERVICE_CIDR.network_address
        for _ in range(_RANDOM_TRIES):
            candidate = str(base + self._rng.randrange(_STATIC_BAND, size - 1))
            if not self._ip_taken(candidate, key):
                return candidate
        for offset in range(1, size - 1):  # nearly full: scan
            candidate = str(base + offset)
            if not self._ip_taken(candidate, key):
                return candidate
        raise status.internal("range is full: no cluster IP is free in " + str(SERVICE_CIDR))

    def _node_ports(
        self, spec: Obj, key: str, own: Holding, taken: _Reservation
    ) -> list[status.FieldError]:
        kind = spec.get("type")
        needed = kind == "NodePort" or (
            kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
        )
        errors: list[status.FieldError] = []
        chosen: set[int] = set()  # this service's, so far
        for i, port in enumerate(p for p in spec.get("ports") or [] if isinstance(p, dict)):
            given = port.get("nodePort")
            if given:
                problem = _port_problem(given) or (
                    "provided port is already allocated"
                    if given in chosen or (given not in own.ports and self._port_taken(given, key))
                    else ""
                )
                if problem:
                    errors.append(status.invalid(f"spec.ports[{i}].nodePort", given, problem))
                    continue
                chosen.add(given)
            elif needed:
                port["nodePort"] = given = self._pick_port(key, chosen)
                chosen.add(given)
            else:
                continue
            if given not in own.ports:
                taken.ports.append(given)
        return errors

    def _pick_port(self, key: str, chosen: set[int]) -> int:
        def free(port: int) -> bool:
            return port not in chosen and not self._port_taken(port, key)

        dynamic = range(NODE_PORTS.start + _PORT_STATIC_BAND, NODE_PORTS.stop)
        for _ in range(_RANDOM_TRIES):
            candidate = self._rng.randrange(dynamic.start, dynamic.stop)
            if free(candidate):
                return candidate
        # Nearly full: scan the upper band, then the static one.
        static = range(NODE_PORTS.start, dynamic.start)
        left = [p for p in dynamic if free(p)] or [p for p in static if free(p)]
        if not left:
            raise status.internal("range is full: no node port is free in 30000-32767")
        return self._rng.choice(left)


def _ip_problem(wanted: str) -> str:
    try:
        address = ipaddress.ip_address(wanted)
    except ValueError:
        return "the provided IP is not a valid IP address"
    if address not in SERVICE_CIDR or address in (
        SERVICE_CIDR.network_address,
        SERVICE_CIDR.broadcast_address,
    ):
        return (
            f"the provided IP ({wanted}) is not in the valid range. "
            f"The range of valid IPs is {SERVICE_CIDR}"
        )
    return ""


def _port_problem(port: Any) -> str:
    if not isinstance(port, int) or port not in NODE_PORTS:
        return (
            "provided port is not in the valid range. "
            f"The range of valid ports is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}"
        )
    return ""
