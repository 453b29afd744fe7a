"""The AppliedManifestWork CRD on the managed cluster.

Upstream's klusterlet operator puts it there before it starts the work agent; pyocm has
no operator, so the klusterlet (and ``pyocm work-agent``) installs it, as the operator
would: created when missing, its spec put back when it differs, and waited for until
Established.
"""

from __future__ import annotations

from typing import Any

from pyocm.api import conditions, crds, work_v1
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.retry import retry_on_conflict

Obj = dict[str, Any]


class CrdNotEstablished(RuntimeError):
    pass


def applied_work_crd() -> Obj:
    return crds.render([work_v1.APPLIED_MANIFEST_WORK])


async def ensure_applied_work_crd(
    api: Api, *, clock: Clock | None = None, timeout: float = 30.0, poll: float = 0.1
) -> None:
    """Install or update the AppliedManifestWork CRD on ``api``'s cluster and wait
    until it is Established (raising :class:`CrdNotEstablished` after ``timeout``)."""
    clock = clock or RealClock()
    wanted = applied_work_crd()
    name = wanted["metadata"]["name"]
    current = await retry_on_conflict(lambda: _put(api, wanted), clock=clock)
    waited = 0.0
    while not conditions.is_true(conditions.of(current), "Established"):
        if waited >= timeout:
            raise CrdNotEstablished(f"CRD {name} not established after {timeout:.0f}s")
        await clock.sleep(poll)
        waited += poll
        current = await api.get(kinds.CRD, name)


async def _put(api: Api, wanted: Obj) -> Obj:
    """The CRD as stored once it serves ``wanted``'s spec (fields the server defaults,
    which ``wanted`` leaves out, are not differences)."""
    name = wanted["metadata"]["name"]
    try:
        current = await api.get(kinds.CRD, name)
    except ApiError as err:
        if err.code != 404:
            raise
        try:
            return await api.create(kinds.CRD, wanted)
        except ApiError as created:
            if created.code != 409:  # another agent made it first: look again
                raise
            current = await api.get(kinds.CRD, name)
    spec = current.get("spec") or {}
    if all(spec.get(key) == value for key, value in wanted["spec"].items()):
        return current
    meta = {**wanted["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
    return await api.update(kinds.CRD, {**wanted, "metadata": meta})
