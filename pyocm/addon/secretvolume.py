"""An add-on agent's issued credential as its pod would see it, for agents run as plain
processes: the registration's Secret on the managed cluster (``<addon>-hub-kubeconfig``:
``kubeconfig``, ``tls.crt``, ``tls.key``, ...) written out as files in a private
directory, as a Secret volume mounts it, and written again when the Secret changes (the
certificate rotates). pyocm's embedded managed clusters have no kubelet to mount it.

:func:`run_with_secret` runs an agent with the files and restarts it on each change, so
the agent always talks to the hub with the certificate it was last issued.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

log = logging.getLogger(__name__)
#: How often the Secret is read again (a kubelet refreshes Secret volumes about every minute).
POLL_SECONDS = 10.0


class SecretVolume:
    """The Secret ``namespace/name`` on ``spoke``, as files in ``directory``."""

    def __init__(self, spoke: Api, *, namespace: str, name: str, directory: Path) -> None:
        self.spoke, self.namespace, self.name = spoke, namespace, name
        self.directory = directory
        self._written: dict[str, bytes] | None = None

    async def refresh(self) -> bool:
        """Write the Secret's keys out if they changed since the last write; whether
        they did. A missing Secret changes nothing (the agent waits for it)."""
        try:
            secret = await self.spoke.get(kinds.SECRET, self.name, namespace=self.namespace)
        except ApiError as err:
            if err.code == 404:
                return False
            raise
        data = {key: base64.b64decode(value) for key, value in (secret.get("data") or {}).items()}
        if data == self._written:
            return False
        self._write(data)
        self._written = data
        return True

    @property
    def ready(self) -> bool:
        return bool(self._written)

    def _write(self, data: dict[str, bytes]) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.directory.chmod(0o700)  # one that existed keeps no wider mode
        for key, value in data.items():
            # Each file replaced whole, so a reader never sees half a key.
            partial = self.directory / f".{key}.new"
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(value)
            partial.replace(self.directory / key)
        for stale in self.directory.iterdir():
            if stale.name not in data and not stale.name.startswith("."):
                stale.unlink()


async def run_with_secret(
    volume: SecretVolume,
    agent: Callable[[Path], Coroutine[Any, Any, None]],
    *,
    clock: Clock | None = None,
    poll: float = POLL_SECONDS,
) -> None:
    """Wait for the Secret, then run ``agent(directory)`` and restart it whenever the
    Secret changes, until cancelled."""
    clock = clock or RealClock()
    running: asyncio.Task[None] | None = None
    try:
        while True:
            if await volume.refresh() or (running is not None and running.done()):
                running = await _restart(running, agent, volume)
            await clock.sleep(poll)
    finally:
        if running is not None:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)


async def _restart(
    running: asyncio.Task[None] | None,
    agent: Callable[[Path], Coroutine[Any, Any, None]],
    volume: SecretVolume,
) -> asyncio.Task[None]:
    if running is not None:
        running.cancel()
        outcome = await asyncio.gather(running, return_exceptions=True)
        if outcome and isinstance(outcome[0], Exception):
            log.warning("add-on agent stopped: %s; starting it again", outcome[0])
    log.info("starting the add-on agent with the credential in %s", volume.directory)
    return asyncio.create_task(agent(volume.directory), name="add-on agent")
