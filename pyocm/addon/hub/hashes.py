"""Spec hashes and observed generations of add-on configs, for the add-ons pyocm
implements (addon-framework's ``cmaconfig`` and ``addonconfig`` controllers, and the
``supportedConfigs`` its registration controller writes).

Upstream runs these inside each add-on's own framework manager, for that add-on's
supported config kinds only; an add-on that runs its own manager against a pyocm hub
does the same there. So these controllers act only for the add-ons registered with
pyocm (``addons``), and only on the config kinds each supports:

- CMA: the spec hash of each default config reference and install progression config
  reference of a supported kind (a missing config leaves the hash as it was);
- MCA: ``status.supportedConfigs`` from the add-on's options (once the MCA is owned by
  its CMA), each config reference's ``lastObservedGeneration`` (supported kinds), and
  the spec hash of those the MCA's own ``spec.configs`` name (the others come from the
  CMA through the configuration controller).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.addon.agent import AgentAddon, ConfigGVR
from pyocm.addon.hub import common, refs
from pyocm.addon.hub.spechash import spec_hash
from pyocm.api import catalog
from pyocm.api import kinds as ocm
from pyocm.kube.kinds import Kind
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

CMA_CONTROLLER_NAME = "cma-config-controller"
MCA_CONTROLLER_NAME = "addon-config-controller"
Obj = dict[str, Any]
#: CMA / MCA informer index: ``<group>/<resource>/<namespace>/<name>`` of every config
#: they refer to (upstream's ``ClusterManagementAddonByConfig`` / ``AddonByConfig``).
CMA_BY_CONFIG = "addonCmaByConfig"
MCA_BY_CONFIG = "addonMcaByConfig"


def config_kind(gvr: ConfigGVR) -> Kind:
    """The kind to list a config GVR with: from pyocm's catalog when it serves it, else
    a kind addressed by resource alone (enough to list and watch it cluster-wide)."""
    try:
        versions = catalog.versions_of(group=gvr.group, plural=gvr.resource)
    except KeyError:
        return Kind(gvr.group, gvr.version, gvr.resource, gvr.resource, True)
    found = next((d for d in versions if d.version == gvr.version), versions[0])
    return Kind(found.group, found.version, found.kind, found.plural, found.namespaced)


def _config_key(gr: refs.GR, referent: refs.Referent) -> str:
    return f"{gr[0]}/{gr[1]}/{referent[0]}/{referent[1]}"


def cma_configs(cma: Obj) -> list[str]:
    status = cma.get("status", {})
    found = [
        _config_key(refs.gr_of(r), refs.referent_of(r.get("desiredConfig")))
        for r in status.get("defaultConfigReferences") or []
    ]
    for progression in status.get("installProgressions") or []:
        found += [
            _config_key(refs.gr_of(r), refs.referent_of(r.get("desiredConfig")))
            for r in progression.get("configReferences") or []
        ]
    return found


def mca_configs(mca: Obj) -> list[str]:
    return [
        _config_key(refs.gr_of(r), refs.referent_of(r.get("desiredConfig")))
        for r in mca.get("status", {}).get("configReferences") or []
    ]


def config_of_key(obj: Obj, gvr: ConfigGVR) -> str:
    meta = obj["metadata"]
    return _config_key((gvr.group, gvr.resource), (meta.get("namespace") or "", meta["name"]))


@dataclass
class Configs:
    """The informers of the supported config kinds, by group-resource."""

    informers: Mapping[refs.GR, Informer]

    def get(self, gr: refs.GR, referent: refs.Referent) -> Obj | None:
        informer = self.informers.get(gr)
        if informer is None:
            return None
        key = f"{referent[0]}/{referent[1]}" if referent[0] else referent[1]
        return informer.store.get(key)


def _supported(addon: AgentAddon) -> set[refs.GR]:
    return {(c.group, c.resource) for c in addon.options().supported_configs}


def _hash_refs(config_refs: Iterable[Obj], supported: set[refs.GR], configs: Configs) -> None:
    for ref in config_refs:
        desired = ref.get("desiredConfig")
        gr = refs.gr_of(ref)
        if desired is None or not desired.get("name") or gr not in supported:
            continue
        found = configs.get(gr, refs.referent_of(desired))
        if found is not None:
            desired["specHash"] = spec_hash(found)


@dataclass
class CmaConfigController:
    api: Api
    cmas: Informer
    configs: Configs
    addons: Mapping[str, AgentAddon]

    async def reconcile(self, name: str) -> None:
        cma = self.cmas.store.get(name)
        addon = self.addons.get(name)
        if cma is None or addon is None or not common.managed_by_addon_manager(cma):
            return
        supported = _supported(addon)
        status = copy.deepcopy(cma.get("status", {}))
        _hash_refs(status.get("defaultConfigReferences") or [], supported, self.configs)
        for progression in status.get("installProgressions") or []:
            _hash_refs(progression.get("configReferences") or [], supported, self.configs)
        await common.patch_status(self.api, ocm.CLUSTER_MANAGEMENT_ADDON, cma, status)


def _owned_by_cma(mca: Obj) -> bool:
    """``IsOwnedByCMA``."""
    name = mca["metadata"]["name"]
    return any(
        ref.get("kind") == "ClusterManagementAddOn" and ref.get("name") == name
        for ref in mca["metadata"].get("ownerReferences") or []
    )


@dataclass
class McaConfigController:
    api: Api
    mcas: Informer
    cmas: Informer
    configs: Configs
    addons: Mapping[str, AgentAddon]

    async def reconcile(self, key: str) -> None:
        mca = self.mcas.store.get(key)
        if mca is None:
            return
        name = mca["metadata"]["name"]
        cma, addon = self.cmas.store.get(name), self.addons.get(name)
        if cma is None or addon is None or not common.managed_by_addon_manager(cma):
            return
        status = copy.deepcopy(mca.get("status", {}))
        if _owned_by_cma(mca):
            supported = [
                {"group": c.group, "resource": c.resource}
                for c in addon.options().supported_configs
            ]
            if supported:
                status["supportedConfigs"] = supported
            else:
                status.pop("supportedConfigs", None)
        self._observe(mca, status, _supported(addon))
        await common.patch_status(self.api, ocm.MANAGED_CLUSTER_ADDON, mca, status)

    def _observe(self, mca: Obj, status: Obj, supported: set[refs.GR]) -> None:
        """``updateConfigSpecHashAndGenerations``."""
        spec_configs = {
            (refs.gr_of(c), refs.referent_of(c)) for c in mca.get("spec", {}).get("configs") or []
        }
        for ref in status.get("configReferences") or []:
            gr, desired = refs.gr_of(ref), ref.get("desiredConfig")
            if gr not in supported or desired is None:
                continue
            found = self.configs.get(gr, refs.referent_of(desired))
            if found is None:
                continue
            ref["lastObservedGeneration"] = found["metadata"].get("generation", 0)
            if (gr, refs.referent_of(desired)) in spec_configs:
                desired["specHash"] = spec_hash(found)
