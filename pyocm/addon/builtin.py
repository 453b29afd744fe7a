"""The add-ons pyocm itself implements, by name: what ``--addons`` of ``pyocm hub``,
``pyocm controller`` and ``pyocm up`` choose from.

Besides ``helloworld``, any ``helloworld-<suffix>`` (a DNS label) is a test add-on: the
helloworld add-on under that name, with its own ClusterManagementAddOn, registration,
hub permissions and agent objects. ``pyocm bench fleet --scenario addons`` enables three
add-ons on every cluster this way, pyocm having only one add-on of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pyocm.addon.agent import AgentAddon
from pyocm.addon.helloworld import ADDON_NAME as HELLOWORLD
from pyocm.addon.helloworld import addon as helloworld
from pyocm.api import kinds as ocm
from pyocm.kube import names as kube_names
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

#: Each built-in add-on: how to make it, and its ClusterManagementAddOn.
BUILTIN: Mapping[str, tuple[Callable[[], AgentAddon], Callable[[], dict[str, Any]]]] = {
    HELLOWORLD: (helloworld.Helloworld, helloworld.cluster_management_addon),
}


def is_helloworld(name: str) -> bool:
    """Whether ``name`` is helloworld or one of its test copies (``helloworld-<suffix>``)."""
    if name == HELLOWORLD:
        return True
    return name.startswith(f"{HELLOWORLD}-") and not kube_names.is_dns1123_label(name)


def addons_named(names: Iterable[str]) -> dict[str, AgentAddon]:
    """The built-in add-ons of these names; ValueError naming any unknown one."""
    unknown = sorted(name for name in set(names) if name not in BUILTIN and not is_helloworld(name))
    if unknown:
        known = ", ".join(sorted(BUILTIN))
        raise ValueError(f"unknown add-on(s) {', '.join(unknown)} (pyocm has: {known})")
    return {name: _make(name) for name in names}


def _make(name: str) -> AgentAddon:
    if name in BUILTIN:
        return BUILTIN[name][0]()
    return helloworld.Helloworld(name=name)


def _cluster_management_addon(name: str) -> dict[str, Any]:
    if name in BUILTIN:
        return BUILTIN[name][1]()
    return helloworld.cluster_management_addon(name)


async def install_cluster_management_addons(api: Api, names: Iterable[str]) -> None:
    """Create each built-in add-on's ClusterManagementAddOn unless one exists (a user's,
    changed since, is left as it is)."""
    for name in names:
        try:
            await api.create(ocm.CLUSTER_MANAGEMENT_ADDON, _cluster_management_addon(name))
        except ApiError as err:
            if err.code != 409:
                raise
