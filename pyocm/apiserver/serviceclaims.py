"""Claims in shared storage on the cluster IPs and node ports of writes in flight, so
API server replicas on one etcd never give one value to two Services.

Each replica knows every stored Service (commit hooks see every replica's writes) and
its own writes in flight; what it cannot see is another replica's write in flight.
kube-apiserver closes that gap by keeping the allocation in etcd and changing it with
compare-and-swap (the RangeAllocation bitmaps under ``/registry/ranges/``, or, with
the MultiCIDRServiceAllocator feature, one IPAddress object per address, created only
if absent). pyocm does it the latter's way: a value given to a write is first claimed by creating
``/registry/ranges/serviceips/<ip>`` or ``/registry/ranges/servicenodeports/<port>``,
which fails if another replica's write holds it. The claim is dropped once the write
has ended: by then a stored Service holds the value, and every replica has seen it
before it can claim the value again (a writer of etcd is answered only once its
revision came back through its own watch, hooks included, and the claim's revision
is after that Service's).

A replica that dies with claims outstanding leaves them behind; each carries the wall
time after which another replica may take it over (:data:`CLAIM_SECONDS`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import orjson

from pyocm.apiserver.storage.errors import Conflict, KeyExists, KeyNotFound, StorageError
from pyocm.apiserver.storage.interface import Backend

IPS = "/registry/ranges/serviceips/"
PORTS = "/registry/ranges/servicenodeports/"
#: How long a claim stands without its replica: longer than any write takes (the store
#: gives up on a write well before), as long as a write cancelled in flight is held.
CLAIM_SECONDS = 300.0


@dataclass
class Claimed:
    """The claims one write holds: key -> the claim's revision."""

    keys: dict[str, int] = field(default_factory=dict)


class Claims:
    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    async def claim(self, key: str, into: Claimed) -> bool:
        """Claim ``key`` for the write ``into`` is for; False if another write holds it."""
        value = orjson.dumps({"expires": time.time() + CLAIM_SECONDS})
        for _ in range(3):
            try:
                kv = await self._backend.create(key, value)
            except KeyExists:
                current = await self._backend.get(key)
                if current is not None and not _expired(current.value):
                    return False
                if current is not None:  # its replica is gone: take it over
                    with contextlib.suppress(KeyNotFound, Conflict):
                        await self._backend.delete(key, expected_revision=current.mod_revision)
                continue
            into.keys[key] = kv.mod_revision
            return True
        return False

    async def release(self, claimed: Claimed) -> None:
        """Drop the claims (each only if still ours); one that cannot be dropped now
        expires."""
        for key, revision in list(claimed.keys.items()):
            with contextlib.suppress(StorageError):
                await self._backend.delete(key, expected_revision=revision)
            claimed.keys.pop(key, None)


def ip_key(ip: str) -> str:
    return IPS + ip


def port_key(port: int) -> str:
    return f"{PORTS}{port}"


def _expired(value: bytes) -> bool:
    try:
        expires = float(orjson.loads(value)["expires"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return True  # not a claim this code wrote
    return expires <= time.time()
