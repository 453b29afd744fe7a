"""A CMA's ``status.defaultConfigReferences`` and ``installProgressions`` (upstream
``cmainstallprogression``).

Every CMA gets one default config reference per default config naming one (the spec
hash kept from the status, where the config-hash controller writes it). A CMA installed
Manually has no install progressions; one the add-on manager manages with Placements
gets one per strategy placement: the defaults, overridden per group-resource by the
placement's own configs, sorted by group then resource, keeping the hashes, last
applied and last known good configs and the conditions already recorded for the same
configs. A self-managed CMA's progressions are left to its own manager.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.addon.hub import common, refs
from pyocm.api import kinds as ocm
from pyocm.api import models
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

CONTROLLER_NAME = "cma-install-progression-controller"
Obj = dict[str, Any]


def default_config_references(
    default_configs: Sequence[Mapping[str, Any]], existing: Sequence[Mapping[str, Any]]
) -> list[Obj]:
    """``setDefaultConfigReference``."""
    hashes = {
        (refs.gr_of(e), refs.referent_of(e.get("desiredConfig"))): (e.get("desiredConfig") or {})
        for e in existing
    }
    found: list[Obj] = []
    for config in default_configs:
        if not refs.has_default(config):
            continue
        gr, referent = refs.gr_of(config), refs.referent_of(config)
        old = hashes.get((gr, referent), {})
        found.append(
            {
                "group": gr[0],
                "resource": gr[1],
                "desiredConfig": refs.spec_hash(referent, old.get("specHash") or ""),
            }
        )
    return found


def install_progressions(
    default_configs: Sequence[Mapping[str, Any]],
    placements: Sequence[Mapping[str, Any]],
    existing: Sequence[Mapping[str, Any]],
) -> list[Obj]:
    """``setInstallProgression``."""
    base = refs.defaults(default_configs)
    found: list[Obj] = []
    for placement in placements:
        desired = refs.override(base, placement.get("configs") or [])
        config_refs: list[Obj] = [
            {"group": gr[0], "resource": gr[1], "desiredConfig": refs.spec_hash(referent)}
            for gr in refs.sorted_grs(desired)
            for referent in desired[gr]
        ]
        progression: Obj = {"name": placement["name"], "namespace": placement["namespace"]}
        if config_refs:
            progression["configReferences"] = config_refs
        old = _matching(progression, existing)
        if old is not None:
            _merge(progression, old)
        found.append(progression)
    return found


def _identity(ref: Mapping[str, Any]) -> tuple[refs.GR, refs.Referent]:
    return refs.gr_of(ref), refs.referent_of(ref.get("desiredConfig"))


def _matching(new: Obj, existing: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """``findInstallProgression``: the recorded progression of the same placement that
    has every config of the new one (counted as upstream counts matches)."""
    new_refs = new.get("configReferences") or []
    for old in existing:
        if (old.get("name"), old.get("namespace")) != (new["name"], new["namespace"]):
            continue
        count = sum(
            1
            for o in old.get("configReferences") or []
            for n in new_refs
            if _identity(o) == _identity(n)
        )
        if count == len(new_refs):
            return old
    return None


def _merge(new: Obj, old: Mapping[str, Any]) -> None:
    """``mergeInstallProgression``."""
    for ref in new.get("configReferences") or []:
        for previous in old.get("configReferences") or []:
            if _identity(ref) != _identity(previous):
                continue
            previous_hash = (previous.get("desiredConfig") or {}).get("specHash") or ""
            if previous_hash:
                ref["desiredConfig"]["specHash"] = previous_hash
            for field in ("lastAppliedConfig", "lastKnownGoodConfig"):
                ref.pop(field, None)
                if previous.get(field) is not None:
                    ref[field] = copy.deepcopy(previous[field])
    if old.get("conditions"):
        new["conditions"] = copy.deepcopy(old["conditions"])


def desired_status(cma: ClusterManagementAddOn) -> Obj:
    """The CMA's status with its default references and progressions made current."""
    spec = cma.get("spec", {})
    status: Obj = copy.deepcopy(dict(cma.get("status", {})))
    defaults = default_config_references(
        spec.get("defaultConfigs") or [], status.get("defaultConfigReferences") or []
    )
    _set(status, "defaultConfigReferences", defaults)
    if not common.placements_strategy(cma):
        status.pop("installProgressions", None)
    elif common.managed_by_addon_manager(cma):
        progressions = install_progressions(
            spec.get("defaultConfigs") or [],
            spec.get("installStrategy", {}).get("placements") or [],
            status.get("installProgressions") or [],
        )
        _set(status, "installProgressions", progressions)
    return status


def _set(status: Obj, field: str, value: list[Obj]) -> None:
    """Upstream's fields are ``omitempty``: an empty list is no field."""
    if value:
        status[field] = value
    else:
        status.pop(field, None)


@dataclass
class InstallProgressionController:
    api: Api
    cmas: Informer

    async def reconcile(self, name: str) -> None:
        cma = models.view(ClusterManagementAddOn, self.cmas.store.get(name))
        if cma is None:
            return
        await common.patch_status(self.api, ocm.CLUSTER_MANAGEMENT_ADDON, cma, desired_status(cma))
