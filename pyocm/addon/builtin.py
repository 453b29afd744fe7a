"""The add-ons pyocm itself implements, by name: what ``--addons`` of ``pyocm hub``,
``pyocm controller`` and ``pyocm up`` choose from."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pyocm.addon.agent import AgentAddon
from pyocm.addon.helloworld import ADDON_NAME as HELLOWORLD
from pyocm.addon.helloworld import addon as helloworld
from pyocm.api import kinds as ocm
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

#: Each built-in add-on: how to make it, and its ClusterManagementAddOn.
BUILTIN: Mapping[str, tuple[Callable[[], AgentAddon], Callable[[], dict[str, Any]]]] = {
    HELLOWORLD: (helloworld.Helloworld, helloworld.cluster_management_addon),
}


def addons_named(names: Iterable[str]) -> dict[str, AgentAddon]:
    """The built-in add-ons of these names; ValueError naming any unknown one."""
    unknown = sorted(set(names) - set(BUILTIN))
    if unknown:
        known = ", ".join(sorted(BUILTIN))
        raise ValueError(f"unknown add-on(s) {', '.join(unknown)} (pyocm has: {known})")
    return {name: BUILTIN[name][0]() for name in names}


async def install_cluster_management_addons(api: Api, names: Iterable[str]) -> None:
    """Create each built-in add-on's ClusterManagementAddOn unless one exists (a user's,
    changed since, is left as it is)."""
    for name in names:
        try:
            await api.create(ocm.CLUSTER_MANAGEMENT_ADDON, BUILTIN[name][1]())
        except ApiError as err:
            if err.code != 409:
                raise
