"""Cluster IPs and node ports of Services, allocated as kube-apiserver's service registry
allocates them.

A Service that needs a cluster IP (any type but ExternalName) gets one from the service
CIDR, ``10.96.0.0/12``, unless it asks for a free one itself or is headless
(``clusterIP: None``); NodePort and LoadBalancer services get a node port per port from
30000-32767. It runs where kube's registry does, between the strategy and validation;
here that is the mutating admission step, the first place a write can read the store.

Uniqueness: the addresses in use are read from the stored Services on each allocation,
under a lock, together with those handed out in the last minutes whose Services may not
be stored yet. Picks are random, from the upper part of the range as kube's dynamic
allocation prefers (the lower 256 addresses are left to services that ask for one).
Nothing routes to these addresses: no kube-proxy runs.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time
from typing import TYPE_CHECKING, Any

from pyocm.apiserver.admission.chain import BasePlugin, Operation, Request
from pyocm.apiserver.registry import codec
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = range(30000, 32768)
#: ``min(max(16, size/16), 256)``: the static band kube's allocator avoids.
_STATIC_BAND = 256
#: How long an address handed out stays reserved while its Service is being written.
_RESERVED_SECONDS = 300.0


class ServiceIPs(BasePlugin):
    """Allocates on create, and on updates that turn a service into one needing values
    it lacks (a ClusterIP service made NodePort gets node ports)."""

    name = "ServiceIPAllocation"

    def __init__(self, state: ServerState, *, rng: random.Random | None = None) -> None:
        self._state = state
        self._lock = asyncio.Lock()
        self._rng = rng or random.Random()
        self._recent_ips: dict[str, float] = {}
        self._recent_ports: dict[int, float] = {}

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
        spec = request.obj.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        async with self._lock:
            self._expire()
            used_ips, used_ports = await self._in_use(request.namespace, request.name)
            # What the service holds already is its own, however recently it was given.
            held = (request.old or {}).get("spec") or {}
            used_ips -= set(held.get("clusterIPs") or [])
            used_ports -= {p.get("nodePort") for p in held.get("ports") or []}
            errors = self._cluster_ip(spec, used_ips) + self._node_ports(spec, used_ports)
        if errors:
            raise status.invalid_object(kind="Service", group="", name=request.name, errors=errors)

    async def _in_use(self, namespace: str, name: str) -> tuple[set[str], set[int]]:
        """Addresses and node ports of every stored Service but this one."""
        info = self._state.catalog.get("", "v1", "services")
        assert info is not None
        _, kvs = await self._state.store.backend.list(info.key_prefix())
        own = info.key(namespace=namespace, name=name)
        ips: set[str] = set(self._recent_ips)
        ports: set[int] = set(self._recent_ports)
        for kv in kvs:
            if kv.key == own:
                continue
            spec = codec.decode(kv).get("spec") or {}
            ips.update(str(ip) for ip in spec.get("clusterIPs") or [] if ip != "None")
            ports.update(int(p["nodePort"]) for p in spec.get("ports") or [] if p.get("nodePort"))
        return ips, ports

    def _expire(self) -> None:
        now = time.monotonic()
        for ip in [k for k, at in self._recent_ips.items() if now - at > _RESERVED_SECONDS]:
            del self._recent_ips[ip]
        for port in [k for k, at in self._recent_ports.items() if now - at > _RESERVED_SECONDS]:
            del self._recent_ports[port]

    def _cluster_ip(self, spec: Obj, used: set[str]) -> list[status.FieldError]:
        wanted = str(spec.get("clusterIP") or "")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if wanted == "None":
            spec["clusterIPs"] = ["None"]
            return []
        if wanted:
            problem = _ip_problem(wanted, used)
            if problem:
                message = f"failed to allocate IP {wanted}: {problem}"
                return [status.invalid("spec.clusterIPs", [wanted], message)]
        else:
            wanted = self._pick_ip(used)
        spec["clusterIP"] = wanted
        spec["clusterIPs"] = [wanted]
        self._recent_ips[wanted] = time.monotonic()
        return []

    def _pick_ip(self, used: set[str]) -> str:
        size = SERVICE_CIDR.num_addresses
        for _ in range(64):
            offset = self._rng.randrange(_STATIC_BAND, size - 1)
            candidate = str(SERVICE_CIDR.network_address + offset)
            if candidate not in used:
                return candidate
        for offset in range(1, size - 1):  # nearly full: scan
            candidate = str(SERVICE_CIDR.network_address + offset)
            if candidate not in used:
                return candidate
        raise status.internal("range is full: no cluster IP is free in " + str(SERVICE_CIDR))

    def _node_ports(self, spec: Obj, used: set[int]) -> list[status.FieldError]:
        kind = spec.get("type")
        needed = kind == "NodePort" or (
            kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False
        )
        errors: list[status.FieldError] = []
        for i, port in enumerate(p for p in spec.get("ports") or [] if isinstance(p, dict)):
            given = port.get("nodePort")
            if given:
                problem = _port_problem(given, used)
                if problem:
                    errors.append(status.invalid(f"spec.ports[{i}].nodePort", given, problem))
                used.add(given)
            elif needed:
                port["nodePort"] = self._pick_port(used)
                used.add(port["nodePort"])
                self._recent_ports[port["nodePort"]] = time.monotonic()
        return errors

    def _pick_port(self, used: set[int]) -> int:
        free = [p for p in NODE_PORTS if p not in used]
        if not free:
            raise status.internal("range is full: no node port is free in 30000-32767")
        return self._rng.choice(free)


def _ip_problem(wanted: str, used: set[str]) -> str:
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
    return "provided IP is already allocated" if wanted in used else ""


def _port_problem(port: Any, used: set[int]) -> str:
    if not isinstance(port, int) or port not in NODE_PORTS:
        return (
            "provided port is not in the valid range. "
            f"The range of valid ports is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}"
        )
    return "provided port is already allocated" if port in used else ""
