"""The add-ons the framework's controllers serve, as one live mapping by name.

Upstream runs one addon-framework manager per add-on: the Go add-on's own, and one per
template add-on, started and stopped by the add-on manager as ClusterManagementAddOns
come and go (``addontemplate`` controller). pyocm runs each framework controller once
for every add-on: they look add-ons up here at each pass, so a template add-on added
while they run is served from its next event on. :meth:`AddonRegistry.add` also tells
the listeners, which wake the add-on's existing ManagedClusterAddOns (upstream's
``Trigger`` when a template manager starts).

Add-ons pyocm implements in code (``fixed``) are always there; a template add-on of
the same name is refused, where upstream would run two managers fighting over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from pyocm.addon.agent import BUILT_IN_CONFIGS, AgentAddon, ConfigGVR

Listener = Callable[[str], None]


class AddonRegistry(Mapping[str, AgentAddon]):
    def __init__(
        self,
        fixed: Mapping[str, AgentAddon] | None = None,
        *,
        dynamic_configs: Sequence[ConfigGVR] = BUILT_IN_CONFIGS,
    ) -> None:
        """``dynamic_configs``: the config kinds add-ons added later may read (the
        framework's built-in ones for template add-ons), watched from the start."""
        self._fixed = dict(fixed or {})
        self._dynamic: dict[str, AgentAddon] = {}
        self._dynamic_configs = tuple(dynamic_configs)
        self._listeners: list[Listener] = []

    def __getitem__(self, name: str) -> AgentAddon:
        found = self._fixed.get(name) or self._dynamic.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        yield from self._fixed
        yield from (n for n in list(self._dynamic) if n not in self._fixed)

    def __len__(self) -> int:
        return len(self._fixed) + len(self._dynamic.keys() - self._fixed.keys())

    def is_fixed(self, name: str) -> bool:
        return name in self._fixed

    def add(self, addon: AgentAddon) -> None:
        """Serve ``addon`` from now on; raises ValueError for a name pyocm implements
        or one already served."""
        name = addon.options().name
        if name in self._fixed or name in self._dynamic:
            raise ValueError(f"an agent is added for the addon {name} already")
        self._dynamic[name] = addon
        for listener in list(self._listeners):
            listener(name)

    def remove(self, name: str) -> None:
        self._dynamic.pop(name, None)

    def on_added(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def config_gvrs(self) -> list[ConfigGVR]:
        """Every config kind an add-on served now or later may read."""
        found: dict[tuple[str, str], ConfigGVR] = {}
        for gvr in _chain(
            (c for a in self._fixed.values() for c in a.options().supported_configs),
            self._dynamic_configs,
        ):
            found.setdefault((gvr.group, gvr.resource), gvr)
        return list(found.values())


def _chain(*parts: Iterable[ConfigGVR]) -> Iterator[ConfigGVR]:
    for part in parts:
        yield from part
