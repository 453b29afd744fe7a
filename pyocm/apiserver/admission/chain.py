"""The in-process admission chain.

Every write passes through it twice, as in kube-apiserver: mutating plugins after the
strategy has prepared the object and before validation, validating plugins after
validation and just before the write. Later features (OCM's ManagedCluster and
ManagedClusterSetBinding rules) add plugins here without touching request handling.

A plugin answers an objection by raising :class:`pyocm.kube.status.ApiError`
(usually 403 Forbidden or 422 Invalid).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyocm.apiserver.registry.resources import ResourceInfo
    from pyocm.apiserver.registry.strategy import Context

Obj = dict[str, Any]
#: Told how the write a request was for ended: None when it ended well (stored, or no
#: write was needed: a dry run, an update that changed nothing), else the exception.
Finisher = Callable[[BaseException | None], None]

log = logging.getLogger(__name__)


class Operation(Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


@dataclass(frozen=True)
class Request:
    """What a plugin sees: the operation, the resource, and the objects involved.

    ``obj`` is the object about to be stored (None for DELETE); ``old`` the stored one
    (None for CREATE). Mutating plugins may change ``obj`` in place.
    """

    operation: Operation
    resource: ResourceInfo
    ctx: Context
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None
    finishers: list[Finisher] = field(default_factory=list, repr=False, compare=False)
    #: An admission webhook changed ``obj``: the store then applies again what kube
    #: applies after mutating admission (system fields, namespace, the strategy's
    #: prepare step). In-process plugins are trusted and do not set it, so the hub's
    #: writes pay nothing for it.
    rewritten: bool = field(default=False, repr=False, compare=False)

    @property
    def subresource(self) -> str:
        return self.ctx.subresource

    def mark_rewritten(self) -> None:
        object.__setattr__(self, "rewritten", True)  # the one flag a plugin may set

    def when_finished(self, finisher: Finisher) -> None:
        """Call ``finisher`` once the write this request is for has ended, however it
        ends (kube's registry hooks return such a function from their ``Begin*`` step):
        what a plugin reserved for the write is released there. It must not raise."""
        self.finishers.append(finisher)

    @contextlib.contextmanager
    def finishing(self) -> Iterator[None]:
        """The store runs admission, validation and the write in this block."""
        try:
            yield
        except BaseException as err:
            self._finish(err)
            raise
        self._finish(None)

    def _finish(self, error: BaseException | None) -> None:
        for finisher in self.finishers:
            try:
                finisher(error)
            except Exception:  # the write's own outcome is what the caller must see
                log.exception("admission finisher failed")


class Plugin(Protocol):
    """One admission step. ``handles`` filters cheaply before the async calls."""

    name: str

    def handles(self, request: Request) -> bool: ...

    async def mutate(self, request: Request) -> None: ...

    async def validate(self, request: Request) -> None: ...


class Chain:
    def __init__(self, plugins: list[Plugin] | None = None) -> None:
        self._plugins: list[Plugin] = list(plugins or [])

    def add(self, plugin: Plugin) -> None:
        self._plugins.append(plugin)

    async def mutate(self, request: Request) -> None:
        for plugin in self._plugins:
            if plugin.handles(request):
                await plugin.mutate(request)

    async def validate(self, request: Request) -> None:
        for plugin in self._plugins:
            if plugin.handles(request):
                await plugin.validate(request)


class BasePlugin:
    """Convenience base: a plugin overrides only the steps it needs."""

    name = "base"

    def handles(self, request: Request) -> bool:
        return True

    async def mutate(self, request: Request) -> None:
        return None

    async def validate(self, request: Request) -> None:
        return None
