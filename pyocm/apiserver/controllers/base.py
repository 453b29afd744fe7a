"""A small keyed work loop for the server's own controllers.

These controllers are part of the server (as kube-controller-manager's are part of a
cluster), so they read and write through the generic store directly. Keys are
de-duplicated while queued; a failed key is retried after a delay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.kube import status

SYSTEM = UserInfo(name="system:kube-controller-manager", groups=(MASTERS,))
log = logging.getLogger("pyocm.apiserver.controllers")


class KeyedLoop:
    """Runs ``reconcile(key)`` for queued keys, one at a time, each key at most once
    in the queue. ``reconcile`` returns seconds after which to look again, or None."""

    def __init__(
        self,
        name: str,
        reconcile: Callable[[str], Awaitable[float | None]],
        *,
        retry_after: float = 1.0,
    ) -> None:
        self.name = name
        self._reconcile = reconcile
        self._retry_after = retry_after
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()

    def add(self, key: str) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            if handle is not None:
                self._timers.discard(handle)
            self.add(key)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            key = await self._queue.get()
            self._queued.discard(key)
            try:
                again = await self._reconcile(key)
            except status.ApiError as err:
                if err.reason != "NotFound":
                    log.info("%s: %s: %s", self.name, key, err.message)
                    self.add_after(key, self._retry_after)
                continue
            except Exception:
                log.exception("%s: reconciling %s failed", self.name, key)
                self.add_after(key, self._retry_after)
                continue
            if again is not None:
                self.add_after(key, again)
