"""client-go's ``retry.RetryOnConflict``: redo a read-modify-write that lost a race.

Controllers rarely need it (a Conflict requeues the key, and the next reconcile reads
afresh); it is for one-shot writers outside a work queue: commands, bootstraps, agents.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from pyocm.base.backoff import DEFAULT_RETRY, Backoff, retry
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError

T = TypeVar("T")


def is_conflict(err: Exception) -> bool:
    """Whether ``err`` is the API's 409 Conflict."""
    return isinstance(err, ApiError) and err.code == 409


async def retry_on_conflict(
    call: Callable[[], Awaitable[T]], *, clock: Clock, backoff: Backoff = DEFAULT_RETRY
) -> T:
    """``await call()``, again after each Conflict while ``backoff`` has steps left.

    ``call`` reads the object itself each time::

        async def label() -> Obj:
            cluster = await api.get(kinds.MANAGED_CLUSTER, name)
            cluster["metadata"].setdefault("labels", {})["team"] = "a"
            return await api.update(kinds.MANAGED_CLUSTER, cluster)

        await retry_on_conflict(label, clock=clock)
    """
    return await retry(call, retriable=is_conflict, clock=clock, backoff=backoff)
