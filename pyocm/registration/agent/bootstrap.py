"""The bootstrap kubeconfig: given directly, or read from a Secret and followed.

Upstream restarts its agent when the bootstrap Secret's data changes or the Secret goes
(ocm-behaviour.md 1.3, step 4); :meth:`BootstrapSource.changed` is that signal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from pyocm.base.clock import Clock
from pyocm.registration.agent import credentials
from pyocm.registration.agent.errors import AgentError
from pyocm.registration.agent.managed import ManagedSide


class BootstrapSource:
    """Where the bootstrap kubeconfig comes from, and the hub it names."""

    def __init__(
        self,
        *,
        given: Mapping[str, Any] | None,
        managed: ManagedSide,
        secret: str,
        check_every: float,
        clock: Clock,
        report: Callable[[str], None],
    ) -> None:
        # None: read it from ``secret``, and follow that Secret's changes.
        self._given = dict(given) if given is not None else None
        self.kubeconfig: dict[str, Any] = dict(given) if given is not None else {}
        self._hub = credentials.Hub.from_bootstrap(self.kubeconfig) if given is not None else None
        self._managed = managed
        self._secret = secret
        self._check_every = check_every
        self._clock = clock
        self._report = report

    @property
    def hub(self) -> credentials.Hub:
        """The hub the bootstrap kubeconfig names (loaded by :meth:`load`)."""
        if self._hub is None:
            raise AgentError("no bootstrap kubeconfig has been loaded yet")
        return self._hub

    async def load(self) -> None:
        """Read the kubeconfig from its Secret (unless one was given), waiting for the
        Secret to exist."""
        if self._given is not None:
            return
        while True:
            found = await self._managed.load_bootstrap(self._secret)
            if found is not None:
                try:
                    self._hub = credentials.Hub.from_bootstrap(found)
                except ValueError as err:
                    raise AgentError(
                        f"the bootstrap secret {self._secret} holds no usable kubeconfig: {err}"
                    ) from None
                self.kubeconfig = found
                return
            self._report(f"waiting for the bootstrap secret {self._secret}")
            await self._clock.sleep(self._check_every)

    async def changed(self) -> None:
        """Return when the Secret's kubeconfig changes or goes; never, for a kubeconfig
        given directly."""
        if self._given is not None:
            await asyncio.Event().wait()
        while True:
            await self._clock.sleep(self._check_every)
            found = await self._managed.load_bootstrap(self._secret)
            if found != self.kubeconfig:
                return
